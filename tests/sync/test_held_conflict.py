"""A curated file's conflict, waiting for review, never pushes away the other machine's lines.

Real git throughout: the machines sync through `git daemon` on loopback. While a conflict waits,
the remote holds every line either machine committed; a line leaves only through a person's
resolution on one machine, and every other machine is told which lines went.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.events.sync import SyncConflict, SyncFinished, SyncResolved, Take
from shell.events.turns import Notice
from shell.sync import clone_workspace
from tests.conftest import Clock
from tests.sync.conftest import DAY, Machine, git, has_markers, make_bare
from tests.sync.daemon import GitDaemon

MEMORY = "MEMORY.md"
Events = list[object]


class Served:
    """A bare repository behind `git daemon`, and the machines that sync with it."""

    def __init__(self, tmp_path: Path, clock: Clock, daemon: GitDaemon) -> None:
        self.tmp_path, self.clock, self.daemon = tmp_path, clock, daemon
        self.bare = daemon.base / "ws.git"
        self.url = daemon.url("ws.git")

    def machines(self, *names: str) -> list[Machine]:
        first = Machine(self.tmp_path / names[0], self.clock).seed()
        assert isinstance(first.engine.add_remote(self.url)[-1], SyncFinished)
        made = [first]
        for name in names[1:]:
            clone_workspace(self.url, self.tmp_path / name)
            made.append(Machine(self.tmp_path / name, self.clock))
        return made

    def remote_text(self, rel: str = MEMORY) -> str:
        return git(self.bare, "show", f"main:{rel}") + "\n"  # git() strips the last newline


@pytest.fixture
def served(tmp_path: Path, clock: Clock) -> Iterator[Served]:
    base = tmp_path / "served"
    base.mkdir()
    make_bare(base / "ws.git")
    with GitDaemon(base) as daemon:
        yield Served(tmp_path, clock, daemon)


def conflicts(events: Events) -> list[SyncConflict]:
    return [event for event in events if isinstance(event, SyncConflict)]


def notices(events: Events) -> list[str]:
    return [event.message for event in events if isinstance(event, Notice)]


def holds(text: str, *lines: str) -> bool:
    return all(text.count(f"{line}\n") == 1 for line in lines) and not has_markers(text)


def test_the_machine_that_syncs_first_keeps_its_line_while_the_other_reviews(
    served: Served,
) -> None:
    a, b = served.machines("a", "b")
    a.append(MEMORY, "- a: the deploy key lives in the blue vault")
    b.append(MEMORY, "- b: Ana owns the release")

    first = a.engine.sync()
    second = b.engine.sync()
    third = a.engine.sync()

    assert isinstance(first[-1], SyncFinished) and first[-1].pushed_commits == 1
    assert [c.file for c in conflicts(second)] == [MEMORY]
    finished = second[-1]
    assert isinstance(finished, SyncFinished) and finished.conflicts == [MEMORY]
    lines = ("- a: the deploy key lives in the blue vault", "- b: Ana owns the release")
    assert holds(served.remote_text(), *lines)
    for side in (a, b):
        assert holds(side.text(MEMORY), *lines)
        assert git(side.root, "status", "--porcelain") == ""
    told = notices(third)
    assert len(told) == 1 and "MEMORY.md waits for review on another machine" in told[0]
    assert b.engine.status().conflicts == [MEMORY] and a.engine.status().conflicts == []


@pytest.mark.parametrize("take", ["local", "remote", "both"])
def test_a_conflict_left_open_for_rounds_loses_nothing_while_the_other_side_appends(
    served: Served, take: Take
) -> None:
    a, b = served.machines("a", "b")
    written: dict[str, list[str]] = {"a": [], "b": []}
    pushed: list[str] = []
    opened = 0
    for number in range(5):
        for side in (a, b):
            line = f"- {side.root.name} round {number}: a durable fact"
            side.append(MEMORY, line)
            side.append(DAY, f"- {side.root.name} round {number}: a note")
            written[side.root.name].append(line)
        for side in (a, b):
            opened += len(conflicts(side.engine.sync()))
            pushed += written[side.root.name]
            written[side.root.name] = []
            assert holds(served.remote_text(), *pushed)  # whoever pushed, nothing dropped
    assert opened >= 3 and b.engine.status().conflicts == [MEMORY]
    assert a.engine.status().conflicts == []

    events = b.engine.resolve(MEMORY, take)
    b.engine.sync()
    told = " ".join(m for m in notices(a.engine.sync()) if "removed" in m)

    assert isinstance(events[-1], SyncResolved) and (events[-1].commit is None) == (take == "both")
    texts = (served.remote_text(), a.text(MEMORY), b.text(MEMORY))
    gone = [line for line in pushed if line not in texts[0]]
    for line in pushed:  # each line is everywhere, or gone everywhere and told on a
        assert all(holds(text, line) for text in texts) or (
            line in gone and line in told and not any(line in text for text in texts)
        ), (line, texts)
    chosen_away = {"local": "- a ", "remote": "- b ", "both": "nobody"}[take]
    assert all(line.startswith(chosen_away) for line in gone)
    assert bool(gone) == (take != "both")


def _open_conflict(served: Served, second: str) -> tuple[Machine, Machine, str, str]:
    """Both machines append a line to MEMORY.md; `second` syncs second and so holds the
    conflict. Returns (the machine with the conflict, the other, its line, the other's)."""
    a, b = served.machines("a", "b")
    a.append(MEMORY, "- a: tea, not coffee")
    b.append(MEMORY, "- b: mate, every morning")
    first, then = (b, a) if second == "a" else (a, b)
    first.engine.sync()
    assert [c.file for c in conflicts(then.engine.sync())] == [MEMORY]
    first.engine.sync()  # takes in the held merge
    return (
        then,
        first,
        f"- {then.root.name}: " + ("tea, not coffee" if then is a else "mate, every morning"),
        f"- {first.root.name}: " + ("tea, not coffee" if first is a else "mate, every morning"),
    )


@pytest.mark.parametrize("second", ["a", "b"])
@pytest.mark.parametrize("take", ["local", "remote", "both"])
def test_each_resolution_on_either_side_is_the_only_way_a_line_leaves_and_is_told(
    served: Served, second: str, take: Take
) -> None:
    chooser, other, own, theirs = _open_conflict(served, second)
    other.append(MEMORY, "- written while the conflict waited")

    resolved = chooser.engine.resolve(MEMORY, take)
    chooser.engine.sync()
    told = notices(other.engine.sync())
    chooser.engine.sync()

    assert isinstance(resolved[-1], SyncResolved)
    kept = {"local": [own], "remote": [theirs], "both": [own, theirs]}[take]
    gone = {"local": [theirs], "remote": [own], "both": []}[take]
    for text in (served.remote_text(), chooser.text(MEMORY), other.text(MEMORY)):
        assert holds(text, *kept, "- written while the conflict waited"), text
        assert not any(line in text for line in gone), text
    removed = [message for message in told if "removed" in message]
    if gone:
        assert len(removed) == 1 and gone[0] in removed[0], told
        assert removed[0].startswith("a resolution of MEMORY.md on another machine removed 1 line")
    else:
        assert removed == []
    assert chooser.engine.status().conflicts == [] == other.engine.status().conflicts


def test_three_machines_keep_every_line_until_each_person_chooses(served: Served) -> None:
    a, b, c = served.machines("a", "b", "c")
    lines = {side.root.name: f"- {side.root.name}: a fact of its own" for side in (a, b, c)}
    for side in (a, b, c):
        side.append(MEMORY, lines[side.root.name])

    opened = {side.root.name: len(conflicts(side.engine.sync())) for side in (a, b, c)}
    for side in (a, b, c):
        side.engine.sync()

    assert opened == {"a": 0, "b": 1, "c": 1}
    for text in (served.remote_text(), a.text(MEMORY), b.text(MEMORY), c.text(MEMORY)):
        assert holds(text, *lines.values()), text

    c.engine.resolve(MEMORY, "local")  # c drops what it lacked: a's and b's lines
    b.engine.resolve(MEMORY, "both")
    told: dict[str, list[str]] = {}
    for side in (c, b, a, c, b, a):
        told.setdefault(side.root.name, []).extend(notices(side.engine.sync()))

    final = served.remote_text()
    assert holds(final, lines["c"]) and lines["a"] not in final and lines["b"] not in final
    for side in (a, b, c):
        assert side.text(MEMORY) == final
    for name in ("a", "b"):
        removed = [message for message in told[name] if "removed" in message]
        assert removed and lines["a"] in removed[0] and lines["b"] in removed[0], told
