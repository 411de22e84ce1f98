"""Workspaces, a bare remote and git helpers for the sync tests: real git, nothing mocked."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from shell.git.store import GitStore
from shell.sync import SyncEngine
from shell.workspace import ATTRIBUTES, ATTRIBUTES_FILE, seed_workspace
from tests.conftest import Clock

DAY = "memory/2026-11-30.md"
MARKERS = ("<<<<<<<", ">>>>>>>", "=======\n")


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run git in `cwd` and return its stripped stdout (it must succeed when `check`)."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0 or not check, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


def make_bare(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    return path


class Machine:
    """One workspace and its engine, with the writes Cairn would make (one commit each)."""

    def __init__(self, root: Path, clock: Clock) -> None:
        self.root = root
        self.store = GitStore(root, author_name="T", author_email="t@example.org", clock=clock)
        self.engine = SyncEngine(root, author_name="T", author_email="t@example.org", clock=clock)

    def seed(self) -> Machine:
        created = seed_workspace(self.root)
        # What init_workspace is to seed as well (see shell/sync/prepare.py).
        (self.root / ATTRIBUTES_FILE).write_text(ATTRIBUTES, encoding="utf-8")
        created.append(ATTRIBUTES_FILE)
        self.store.ensure_repo()
        assert self.store.commit(created, "workspace: seed").error is None
        return self

    def append(self, rel: str, *lines: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as file:
            file.write("".join(f"{line}\n" for line in lines))
        assert self.store.commit([rel], f"append {rel}").error is None

    def write(self, rel: str, text: str) -> None:
        (self.root / rel).write_text(text, encoding="utf-8")
        assert self.store.commit([rel], f"write {rel}").error is None

    def text(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def head(self) -> str:
        return git(self.root, "rev-parse", "HEAD")


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    return make_bare(tmp_path / "remote.git")


@pytest.fixture
def machine(tmp_path: Path, clock: Clock) -> Callable[[str], Machine]:
    def make(name: str) -> Machine:
        return Machine(tmp_path / name, clock)

    return make


@pytest.fixture
def pair(bare: Path, machine: Callable[[str], Machine]) -> tuple[Machine, Machine]:
    """Machine a publishes its workspace to `bare`; machine b joins by cloning it."""
    from shell.events.sync import SyncCloned, SyncFinished
    from shell.sync import clone_workspace

    a = machine("a").seed()
    events = a.engine.add_remote(str(bare))
    assert isinstance(events[-1], SyncFinished), events
    cloned = clone_workspace(str(bare), a.root.parent / "b")
    assert isinstance(cloned[0], SyncCloned), cloned
    return a, machine("b")


def has_markers(text: str) -> bool:
    return any(marker in text for marker in MARKERS)
