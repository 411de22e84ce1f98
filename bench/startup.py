"""How fast Cairn starts: to the first frame, to the first answer, headless and for a search.

    python -m bench.startup [--runs N] [--json]

Each measurement starts a fresh process, `--runs` times (default 3), and reports the median.
The TUI runs in a pseudo-terminal of 80×24; "first frame" is when its prompt is painted, "first
answer" when the demo's reply to "hi" is, with "hi" typed the moment the process starts (so
type-ahead is part of what is measured: a lost "hi" never answers and shows as a timeout).
Ratios are to a bare Textual app and to `import litellm`, measured in the same run, so they
carry across machines where the seconds do not.
"""

from __future__ import annotations

import argparse
import compileall
import fcntl
import json
import os
import re
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
CAIRN = [str(Path(sys.executable).with_name("cairn"))]
QUIET = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}
TIMEOUT_S = 60.0
_ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")

BARE_APP = """
from textual.app import App
from textual.widgets import Static

class Bare(App):
    def compose(self):
        yield Static("bare-app-ready")

Bare().run()
"""

BASELINE_SEARCH = """
import lancedb, pyarrow
from pathlib import Path
from shell.memory.index.embed import load_embedder
load_embedder("minilm", Path({cache!r})).embed_query("warm")
"""


def compile_cairn() -> None:
    """Compile Cairn's bytecode before measuring a start: as after a user's first start, and as
    Textual's is in site-packages. Where PYTHONDONTWRITEBYTECODE is set, as on these machines,
    every module edited since its last compile was compiled again at every measured start:
    0.1 s more, as much as the gap being measured."""
    for package in ("shell", "widgets", "themes"):
        compileall.compile_dir(ROOT / package, quiet=1)


def terminal_environment(workspace: Path) -> dict[str, str]:
    return {
        **os.environ,
        **QUIET,
        "CAIRN_WORKSPACE": str(workspace),
        "TERM": "xterm-256color",
        "COLUMNS": "80",
        "LINES": "24",
    }


def timed_command(command: list[str], env: dict[str, str]) -> float:
    """Wall seconds of a command run to its end (its output is discarded)."""
    started = time.perf_counter()
    subprocess.run(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - started


def in_terminal(
    command: list[str], env: dict[str, str], markers: list[str], typed: bytes = b""
) -> list[float]:
    """Run `command` in an 80×24 pseudo-terminal, type `typed` at once, and return the seconds
    until each marker appeared on screen, in order (inf for one that never did)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    started = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
    )
    os.close(slave)
    if typed:
        os.write(master, typed)
    seen = ""
    times: list[float] = []
    poller = select.poll()  # not select(): it refuses a descriptor past 1024 (a long test run)
    poller.register(master, select.POLLIN)
    try:
        while len(times) < len(markers) and time.perf_counter() - started < TIMEOUT_S:
            if not poller.poll(50):
                continue
            try:
                seen += _ANSI.sub("", os.read(master, 65536).decode("utf-8", "replace"))
            except OSError:
                break
            while len(times) < len(markers) and markers[len(times)] in seen:
                times.append(time.perf_counter() - started)
    finally:
        process.kill()
        process.wait()
        os.close(master)
    return times + [float("inf")] * (len(markers) - len(times))


def measure(runs: int) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(prefix="cairn-startup-"))
    workspace = folder / "workspace"
    compile_cairn()
    env = terminal_environment(workspace)
    try:
        subprocess.run([*CAIRN, "init", str(workspace)], env=env, check=True, capture_output=True)
        note = workspace / "MEMORY.md"
        note.write_text(note.read_text() + "\n- the Heron design review is on 9 December\n")
        subprocess.run([*CAIRN, "index"], env=env, check=True, capture_output=True)
        # Interleaved: one of each per round, so a load that comes and goes on a shared
        # machine weighs on the baselines and on Cairn alike.
        measures: dict[str, Callable[[], float | list[float]]] = {
            "import litellm": lambda: timed_command([PYTHON, "-c", "import litellm"], env),
            "bare Textual app, first frame": lambda: in_terminal(
                [PYTHON, "-c", BARE_APP], env, ["bare-app-ready"]
            )[0],
            "cairn TUI": lambda: in_terminal(
                [*CAIRN, "--demo"], env, ["cairn-demo/brain", "Hello! I'm Cairn"], b"hi\r"
            ),
            "cairn run hi": lambda: timed_command([*CAIRN, "run", "--demo", "hi"], env),
            "import lancedb + load MiniLM": lambda: timed_command(
                [PYTHON, "-c", BASELINE_SEARCH.format(cache=str(workspace / ".cairn/fastembed"))],
                env,
            ),
            "cairn search (cold)": lambda: timed_command([*CAIRN, "search", "Heron review"], env),
        }
        samples: dict[str, list[float]] = {}
        for _ in range(runs):
            for name, measure_once in measures.items():
                value = measure_once()
                if isinstance(value, list):  # the TUI: first frame, then first answer
                    samples.setdefault("cairn TUI, first frame", []).append(value[0])
                    samples.setdefault("cairn TUI, first answer to hi", []).append(value[1])
                else:
                    samples.setdefault(name, []).append(value)
        results = {name: statistics.median(values) for name, values in samples.items()}
        return results
    finally:
        shutil.rmtree(folder, ignore_errors=True)


TARGETS = [
    ("cairn TUI, first frame", "bare Textual app, first frame", 2.0),
    ("cairn TUI, first answer to hi", "import litellm", 1.2),
    ("cairn run hi", "import litellm", 1.2),
    ("cairn search (cold)", "import lancedb + load MiniLM", 1.5),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--json", action="store_true", help="print JSON on stdout (table on stderr)"
    )
    args = parser.parse_args()
    results = measure(args.runs)
    out = sys.stderr if args.json else sys.stdout
    print(f"cairn start-up ({args.runs} runs each, median; {os.cpu_count()} cpus)", file=out)
    for name, seconds in results.items():
        print(f"  {name:34s} {seconds:6.2f} s", file=out)
    print("targets (ratios in this run)", file=out)
    verdicts = []
    for name, base, limit in TARGETS:
        ratio = results[name] / results[base]
        verdict = "PASS" if ratio <= limit else "MISS"
        verdicts.append({"measure": name, "baseline": base, "ratio": ratio, "limit": limit})
        print(f"  [{verdict}] {name} = {ratio:.2f}x {base} (target <= {limit}x)", file=out)
    if args.json:
        print(json.dumps({"seconds": results, "targets": verdicts}, indent=2))


if __name__ == "__main__":
    main()
