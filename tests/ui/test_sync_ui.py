"""The workspace's sync in the TUI, on the real core and real git: a bare remote in tmp_path,
this app's workspace ("ws", machine "desk") and a second one beside it (machine "laptop")."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from shell.events import SyncStatusChanged
from shell.git.store import GitStore
from shell.sync import SyncEngine, clone_workspace
from tests.conftest import Clock
from tests.sync.conftest import Machine, has_markers, make_bare
from tests.ui.conftest import MakeApp, send, started, until
from tests.ui.pilot_helpers import DAILY, SIZE, TOLD, painted
from widgets.app import CairnApp
from widgets.cards.blocks import MemoryWriteLine, NoticeLine
from widgets.cards.sync_blocks import ConflictBlock, SyncBlock
from widgets.panes.git_log import commit_lines
from widgets.panes.memory import MemoryFilePane
from widgets.screens.conflict import ConflictScreen

MEMORY = "MEMORY.md"
CURATED = "# MEMORY.md\n\n## Preferences\n- tea, not coffee\n\n## Projects\n- cairn\n"
FROM_LAPTOP = "- the laptop says: the staging box is stg-3"


class Laptop:
    """The other machine: a clone of the remote that writes and syncs as `cairn@laptop`."""

    def __init__(self, bare: Path, root: Path, clock: Clock) -> None:
        clone_workspace(str(bare), root)
        self.root = root
        email = "cairn@laptop"
        self.store = GitStore(root, author_name="Cairn", author_email=email, clock=clock)
        self.engine = SyncEngine(root, author_name="Cairn", author_email=email, clock=clock)

    def append(self, rel: str, line: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as file:
            file.write(f"{line}\n")
        assert self.store.commit([rel], f"append {rel}").error is None


def sync_state(app: CairnApp) -> SyncStatusChanged | None:
    return app.status_bar.sync.state


def synced(app: CairnApp) -> bool:
    state = sync_state(app)
    return state is not None and state.last_sync is not None and not state.offline


def notices(app: CairnApp, text: str) -> list[str]:
    return [n.text for n in app.transcript.query(NoticeLine) if text in n.text]


async def wait(pilot: Pilot[None], condition: object) -> None:
    await until(pilot, condition, steps=400)  # type: ignore[arg-type]


def conflicted(tmp_path: Path, clock: Clock) -> Path:
    """`ws` and the laptop both changed the same MEMORY.md line since their last sync; the
    laptop has pushed, `ws` has not: the app's pull at start meets a conflict."""
    bare = make_bare(tmp_path / "remote.git")
    ws = Machine(tmp_path / "ws", clock).seed()
    ws.write(MEMORY, CURATED)
    ws.engine.add_remote(str(bare))
    laptop = Laptop(bare, tmp_path / "laptop", clock)
    (laptop.root / MEMORY).write_text(CURATED.replace("tea, not coffee", "mate, every morning"))
    assert laptop.store.commit([MEMORY], "laptop: MEMORY.md").error is None
    laptop.engine.sync()
    ws.write(MEMORY, CURATED.replace("tea, not coffee", "coffee after all"))
    return bare


async def test_a_pull_shows_a_block_the_panes_and_the_machine_it_came_from(
    demo_app: MakeApp, tmp_path: Path, clock: Clock
) -> None:
    bare = make_bare(tmp_path / "remote.git")
    app = demo_app(remote=str(bare), sync_push_delay=0.05, git_author_email="cairn@desk")
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await wait(pilot, lambda: synced(app))  # the remote added at start, ws pushed to it
        assert painted(app.status_bar.sync).strip() == "⇅ now"  # 120 columns: the short form
        assert not app.transcript.query(SyncBlock)  # nothing came in: no block
        assert not notices(app, "synced:")  # and no line: nobody asked

        laptop = Laptop(bare, tmp_path / "laptop", clock)
        laptop.append(DAILY, FROM_LAPTOP)
        laptop.engine.sync()
        await send(app, pilot, "/sync")
        await wait(pilot, lambda: bool(app.transcript.query(SyncBlock)))

        block = app.transcript.query_one(SyncBlock)
        assert "1 commit in (1 file, +1 line)" in block.text
        assert f"changed: {DAILY}" in block.text
        await wait(pilot, lambda: FROM_LAPTOP in app.query_one("#pane-today").text)  # type: ignore[attr-defined]
        log = app.side_panes.git_log
        await wait(pilot, lambda: any(c.machine == "laptop" for c in log.commits))
        lines = commit_lines(log.commits, log.here).plain.splitlines()
        assert log.here == "desk"
        assert any("append" in line and "↓ laptop" in line for line in lines), lines
        assert not any("↓" in line for line in lines if "laptop" not in line), lines


async def test_a_memory_conflict_is_a_block_with_its_diff_resolved_with_one_key(
    demo_app: MakeApp, tmp_path: Path, clock: Clock
) -> None:
    bare = conflicted(tmp_path, clock)
    app = demo_app(remote=str(bare), sync_push_delay=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await wait(pilot, lambda: bool(app.transcript.query(ConflictBlock)))
        block = app.transcript.query_one(ConflictBlock)
        assert "-- coffee after all" in block.event.diff
        assert "+- mate, every morning" in block.event.diff
        assert "F6" in block.hint
        await wait(pilot, lambda: bool(app.status_bar.sync.conflicts))
        assert painted(app.status_bar.sync).strip() == "⇅ 1!"
        held = (tmp_path / "ws" / MEMORY).read_text()  # while it waits, both sides are kept
        assert "coffee after all" in held and "mate, every morning" in held
        assert not has_markers(held)

        await pilot.press("f6")
        await wait(pilot, lambda: isinstance(app.screen, ConflictScreen))
        await pilot.press("l")
        await wait(pilot, lambda: block.has_class("-resolved"))
        await wait(pilot, lambda: not app.status_bar.sync.conflicts)

        text = (tmp_path / "ws" / MEMORY).read_text()
        assert "coffee after all" in text and "mate, every morning" not in text
        assert not has_markers(text)
        assert notices(app, "resolved MEMORY.md: took local")
        pane = app.query_one("#pane-memory", MemoryFilePane)  # re-read: the write reached it
        assert "coffee after all" in pane.text and "mate, every morning" not in pane.text
        line = app.transcript.query(MemoryWriteLine).last()
        assert "(resolve)" in line.text and line.commit == app.agent.git.log(1)[0].sha


async def test_clicking_the_conflict_block_opens_the_modal(
    demo_app: MakeApp, tmp_path: Path, clock: Clock
) -> None:
    bare = conflicted(tmp_path, clock)
    app = demo_app(remote=str(bare), sync_push_delay=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await wait(pilot, lambda: bool(app.transcript.query(".conflict--line")))
        await pilot.click(".conflict--line")
        await wait(pilot, lambda: isinstance(app.screen, ConflictScreen))
        screen = app.screen
        assert isinstance(screen, ConflictScreen) and screen.selected == MEMORY
        await pilot.press("escape")
        await wait(pilot, lambda: not isinstance(app.screen, ConflictScreen))
        assert (tmp_path / "ws" / MEMORY).read_text().count("coffee after all") == 1


async def test_an_unreachable_remote_is_one_notice_and_the_turn_goes_on(
    demo_app: MakeApp, tmp_path: Path, refused_port: int
) -> None:
    trace = tmp_path / "trace.jsonl"
    remote = f"git://127.0.0.1:{refused_port}/x"
    app = demo_app(remote=remote, sync_push_delay=0.05, trace=trace)

    def failures() -> int:
        return trace.read_text().count('"sync_failed"') if trace.exists() else 0

    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await wait(pilot, lambda: failures() >= 1)
        await send(app, pilot, TOLD)  # a write: its push is tried 0.05 s later, offline again
        await wait(pilot, lambda: failures() >= 2)
        await pilot.pause()

        assert len(notices(app, "sync failed (offline)")) == 1, app.transcript.describe()
        assert "Friday 14:00" in app.transcript.describe()  # the turn answered
        assert not app.busy
        state = sync_state(app)
        assert state is not None and state.offline
        assert painted(app.status_bar.sync).strip() == "⇅ off"


def test_the_conflict_modal_at_80x24(
    snap_compare: object, demo_app: MakeApp, tmp_path: Path, clock: Clock
) -> None:
    """The modal over the transcript: the file, where the remote's side is, the coloured diff,
    the keys; the status line's short sync slot says one conflict."""
    bare = conflicted(tmp_path, clock)

    async def run_before(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, CairnApp)
        await started(app, pilot)
        await wait(pilot, lambda: bool(app.status_bar.sync.conflicts))
        await wait(pilot, lambda: bool(app.transcript.query(ConflictBlock)))
        await pilot.press("f6")
        await wait(pilot, lambda: isinstance(app.screen, ConflictScreen))
        await pilot.pause()

    app = demo_app(remote=str(bare), sync_push_delay=0.05)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)  # type: ignore[operator]


def test_the_conflict_block_at_80x24(
    snap_compare: object, demo_app: MakeApp, tmp_path: Path, clock: Clock
) -> None:
    """The conflict block in the transcript (its diff, the key) and the sync slot's short form
    at 80 columns ("⇅ 1!") beside a meter that keeps its width."""
    bare = conflicted(tmp_path, clock)

    async def run_before(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, CairnApp)
        await started(app, pilot)
        await wait(pilot, lambda: bool(app.status_bar.sync.conflicts))
        await wait(pilot, lambda: bool(app.transcript.query(SyncBlock)))
        await pilot.pause()

    app = demo_app(remote=str(bare), sync_push_delay=0.05)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)  # type: ignore[operator]


async def test_a_push_a_secret_stopped_is_previewed_then_unblocked_with_sync_redact(
    demo_app: MakeApp, tmp_path: Path, workspace: Path
) -> None:
    bare = make_bare(tmp_path / "remote.git")
    app = demo_app(remote=str(bare), sync_push_delay=0.05)
    key = "AKIAIOSFODNN7REALKEY"
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await wait(pilot, lambda: synced(app))
        (workspace / DAILY).parent.mkdir(parents=True, exist_ok=True)
        (workspace / DAILY).write_text(f"- the key is {key}\n", encoding="utf-8")
        await send(app, pilot, "/sync")
        await wait(pilot, lambda: bool(notices(app, "sync failed (secret)")))
        assert "/sync redact" in notices(app, "sync failed (secret)")[0]

        await send(app, pilot, "/sync redact")
        await wait(pilot, lambda: bool(notices(app, "redacting would rewrite")))
        [preview] = notices(app, "redacting would rewrite")
        assert f"{DAILY}:1 · AWS Access Key: - the key is [REDACTED AWS Access Key]" in preview
        assert "/sync redact apply" in preview and key not in preview

        await send(app, pilot, "/sync redact apply")
        await wait(pilot, lambda: bool(notices(app, "rewrote 1 commit")))
        await wait(pilot, lambda: synced(app) and sync_state(app).ahead == 0)  # type: ignore[union-attr]
        assert key not in (workspace / DAILY).read_text(encoding="utf-8")
