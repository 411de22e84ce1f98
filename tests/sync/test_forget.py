"""`cairn forget` across machines: the line leaves every file and every git object of every
machine (the bare remote's refs included), the other machines' lines all stay, a racing push
loses nothing, a kill is undone, and tombstones a machine cannot trust are refused."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from shell.events import MemoryForgotten, Notice, SyncFailed, SyncFinished, SyncForgotten
from shell.forget import ForgetError, Identity, forget
from shell.git.runner import Git
from shell.memory.files.door import MemoryFiles
from shell.memory.files.values import MemoryWriteError
from shell.memory.forget.purge import purge
from shell.memory.forget.tombstones import EMPTY, FILE, Tombstones, forgettable, load, render
from shell.sync import clone_workspace
from shell.sync.pull import JOURNAL
from tests.sync.conftest import DAY, Machine, git

SECRET = "Kari lives in Oslo"
WHO = Identity("T", "t@example.org")


def holds(data: bytes) -> bool:
    return " ".join(SECRET.lower().split()) in " ".join(
        data.decode("utf-8", "replace").lower().split()
    )


def objects_with_secret(repo: Path, *, reachable_only: bool = False) -> int:
    """Every object of `repo` (or only those its refs reach) read whole, as git stores it."""
    if reachable_only:
        listed = git(repo, "rev-list", "--objects", "--all").split("\n")
        shas = "\n".join(line.split(" ")[0] for line in listed if line) + "\n"
        out = subprocess.run(
            ["git", "cat-file", "--batch"], cwd=repo, input=shas.encode(), capture_output=True
        ).stdout
    else:
        out = subprocess.run(
            ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True
        ).stdout
    count, at = 0, 0
    while at < len(out):
        end = out.index(b"\n", at)
        size = int(out[at:end].split()[2])
        count += holds(out[end + 1 : end + 1 + size])
        at = end + 1 + size + 1
    return count


def files_with_secret(root: Path) -> list[str]:
    return [
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file()
        and ".git" not in path.relative_to(root).parts
        and holds(path.read_bytes())
    ]


def clone(bare: Path, machine: Callable[[str], Machine], name: str) -> Machine:
    joined = machine(name)
    clone_workspace(str(bare), joined.root)
    return joined


def remember(m: Machine, *lines: str) -> None:
    """A daily note written as the memory tool would, its commit message quoting the line."""
    path = m.root / DAY
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as file:
        file.write("".join(f"{line}\n" for line in lines))
    quoted = "; ".join(f"'{line.lstrip('- ')}'" for line in lines)
    assert m.store.commit([DAY], f"memory(tool): append {quoted}").error is None


def forget_on(m: Machine, **how: str) -> list[object]:
    return list(forget(m.root, apply=True, identity=WHO, engine=m.engine, **how))  # type: ignore[arg-type]


def synced(m: Machine) -> list[object]:
    events = list(m.engine.sync())
    assert isinstance(events[-1], SyncFinished), events
    return events


def test_two_machines_forget_everywhere_and_keep_every_other_line(
    pair: tuple[Machine, Machine], bare: Path
) -> None:
    a, b = pair
    remember(a, f"- {SECRET}.", "- Bob likes tea")
    synced(a)
    synced(b)
    (b.root / ".cairn" / "sessions").mkdir(parents=True)
    (b.root / ".cairn" / "sessions" / "s1.jsonl").write_text(
        json.dumps({"type": "text", "text": f"you said {SECRET.lower()} yesterday"}) + "\n"
    )
    remember(b, "- b has a line not pushed yet")

    events = forget_on(a, text=SECRET)

    done = events[-1]
    assert isinstance(done, MemoryForgotten) and done.applied and done.pushed
    assert done.commits >= 1 and DAY in done.files and done.objects_pruned
    assert SECRET not in json.dumps([repr(e) for e in events])  # counts and hashes only
    pulled = synced(b)
    adopted = [e for e in pulled if isinstance(e, SyncForgotten)]
    assert adopted and adopted[0].commits >= 1 and adopted[0].transcripts == 1
    assert "[forgotten]" in (b.root / ".cairn" / "sessions" / "s1.jsonl").read_text()
    synced(a)
    for m in (a, b):
        assert files_with_secret(m.root) == []
        assert objects_with_secret(m.root) == 0
        assert m.text(DAY).count("Bob likes tea") == 1
        assert "b has a line not pushed yet" in m.text(DAY)
        assert SECRET.lower() not in git(m.root, "log", "--all", "--format=%B").lower()
        assert load(m.root)  # the tombstone synced
    assert SECRET.lower() not in (a.root / FILE).read_text().lower()
    # A client cannot prune a bare remote: no ref of it reaches the line any more, and its
    # own gc (the host's) takes the objects out.
    assert objects_with_secret(bare, reachable_only=True) == 0
    git(bare, "gc", "--prune=now", "--quiet")
    assert objects_with_secret(bare) == 0


def test_three_machines_and_unpushed_work_that_holds_the_line(
    pair: tuple[Machine, Machine], bare: Path, machine: Callable[[str], Machine]
) -> None:
    a, b = pair
    remember(a, f"- {SECRET}", "- shared line")
    synced(a)
    c = clone(bare, machine, "c")
    synced(b)
    remember(c, "- c keeps this", f"- again: {SECRET}!")  # unpushed, holds the line
    remember(b, "- b keeps this")

    forget_on(a, place=f"{DAY}:1" if a.text(DAY).startswith("- Kari") else f"{DAY}:2")

    said = synced(c)
    assert any(isinstance(e, Notice) and "not pushed yet" in e.message for e in said)
    assert [e.unpushed_commits >= 1 for e in said if isinstance(e, SyncForgotten)] == [True]
    synced(b)
    synced(a)
    synced(c)
    for m in (a, b, c):
        text = m.text(DAY)
        assert all(line in text for line in ("shared line", "c keeps this", "b keeps this"))
        assert files_with_secret(m.root) == []
        assert objects_with_secret(m.root) == 0
    assert objects_with_secret(bare, reachable_only=True) == 0


def test_a_machine_away_for_two_forgets_takes_both_in_one_sync(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    remember(a, f"- {SECRET}", "- Bob moved to Lisbon last spring", "- stays")
    synced(a)
    synced(b)
    remember(b, "- b wrote this meanwhile")
    forget_on(a, text=SECRET)
    forget_on(a, text="Bob moved to Lisbon last spring")

    adopted = [e for e in synced(b) if isinstance(e, SyncForgotten)]

    assert adopted and adopted[0].tombstones == 2
    synced(a)
    for m in (a, b):
        assert "stays" in m.text(DAY) and "b wrote this meanwhile" in m.text(DAY)
        assert "Lisbon" not in m.text(DAY) and files_with_secret(m.root) == []
        assert objects_with_secret(m.root) == 0


def test_a_forget_while_the_remote_is_away_is_pushed_and_pruned_by_the_next_sync(
    pair: tuple[Machine, Machine], bare: Path
) -> None:
    a, b = pair
    remember(a, f"- {SECRET}", "- kept")
    synced(a)
    away = bare.rename(bare.with_name("away.git"))

    done = forget_on(a, text=SECRET)[-1]

    assert isinstance(done, MemoryForgotten) and not done.pushed and done.push_error
    assert not done.objects_pruned  # the remote-tracking ref still names the old commits
    assert files_with_secret(a.root) == []
    away.rename(bare)
    synced(a)
    synced(b)
    for m in (a, b):
        assert "kept" in m.text(DAY) and objects_with_secret(m.root) == 0
    assert objects_with_secret(bare, reachable_only=True) == 0


def test_two_machines_forgetting_different_lines_at_once_both_hold(
    pair: tuple[Machine, Machine], bare: Path
) -> None:
    a, b = pair
    remember(a, f"- {SECRET}", "- Bob moved to Lisbon last spring", "- stays")
    synced(a)
    synced(b)
    forget_on(a, text=SECRET)
    away = bare.rename(bare.with_name("away.git"))  # b is cut off while it forgets
    assert not forget_on(b, text="Bob moved to Lisbon last spring")[-1].pushed  # type: ignore[attr-defined]
    away.rename(bare)

    synced(b)
    synced(a)

    for m in (a, b):
        assert len(load(m.root).words) == 2  # both tombstones, merged as a union
        assert m.text(DAY).strip() == "- stays"
        assert files_with_secret(m.root) == [] and objects_with_secret(m.root) == 0
    assert objects_with_secret(bare, reachable_only=True) == 0


def test_a_push_racing_the_forget_loses_no_line(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    remember(a, f"- {SECRET}")
    synced(a)
    synced(b)
    real_push = a.engine._push
    raced: list[bool] = []

    def push_after_b(branch: str, head: str, *, lease: str | None = None) -> bool:
        if lease and not raced:  # b pushes between a's fetch and a's forced push
            raced.append(True)
            remember(b, "- b raced this line in")
            synced(b)
        return real_push(branch, head, lease=lease)

    a.engine._push = push_after_b  # type: ignore[method-assign]
    done = forget_on(a, text=SECRET)[-1]

    assert raced and isinstance(done, MemoryForgotten) and done.pushed
    synced(b)
    for m in (a, b):
        assert "b raced this line in" in m.text(DAY)
        assert files_with_secret(m.root) == [] and objects_with_secret(m.root) == 0


def test_a_kill_between_the_rewrite_and_the_head_move_is_undone_then_finished(
    pair: tuple[Machine, Machine], bare: Path
) -> None:
    a, b = pair
    remember(a, f"- {SECRET}", "- kept")
    synced(a)
    (a.root / FILE).write_text(f"sha256:{_hash(SECRET)} words:4\n", encoding="utf-8")
    assert a.store.commit([FILE], "forget: a line").error is None
    run = Git(a.root, author_name="T", author_email="t@example.org")
    old = run.out("rev-parse", "HEAD")
    new = purge(run, old, load(a.root)).head
    (a.root / JOURNAL).parent.mkdir(parents=True, exist_ok=True)
    (a.root / JOURNAL).write_text(json.dumps({"old": old, "new": new}), encoding="utf-8")
    run.run(["read-tree", "-m", "-u", old, new])  # killed here: HEAD never moved

    recovered = a.engine.recover()

    assert recovered and "rolled back" in recovered[0].detail  # type: ignore[attr-defined]
    assert a.head() == old and SECRET in a.text(DAY)
    synced(a)  # the tombstone is committed: the sync purges and pushes
    synced(b)
    for m in (a, b):
        assert "kept" in m.text(DAY) and files_with_secret(m.root) == []
        assert objects_with_secret(m.root) == 0
    assert objects_with_secret(bare, reachable_only=True) == 0


def test_the_line_is_never_written_back(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    remember(a, f"- {SECRET}")
    synced(a)
    forget_on(a, text=SECRET)
    synced(b)
    door = MemoryFiles(b.root, b.store)

    with pytest.raises(MemoryWriteError, match="forgotten"):
        door.append(DAY, f"- {SECRET.upper()}.", reason="flush")
    written = door.append(DAY, f"- a new line\n- note: {SECRET}", reason="mcp").event

    assert written.lines_added == 1 and written.lines_forgotten == 1
    assert files_with_secret(b.root) == []


# --- what cannot be forgotten, and tombstones that cannot be trusted ---------------------------


def test_a_line_that_is_nowhere_a_path_outside_and_a_blank_line_change_nothing(
    pair: tuple[Machine, Machine],
) -> None:
    a, _ = pair
    remember(a, "- something", "")
    head = a.head()
    for how in (
        {"text": "a line that was never written"},
        {"place": "../outside.md:1"},
        {"place": "/etc/passwd:1"},
        {"place": f"{DAY}:99"},
        {"place": f"{DAY}:2"},  # blank
        {"text": "  -  "},
        {"text": "Oslo"},  # one word: it would take every line that says it
    ):
        with pytest.raises(ForgetError):
            forget(a.root, apply=True, identity=WHO, engine=a.engine, **how)  # type: ignore[arg-type]
    assert a.head() == head and not (a.root / FILE).exists()


@pytest.mark.parametrize(
    "tombstones",
    [
        "sha256:not-a-hash words:3\n",
        f"sha256:{EMPTY} words:1\n",
        "rm -rf everything\n",
        f"sha256:{'a' * 64} words:1\n",
    ],
)
def test_a_tombstone_file_another_machine_cannot_be_trusted_with_is_refused(
    pair: tuple[Machine, Machine], tombstones: str
) -> None:
    a, b = pair
    remember(a, "- a line a keeps")
    synced(a)
    synced(b)
    (b.root / FILE).write_text(tombstones, encoding="utf-8")
    git(b.root, "add", FILE)
    git(b.root, "commit", "-q", "-m", "crafted")
    git(b.root, "push", "-q", "origin", "HEAD:main")
    head, text = a.head(), a.text(DAY)

    events = a.engine.sync()

    assert isinstance(events[-1], SyncFailed) and FILE in events[-1].message
    assert a.head() == head and a.text(DAY) == text


def test_well_formed_tombstones_that_would_sweep_the_memory_are_not_obeyed(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    lines = [f"- note {n} about the garden and the bees" for n in range(12)]
    remember(a, *lines)
    synced(a)
    synced(b)
    crafted = Tombstones({})
    for line in lines[:10]:
        crafted = crafted | forgettable(line)
    (b.root / FILE).write_text(render(crafted), encoding="utf-8")
    git(b.root, "add", FILE)
    git(b.root, "commit", "-q", "-m", "crafted: forget most of it")
    git(b.root, "push", "-q", "origin", "HEAD:main")
    head, text = a.head(), a.text(DAY)

    events = a.engine.sync()

    assert isinstance(events[-1], SyncFailed) and "would take 10" in events[-1].message
    assert a.head() == head and a.text(DAY) == text


def test_a_rewrite_its_tombstones_do_not_explain_is_refused(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    remember(a, "- line one here", "- line two here")
    synced(a)
    synced(b)
    forget_on(b, text="line one here")  # a real forget, then a history made up beside it
    git(b.root, "checkout", "-q", "--orphan", "made-up")
    (b.root / DAY).write_text("")
    git(b.root, "add", "-A")
    git(b.root, "commit", "-q", "-m", "the tombstone, and line two gone too")
    git(b.root, "push", "-q", "-f", "origin", "made-up:main")
    head = a.head()

    events = a.engine.sync()

    assert isinstance(events[-1], SyncFailed) and events[-1].kind == "rewritten"
    assert a.head() == head and "line two here" in a.text(DAY)


def _hash(line: str) -> str:
    from shell.memory.forget.tombstones import line_hash

    return line_hash(line)
