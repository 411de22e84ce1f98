"""Rule by rule against gitleaks: each rule of a gitleaks config (`config/gitleaks.toml` of a
local checkout of github.com/gitleaks/gitleaks, MIT) sampled from its own expression and pasted,
and whether `redact` catches it.

Run: `python -m bench.secrets_gitleaks PATH/TO/gitleaks.toml [--samples 4] [--json]`.

Nothing of gitleaks is kept in this repository: the expressions are read from the file given.
A value is made from a rule's expression (Go syntax read as Python's, case-insensitive parts in
lower case, an unbounded or optional part at its least); a rule told by its format is pasted as
`here: <sample>`, and a provider's rule, whose expression needs the provider's name beside the
value (`adafruit … = <32 chars>`), in templates of gitleaks' own sample generator
(`{i}Token = "{s}"`, `{i}_token: {s}`, `{I}_TOKEN={s}`) and in words (`the {i} key is {s}`).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import re._constants as sre  # type: ignore[import-not-found]
import re._parser as parser  # type: ignore[import-not-found]
import string
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

from shell.secrets.detect import redact

PROVIDER = ("(?i)[\\w.-]{0,50}?(?:", "[\\w.-]{0,50}?(?i:")
TEMPLATES = ('{i}Token = "{s}"', "{i}_token: {s}", "{I}_TOKEN={s}", "the {i} key is {s}")
WORD = string.ascii_letters + string.digits


def python_regex(go: str) -> str:
    go = go.replace("(?i)", "").replace("(?-i:", "(?:").replace("(?i:", "(?:")
    return go.replace("[[:alnum:]]", "[A-Za-z0-9]").replace("\\z", "$")


class Sampler:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def sample(self, tree: Any) -> str:
        out = []
        for op, av in tree:
            if op is sre.LITERAL:
                out.append(chr(av))
            elif op is sre.NOT_LITERAL:
                out.append("x" if chr(av) != "x" else "y")
            elif op is sre.ANY:
                out.append("a")
            elif op is sre.IN:
                out.append(self._one_of(av))
            elif op is sre.BRANCH:
                out.append(self.sample(self.rng.choice(av[1])))
            elif op is sre.SUBPATTERN:
                out.append(self.sample(av[-1]))
            elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
                low, high, sub = av
                bounded = high is not sre.MAXREPEAT and high <= low + 60 and low > 0
                n = self.rng.randint(low, high) if bounded else low
                out.append("".join(self.sample(sub) for _ in range(n)))
            elif op is sre.CATEGORY:
                out.append(self.rng.choice(self._category(av)))
        return "".join(out)

    def _category(self, category: Any) -> list[str]:
        if category is sre.CATEGORY_SPACE:
            return [" "]
        return list(string.digits if category is sre.CATEGORY_DIGIT else WORD + "_")

    def _one_of(self, items: Any) -> str:
        chars: list[str] = []
        for op, av in items:
            if op is sre.NEGATE:
                return "q"
            if op is sre.LITERAL:
                chars.append(chr(av))
            elif op is sre.RANGE:
                chars += [chr(c) for c in range(av[0], av[1] + 1)]
            elif op is sre.CATEGORY:
                chars += self._category(av)
        chars = [c for c in chars if c.isprintable()] or ["a"]
        plain = [c for c in chars if c.isalnum()]
        return self.rng.choice(plain if plain and self.rng.random() < 0.9 else chars)


def coverage(config: Path, samples: int, seed: int = 5) -> list[dict[str, Any]]:
    sampler = Sampler(seed)
    rows = []
    for rule in tomllib.loads(config.read_text(encoding="utf-8"))["rules"]:
        go = rule.get("regex")
        if not go:
            rows.append({"id": rule["id"], "family": "file name only", "caught": 0, "of": 0})
            continue
        provider = go.startswith(PROVIDER) or rule["id"].startswith("generic")
        expression = python_regex(go)
        tree = parser.parse(expression)
        caught = 0
        for _ in range(samples):
            value = sampler.sample(tree)
            if provider:
                found = re.search(expression, value)
                secret = found.group(1) if found and found.groups() and found.group(1) else value
                keyword = (rule.get("keywords") or ["service"])[0]
                template = sampler.rng.choice(TEMPLATES)
                text = template.format(i=keyword, I=keyword.upper(), s=secret.strip("`'\" =,"))
            else:
                text = f"here: {value}"
            caught += bool(redact(text)[1])
        family = "provider and value" if provider else "format"
        rows.append({"id": rule["id"], "family": family, "caught": caught, "of": samples})
    return rows


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("config", type=Path, help="gitleaks' config/gitleaks.toml")
    args.add_argument("--samples", type=int, default=4)
    args.add_argument("--json", action="store_true")
    options = args.parse_args()
    rows = coverage(options.config, options.samples)
    out = sys.stderr if options.json else sys.stdout
    tally: Counter[tuple[str, str]] = Counter()
    for row in rows:
        share = "all" if row["caught"] == row["of"] > 0 else "some" if row["caught"] else "none"
        tally[row["family"], share] += 1
        if share != "all":
            print(f"{row['id']}: {row['caught']}/{row['of']} ({row['family']})", file=out)
    print("\n| rules | caught in all samples | in some | in none |", file=out)
    print("| --- | ---: | ---: | ---: |", file=out)
    for family in ("format", "provider and value", "file name only"):
        counts = [tally[family, share] for share in ("all", "some", "none")]
        print(f"| {family} ({sum(counts)}) | {' | '.join(map(str, counts))} |", file=out)
    if options.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
