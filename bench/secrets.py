"""Benchmark the secrets detector: how many pasted secrets it redacts, and how many ordinary
lines it touches, against the detector before this work, in the same run.

Run: `python -m bench.secrets [--json] [--split tune|held-out|all] [--baseline-rev REV]`.

- **Recall.** `bench.secrets_corpus`: fake secrets of 55+ kinds in the shapes their providers
  document, pasted bare, after a keyword, in a sentence, in markdown and in five other
  languages, plus armoured private keys. A case is caught when `redact` leaves no 12-character
  run of its secret (for a password shorter than that, not the password), and for a private key
  no line of its body. Templates marked held out were not looked at while tuning.
- **False positives.** Lines that must stay as written: every turn of the LoCoMo conversations
  (by path, `../shared/data/locomo`, as `bench.locomo` writes them into notes), this
  repository's own source and docs (minus the secrets modules, this bench and the tests that
  plant fake secrets on purpose, listed in `PLANTING`), and seeded lines of identifiers that
  look random (git SHAs, UUIDs, image names, URLs, hashes, long words), many of them beside a
  secret's name. A line is touched when `redact` changes it.
- **Baseline.** The detector at `--baseline-rev` (default c00ca67, main before this work: the
  detect-secrets plugins it enabled and a four-word keyword context), extracted with
  `git archive` into a temporary folder and run in a subprocess on the same texts.

The ordinary lines are the same in both splits, so their figures repeat. Results on
2026-12-02 15:40 UTC (2 cores, `python -m bench.secrets --json`, ~12 s):

| detector | split | cases | caught | recall | ordinary lines | touched | FP rate | ms/text |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| cairn | tune | 279 | 279 | 100.0% | 52,755 | 29 | 0.055% | 0.17 |
| cairn | held-out | 279 | 279 | 100.0% | 52,755 | 29 | 0.055% | 0.17 |
| baseline (c00ca67) | tune | 279 | 149 | 53.4% | 52,755 | 170 | 0.322% | 0.06 |
| baseline (c00ca67) | held-out | 279 | 145 | 52.0% | 52,755 | 170 | 0.322% | 0.06 |

By style, the baseline caught 29% bare, 77% after a keyword, 36% in a sentence, 63% in
markdown, 57% in another language; cairn all of each. Touched: none of LoCoMo's 2,760 turns
nor of the 3,000 seeded identifier lines (the baseline 138 of these: public keys, hashes); 29
of 46,995 lines of code and docs, all placeholders assigned to a secret's name
(`api_key="sk-test"`, a model table `"OPENAI_API_KEY": "gpt-4o-mini"`: detect-secrets'
keyword rule), a test's "the gate code is 4412", a WebSocket nonce after `Sec-WebSocket-Key:`
and a doc's `https://user:token@host`. The corpus was written by the same hand as the rules,
so 100% says the rules do what was meant; `bench.secrets_gitleaks` is the check made by other
hands (gitleaks' own expressions).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from collections import Counter
from io import BytesIO
from pathlib import Path
from typing import Any

from bench.secrets_corpus import HEX, Case, secrets
from shell.secrets.detect import redact

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo"
BASELINE_REV = "c00ca67"
TARGET_RECALL, TARGET_FP = 0.97, 0.005
WINDOW = 12
SOURCES = (".py", ".md", ".toml", ".tcss")
NOT_ORDINARY = ("shell/secrets/", "bench/secrets", "shell/memory/index/minilm_tokenizer/")
PLANTING = (
    "tests/core/test_secrets.py",
    "tests/core/test_secrets_shown.py",
    "tests/core/test_secrets_pasted.py",
    "tests/core/test_agent_sandbox.py",
    "tests/project/test_sandbox.py",
    "tests/sync/test_faults.py",
    "tests/e2e/test_sync_cli.py",
    "tests/ui/test_trace.py",
)
"""Tests whose fixtures are fake credentials, there to be caught."""

_RUN_BASELINE = """
import json, sys
from shell.secrets.detect import redact
print(json.dumps([redact(text)[0] for text in json.load(sys.stdin)]))
"""


def ordinary_lines(locomo: Path) -> dict[str, list[str]]:
    """The lines that must stay as written, by source."""
    talk = []
    for path in sorted(locomo.glob("*.json")):
        sample = json.loads(path.read_text(encoding="utf-8"))
        n = 1
        while f"session_{n}_date_time" in sample:
            for turn in sample.get(f"session_{n}") or []:
                text = " ".join(turn["text"].split())
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                talk.append(f"- {turn['speaker']}: {text}")
            n += 1
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    code = []
    for name in listed.stdout.split():
        if name.endswith(SOURCES) and not name.startswith(NOT_ORDINARY) and name not in PLANTING:
            text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
            code.extend(line for line in text.splitlines() if line.strip())
    return {"LoCoMo turns": talk, "repository source": code, "identifiers": identifiers()}


def identifiers(n: int = 3000, seed: int = 7) -> list[str]:
    """Seeded note lines of values that look random and are not secret."""
    rng = random.Random(seed)

    def hexes(k: int) -> str:
        return "".join(rng.choice(HEX) for _ in range(k))

    def name() -> str:
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        return "".join(rng.choice(alphabet) for _ in range(22))

    templates = [
        lambda: f"- deployed commit {hexes(40)} to staging",
        lambda: f"- the key commit is {hexes(40)}",
        lambda: f"- release key: commit {hexes(40)}",
        lambda: (
            f"- request id {uuid.UUID(int=rng.getrandbits(128))}, ticket OPS-{rng.randrange(9999)}"
        ),
        lambda: f"- cache key {uuid.UUID(int=rng.getrandbits(128))} for the build",
        lambda: f"- the token id is {hexes(32)}",
        lambda: f"- ![screenshot](images/{name()}.png)",
        lambda: f"- photo saved as IMG_{rng.randrange(10**7)}_{name()}.jpg",
        lambda: f"- docs at https://docs.example.com/v2/{name()}/setup?page={rng.randrange(9)}",
        lambda: f"- the sha256 of the key file is {hexes(64)}",
        lambda: (
            f"- build {hexes(12)} passed; see https://ci.example.com/runs/{rng.randrange(10**6)}"
        ),
        lambda: f"- merged {hexes(7)}..{hexes(7)} into main",
        lambda: "- pneumonoultramicroscopicsilicovolcanoconiosis is the longest word I know",
        lambda: "- the password manager we use is 1Password, ask Bob for an invite",
        lambda: "- a password is required for the admin page; mine expired yesterday",
        lambda: f"- tokens used: {rng.randrange(10**8)} over the week",
        lambda: "- the key takeaway: release-2026-12-01 went fine",
        lambda: f"- the public key is ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{name()} bob@laptop",
        lambda: f"- API etag {hexes(32)} for the users endpoint",
        lambda: f"- key id {hexes(16)} signs the releases",
        lambda: "- the secret to good bread is a long, slow proof",
        lambda: f"- getUserById{rng.randrange(99)} and parseAuthTokenHeader are in auth.py",
    ]
    return [rng.choice(templates)() for _ in range(n)]


def caught(case: Case, redacted: str) -> bool:
    if case.body:
        return not any(line in redacted for line in case.body)
    value = case.value
    if len(value) <= WINDOW:
        return value not in redacted
    return not any(value[i : i + WINDOW] in redacted for i in range(len(value) - WINDOW + 1))


def baseline(texts: list[str], rev: str) -> tuple[list[str], float]:
    """`texts` redacted by the detector at `rev`, and its seconds."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "shell"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tempfile.TemporaryDirectory(prefix="cairn-secrets-") as folder:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _RUN_BASELINE],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            check=True,
            cwd=folder,
            env={"PYTHONPATH": folder, "PATH": "/usr/bin:/bin"},
        )
        return json.loads(done.stdout), time.perf_counter() - started


def measure(
    cases: list[Case], lines: dict[str, list[str]], redacted: list[str], seconds: float
) -> dict[str, Any]:
    out_cases, out_lines = redacted[: len(cases)], redacted[len(cases) :]
    hits = [caught(case, text) for case, text in zip(cases, out_cases, strict=True)]
    by_style: dict[str, list[bool]] = {}
    for case, hit in zip(cases, hits, strict=True):
        by_style.setdefault(case.style, []).append(hit)
    missed = Counter(case.kind for case, hit in zip(cases, hits, strict=True) if not hit)
    fp: dict[str, Any] = {}
    at = 0
    for source, texts in lines.items():
        touched = [t for t, r in zip(texts, out_lines[at : at + len(texts)], strict=True) if t != r]
        fp[source] = {"lines": len(texts), "touched": len(touched), "examples": touched[:8]}
        at += len(texts)
    total, touched = sum(len(t) for t in lines.values()), sum(f["touched"] for f in fp.values())
    return {
        "cases": len(cases),
        "caught": sum(hits),
        "recall": sum(hits) / max(len(cases), 1),
        "by_style": {s: sum(h) / len(h) for s, h in sorted(by_style.items())},
        "missed": dict(missed.most_common()),
        "missed_examples": [c.text[:160] for c, h in zip(cases, hits, strict=True) if not h][:12],
        "ordinary_lines": total,
        "touched": touched,
        "fp_rate": touched / max(total, 1),
        "false_positives": fp,
        "ms_per_text": 1000 * seconds / max(len(redacted), 1),
    }


def report(results: dict[str, Any], out: Any) -> None:
    print(f"corpus: {results['corpus']}", file=out)
    print("| detector | split | cases | caught | recall | ordinary lines | touched | FP rate "
          "| ms/text |", file=out)  # fmt: skip
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |", file=out)
    for name, splits in results["detectors"].items():
        for split, r in splits.items():
            print(
                f"| {name} | {split} | {r['cases']} | {r['caught']} | {r['recall']:.1%} "
                f"| {r['ordinary_lines']:,} | {r['touched']} | {r['fp_rate']:.3%} "
                f"| {r['ms_per_text']:.2f} |",
                file=out,
            )
    for name, splits in results["detectors"].items():
        for split, r in splits.items():
            styles = ", ".join(f"{s} {v:.0%}" for s, v in r["by_style"].items())
            print(f"\n{name}, {split}: by style: {styles}", file=out)
            print(f"  missed by kind: {r['missed'] or 'none'}", file=out)
            for example in r["missed_examples"]:
                print(f"    missed: {example}", file=out)
            for source, fp in r["false_positives"].items():
                print(f"  {source}: {fp['touched']}/{fp['lines']} touched", file=out)
                for line in fp["examples"]:
                    print(f"    touched: {line.strip()[:150]}", file=out)
    for name, splits in results["detectors"].items():
        r = splits.get("all") or next(iter(splits.values()))
        ok = r["recall"] >= TARGET_RECALL and r["fp_rate"] <= TARGET_FP
        print(f"\n{name}: target recall ≥ {TARGET_RECALL:.0%} with FP ≤ {TARGET_FP:.1%}: "
              f"{'PASS' if ok else 'FAIL'}", file=out)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="JSON on stdout, table on stderr")
    parser.add_argument("--split", choices=("tune", "held-out", "all"), default="all")
    parser.add_argument("--baseline-rev", default=BASELINE_REV)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--locomo", type=Path, default=LOCOMO)
    args = parser.parse_args()
    every = secrets()
    splits = {
        "tune": [c for c in every if not c.held_out],
        "held-out": [c for c in every if c.held_out],
    }
    chosen = {"all": every, **splits} if args.split == "all" else {args.split: splits[args.split]}
    lines = ordinary_lines(args.locomo)
    texts = [c.text for c in every] + [t for source in lines.values() for t in source]
    started = time.perf_counter()
    ours = [redact(text)[0] for text in texts]
    runs = {"cairn": (ours, time.perf_counter() - started)}
    if not args.no_baseline:
        runs[f"baseline ({args.baseline_rev})"] = baseline(texts, args.baseline_rev)
    index = {id(c): i for i, c in enumerate(every)}
    results: dict[str, Any] = {
        "corpus": f"{len(every)} secrets of {len({c.kind for c in every})} kinds, "
        f"{sum(len(t) for t in lines.values()):,} ordinary lines",
        "detectors": {},
    }
    for name, (redacted, seconds) in runs.items():
        per_split = {}
        for split, cases in chosen.items():
            picked = [redacted[index[id(c)]] for c in cases] + redacted[len(every) :]
            per_split[split] = measure(cases, lines, picked, seconds)
        results["detectors"][name] = per_split
    report(results, sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
