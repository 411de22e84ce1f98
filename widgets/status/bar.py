"""The one-line status bar: model (+ demo badge), what is still loading, session id, token
meter, compactions, index, the sync, and the proposals waiting for review."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label

from widgets.status.lookahead import LookAhead
from widgets.status.meters import CompactionCounter, IndexStatus, TokenMeter
from widgets.status.sync import SyncStatus

DEMO_BADGE = "DEMO — offline demo brain"


class StatusBar(Horizontal):
    """Everything about the session at a glance, one line high."""

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        width: 1fr;
        background: $panel;
        & > Label { width: auto; padding: 0 1; }
        & > #status-model { color: $primary; text-style: bold; }
        & > .status-badge { background: $demo-badge; color: $background; text-style: bold; }
        & > .status-badge.-off { display: none; }
        & > #status-demo-short { display: none; }
        & > #status-session, & > #status-session-short { color: $muted-text; }
        & > #status-session-short { display: none; }
        & > #status-loading { color: $warning; }
        & > #status-loading.-idle { display: none; }
        & > .status-review { color: $dream-block-border; text-style: bold; }
        & > .status-review.-idle { visibility: hidden; }
        & > #status-review { width: 17; }
        & > #status-review-short { display: none; width: 7; }
        & > TokenMeter { margin: 0 1; }
    }
    """

    def __init__(
        self,
        *,
        model: str,
        demo: bool,
        session_id: str,
        window: int,
        flush_threshold: int,
        compaction_threshold: int,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._model = model
        self._demo = demo
        self._session_id = session_id
        self._loading: set[str] = set()
        self._meter = TokenMeter(
            window=window,
            flush_threshold=flush_threshold,
            compaction_threshold=compaction_threshold,
            id="token-meter",
        )

    def compose(self) -> ComposeResult:
        yield Label(self._model, id="status-model")
        for badge in (
            Label(DEMO_BADGE, id="status-demo", classes="status-badge"),
            Label("DEMO", id="status-demo-short", classes="status-badge"),
        ):
            badge.set_class(not self._demo, "-off")
            yield badge
        yield Label("", id="status-loading", classes="-idle")
        yield Label(self._session_label(self._session_id), id="status-session")
        yield Label(self._short_session_label(self._session_id), id="status-session-short")
        yield self._meter
        yield LookAhead(id="lookahead")
        yield CompactionCounter(id="compactions")
        yield IndexStatus(id="index-status")
        yield SyncStatus(id="sync-status")
        # The slots after the meter keep their width whether they show anything or not, so the
        # meter never changes width (and its marks never move) when they do.
        yield Label("💭 0 to review", id="status-review", classes="status-review -idle")
        yield Label("💭 0", id="status-review-short", classes="status-review -idle")

    @staticmethod
    def _session_label(session_id: str) -> str:
        return f"session {session_id}" if session_id else ""

    @staticmethod
    def _short_session_label(session_id: str) -> str:
        # not shorten(): ids share their date prefix, so this keeps the end
        return f"…{session_id[-6:]}" if len(session_id) > 8 else session_id

    def show_session(self, *, model: str, session_id: str, demo: bool) -> None:
        self.query_one("#status-model", Label).update(model)
        self.query_one("#status-session", Label).update(self._session_label(session_id))
        short = self._short_session_label(session_id)
        self.query_one("#status-session-short", Label).update(short)
        for badge in self.query(".status-badge"):
            badge.set_class(not demo, "-off")

    def show_loading(self, what: str, *, done: bool) -> None:
        """Name what is still loading ("loading model…"); hidden once nothing is."""
        (self._loading.discard if done else self._loading.add)(what)
        label = self.query_one("#status-loading", Label)
        label.update(f"loading {', '.join(sorted(self._loading))}…")
        label.set_class(not self._loading, "-idle")

    def show_review(self, waiting: int) -> None:
        """How many of dreaming's proposals wait for review (hidden at none)."""
        self.query_one("#status-review", Label).update(f"💭 {waiting} to review")
        self.query_one("#status-review-short", Label).update(f"💭 {waiting}")
        for label in self.query(".status-review"):
            label.set_class(not waiting, "-idle")

    @property
    def meter(self) -> TokenMeter:
        return self._meter

    @property
    def lookahead(self) -> LookAhead:
        return self.query_one(LookAhead)

    @property
    def compactions(self) -> CompactionCounter:
        return self.query_one(CompactionCounter)

    @property
    def index_status(self) -> IndexStatus:
        return self.query_one(IndexStatus)

    @property
    def sync(self) -> SyncStatus:
        return self.query_one(SyncStatus)
