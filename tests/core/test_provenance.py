"""Provenance on real git and real sessions: a line written by a turn traces to that session,
turn, prompt and call, whatever is written above it later; a revert and a dream acceptance are
followed back to the commit that first wrote the line; a line no commit holds has none. What a
commit says of itself is untrusted (another machine wrote it): a forged session id reads nothing,
and a subject quoting "session … turn …" names no turn."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from shell.config import Settings
from shell.events import DreamProposed, Error
from shell.forget import Identity, forget
from shell.git.store import GitStore
from shell.memory.provenance import ProvenanceError, parse_place
from shell.why import Why
from tests.conftest import Clock
from tests.core.agent_helpers import collect, started
from tests.core.dreams import FOUR, TODAY, WINDOW, DreamWorld, of


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def repo(workspace: Path, clock: Clock | None = None) -> GitStore:
    workspace.mkdir(parents=True, exist_ok=True)
    store = GitStore(workspace, clock=clock)
    store.ensure_repo()
    return store


async def coffee_proposed(tmp_path: Path, clock: Clock) -> tuple[DreamWorld, DreamProposed]:
    """A note's line recalled four ways, and the proposal a sweep makes of it."""
    dream = DreamWorld(tmp_path / "ws", clock)
    dream.memory("- The office is in Oslo")
    dream.note(TODAY, "- Tom takes his coffee black")
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR, score=0.62)
    (proposed,) = of(await dream.sweep(), DreamProposed)
    return dream, proposed


def commit_as_another_machine(root: Path, message: str) -> None:
    """A commit made outside Cairn, with the message another machine chose."""
    git(root, "add", "-A")
    git(root, "-c", "user.name=x", "-c", "user.email=x@elsewhere", "commit", "-qm", message)


async def test_a_line_traces_to_the_session_turn_prompt_and_call_that_wrote_it(
    demo_settings: Settings,
) -> None:
    agent = await started(demo_settings)
    await collect(agent.submit("remember that I prefer tea over coffee"))
    await collect(agent.submit("remember that the deploy key rotates on Fridays"))
    agent.conversation.save()
    note = f"memory/{demo_settings.today()}.md"
    root = demo_settings.workspace.resolve()

    traced = Why(GitStore(root), demo_settings.state_dir).line(note, 2)

    (step,) = traced.provenance.steps
    assert (step.how, step.commit.kind) == ("wrote", "tool")
    assert (step.commit.session, step.commit.turn) == (agent.session_id, 2)
    assert traced.turn is not None and traced.turn.prompt == (
        "remember that the deploy key rotates on Fridays"
    )
    assert traced.turn.call is not None and traced.turn.call.name == "memory_append"
    assert "deploy key rotates on Fridays" in traced.turn.call.arguments["text"]
    assert [c.sha for c in traced.writes] == [step.commit.sha]
    assert step.commit.sha == git(root, "log", "-1", "--format=%H")
    await agent.aclose()


async def test_lines_written_above_it_later_do_not_change_where_a_line_came_from(
    demo_settings: Settings,
) -> None:
    agent = await started(demo_settings)
    await collect(agent.submit("remember that I prefer tea over coffee"))
    agent.conversation.save()
    root = demo_settings.workspace.resolve()
    note = root / "memory" / f"{demo_settings.today()}.md"
    written = note.read_text()
    note.write_text("# a heading added by hand\n\n- another line\n" + written)
    commit_as_another_machine(root, "edit made outside Cairn: the note")

    traced = Why(GitStore(root), demo_settings.state_dir).line(note.relative_to(root).as_posix(), 4)

    assert traced.provenance.text == "- I prefer tea over coffee"
    (step,) = traced.provenance.steps
    assert (step.commit.session, step.commit.turn, step.line) == (agent.session_id, 1, 1)
    assert (
        traced.turn is not None and traced.turn.prompt == "remember that I prefer tea over coffee"
    )
    await agent.aclose()


def test_a_restored_line_is_followed_through_its_revert_to_the_write_that_made_it(
    workspace: Path, clock: Clock
) -> None:
    store = repo(workspace, clock)
    memory = workspace / "MEMORY.md"
    memory.write_text("# Memory\n\n- the build runs on Fridays\n")
    first = store.commit(
        ["MEMORY.md"], "memory(tool): add a line\n\nsession 20261201-100000-abc turn 3"
    )
    memory.write_text("# Memory\n")
    removed = store.commit(["MEMORY.md"], "memory(user): remove it")
    assert first.sha and removed.sha
    git(workspace, "revert", "--no-edit", removed.sha)

    provenance = Why(store, workspace / ".cairn").line("MEMORY.md", 3).provenance

    assert [step.how for step in provenance.steps] == ["restored", "wrote"]
    assert provenance.steps[0].commit.kind == "revert"
    assert provenance.origin is not None and provenance.origin.commit.sha == first.sha
    assert (provenance.origin.commit.session, provenance.origin.commit.turn) == (
        "20261201-100000-abc",
        3,
    )


async def test_a_promoted_line_is_followed_to_the_note_line_it_came_from(
    tmp_path: Path, clock: Clock
) -> None:
    dream, proposed = await coffee_proposed(tmp_path, clock)
    note_commit = git(dream.root, "log", "-1", "--format=%H", "--", f"memory/{TODAY}.md")
    (origin,) = proposed.proposal.origins
    assert (origin.citation, origin.commit) == (f"memory/{TODAY}.md#L1", note_commit)
    assert f"written: memory/{TODAY}.md#L1 written" in (dream.root / "DREAMS.md").read_text()
    dream.dreamer.accept(proposed.proposal.id, window=WINDOW)
    lines = (dream.root / "MEMORY.md").read_text().splitlines()
    number = next(n for n, line in enumerate(lines, 1) if "Tom takes his coffee" in line)

    provenance = Why(dream.git, dream.root / ".cairn").line("MEMORY.md", number).provenance

    assert [step.how for step in provenance.steps] == ["promoted", "wrote"]
    assert provenance.steps[0].commit.kind == "dream"
    assert (provenance.steps[1].path, provenance.steps[1].line) == (f"memory/{TODAY}.md", 1)
    assert provenance.steps[1].commit.sha == note_commit


async def test_a_proposal_whose_source_is_gone_is_shown_so_and_not_promoted(
    tmp_path: Path, clock: Clock
) -> None:
    dream, proposed = await coffee_proposed(tmp_path, clock)
    (dream.root / "memory" / f"{TODAY}.md").write_text("")  # emptied by hand, and committed
    commit_as_another_machine(dream.root, f"edit made outside Cairn: memory/{TODAY}.md")
    before = (dream.root / "MEMORY.md").read_text()

    (preview,) = dream.dreamer.open_proposals(window=WINDOW)
    events = dream.dreamer.accept(proposed.proposal.id, window=WINDOW)

    assert preview.stale is not None and "traces to no commit" in preview.stale
    (error,) = of(events, Error)
    assert "a line without provenance is not promoted" in error.message
    assert "there is no line 1" in error.message
    assert (dream.root / "MEMORY.md").read_text() == before


async def test_a_forgotten_source_takes_its_proposal_with_it(tmp_path: Path, clock: Clock) -> None:
    dream, proposed = await coffee_proposed(tmp_path, clock)

    forget(dream.root, place=f"memory/{TODAY}.md:1", apply=True, identity=Identity("T", "t@x"))

    assert dream.dreamer.open_proposals(window=WINDOW) == []
    (error,) = of(dream.dreamer.accept(proposed.proposal.id, window=WINDOW), Error)
    assert proposed.proposal.id in error.message  # no such open proposal any more
    assert "coffee" not in (dream.root / "MEMORY.md").read_text()


async def test_a_source_edited_outside_cairn_is_committed_as_such_and_traced(
    tmp_path: Path, clock: Clock
) -> None:
    dream, proposed = await coffee_proposed(tmp_path, clock)
    note = dream.root / "memory" / f"{TODAY}.md"
    note.write_text(note.read_text().replace("black", "black, always"))  # by hand

    (preview,) = dream.dreamer.open_proposals(window=WINDOW)  # a look changes nothing
    dream.dreamer.accept(proposed.proposal.id, window=WINDOW)

    assert preview.stale is not None and "not committed yet" in preview.stale
    assert "Tom takes his coffee black" in (dream.root / "MEMORY.md").read_text()
    subjects = git(dream.root, "log", "--format=%s").splitlines()
    assert f"edit made outside Cairn: memory/{TODAY}.md" in subjects


def test_a_line_no_commit_holds_has_no_provenance(workspace: Path) -> None:
    store = repo(workspace)
    (workspace / "MEMORY.md").write_text("# Memory\n")
    store.commit(["MEMORY.md"], "workspace: seed")
    (workspace / "MEMORY.md").write_text("# Memory\n- typed in, never committed\n")

    provenance = Why(store, workspace / ".cairn").line("MEMORY.md", 2).provenance

    assert provenance.steps == () and provenance.unknown is not None
    assert "not committed" in provenance.unknown


def test_a_forged_session_id_in_a_commit_reads_nothing_outside_the_sessions(
    workspace: Path,
) -> None:
    store = repo(workspace)
    secret = workspace.parent / "outside.jsonl"
    secret.write_text('{"kind": "message", "message": {"role": "user", "content": "x"}}\n')
    (workspace / "MEMORY.md").write_text("# Memory\n- one\n- two\n")
    commit_as_another_machine(workspace, "memory(tool): one\n\nsession ../../outside turn 1")
    (workspace / "MEMORY.md").write_text("# Memory\n- one\n- two\n- three\n")
    commit_as_another_machine(
        workspace, "memory(tool): three\n\nsession 20261201-100000-zzz turn 1"
    )
    why = Why(store, workspace / ".cairn")

    forged = why.line("MEMORY.md", 2)
    elsewhere = why.line("MEMORY.md", 4)

    assert forged.provenance.steps[0].commit.session is None  # not a session id: no turn named
    assert forged.turn is None and forged.turn_missing is None
    assert elsewhere.turn is None
    assert elsewhere.turn_missing == (
        "session 20261201-100000-zzz is not on this machine (sessions are not synced)"
    )
    assert elsewhere.provenance.steps[0].commit.machine == "elsewhere"


def test_a_subject_quoting_a_session_and_turn_names_no_turn(workspace: Path) -> None:
    repo(workspace)
    (workspace / "MEMORY.md").write_text("# Memory\n- a fact\n")
    commit_as_another_machine(
        workspace, "memory(dream): accept d-1 “see session 20261201-100000-abc turn 2”"
    )

    step = Why(GitStore(workspace), workspace / ".cairn").line("MEMORY.md", 2).provenance.steps[0]

    assert (step.commit.session, step.commit.turn) == (None, None)


@pytest.mark.parametrize(
    "path",
    ["../outside.md", "/etc/passwd", ".git/config", "memory/../../x.md", ".cairn/journal.json"],
)
def test_only_the_workspace_files_can_be_traced(workspace: Path, path: str) -> None:
    repo(workspace)
    with pytest.raises(ProvenanceError):
        Why(GitStore(workspace), workspace / ".cairn").line(path, 1)


def test_a_place_is_file_colon_line_or_a_hit_citation() -> None:
    assert parse_place("MEMORY.md:12") == ("MEMORY.md", 12)
    assert parse_place("memory/2026-12-01.md#L3-L5") == ("memory/2026-12-01.md", 3)
    for bad in ("MEMORY.md", "MEMORY.md:0", "MEMORY.md:x"):
        with pytest.raises(ProvenanceError):
            parse_place(bad)


async def test_a_turn_the_view_log_no_longer_holds_is_read_from_the_transcript(
    demo_settings: Settings,
) -> None:
    agent = await started(demo_settings)
    await collect(agent.submit("remember that I prefer tea over coffee"))
    await collect(agent.submit("remember that the deploy key rotates on Fridays"))
    agent.conversation.save()
    await agent.aclose()
    agent.conversation.sessions.views.path(agent.session_id).unlink()  # as if cut past 1 MiB
    root = demo_settings.workspace.resolve()

    traced = Why(GitStore(root), demo_settings.state_dir).line(
        f"memory/{demo_settings.today()}.md", 2
    )

    assert traced.turn is not None and traced.turn.events == []
    assert traced.turn.prompt == "remember that the deploy key rotates on Fridays"
    assert traced.turn.call is not None and traced.turn.call.name == "memory_append"
    assert traced.turn.reply is not None and "saved to memory/" in traced.turn.reply
