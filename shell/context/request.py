"""What each model call sends, and what it costs in tokens.

The system prompt is: who Cairn is, the memory rules, today's date, the bootstrap files
(AGENTS → SOUL → MEMORY within budget), then — when they apply — the AGENTS.md sections
re-injected after a compaction and the startup prelude of a new session (both held by the
`Conversation`: they belong to the session).

Sizes follow the one `ContextWindow`: below `COMPACT_TOOLS_BELOW` the tool schemas go in their
compact form, and the bootstrap takes at most a quarter of the window.

Prompt sizes, one figure per purpose:
- `count`: our tokenizer's count of the whole request (system, tool schemas, messages); it
  measures what a change adds or removes.
- `projected`: that count as the provider will count it (`shell.calibration`); every
  threshold, the gate, the meter and the receipts compare this one.
- reported: what the provider said for a call (`ModelReply.prompt_tokens`); it teaches the
  calibration and is shown beside the meter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from shell import prompts
from shell.config import Settings
from shell.context.budget import ContextWindow
from shell.context.calibration import Calibration, CalibrationStore
from shell.context.counter import TokenCounter
from shell.events import BootstrapTruncated, ContextReport, UsageUpdated
from shell.model.textcalls import assists
from shell.scopes.crossing import without_secret_lines
from shell.scopes.scopes import Scopes
from shell.session.conversation import Conversation
from shell.workspace import BOOTSTRAP_FILES, Bootstrap, bootstrap_budgets, load_bootstrap

COMPACT_TOOLS_BELOW = 16_000
"""Below this window the tool schemas are compact: 851 → 339 tokens (at 2,048 tokens the full
schemas took 42% of the window)."""


@dataclass(frozen=True)
class PromptSize:
    """Our own count of a prompt, by part (what the meter's breakdown shows)."""

    system: int
    tools: int
    messages: int

    @property
    def total(self) -> int:
        return self.system + self.tools + self.messages


class OfferedTools(Protocol):
    """What a request needs of the session's toolbox (`shell.tools.toolbox.Toolbox`)."""

    def schemas(self, *, compact: bool = False) -> list[dict[str, Any]]: ...

    def offers(self, source: str) -> bool: ...


class RequestBuilder:
    def __init__(
        self,
        settings: Settings,
        *,
        counter: TokenCounter,
        toolbox: OfferedTools,
        window: ContextWindow,
        conversation: Conversation,
        calibrations: CalibrationStore,
        scopes: Scopes | None = None,
    ) -> None:
        """`scopes`: the session's memories; with a project open its MEMORY.md follows the
        global one in the bootstrap, within the same budget."""
        self.settings = settings
        self.scopes = scopes
        self.counter = counter
        self.toolbox = toolbox
        self.window = window
        self.conversation = conversation
        self.calibrations = calibrations
        self.model_key = calibration_key(settings)
        self.turns = calibrations.kept(self.model_key)
        self.summaries = calibrations.kept(f"{self.model_key} · summariser", through_origin=True)
        """The summariser's prompts, counted apart (see `shell.context.calibration`)."""
        self.flushes = calibrations.kept(f"{self.model_key} · flush", through_origin=True)
        """The flush's prompts: the turn's with the flush instructions and one tool, which a
        chat template may render at another rate than the turn's many."""
        self._bootstrap: Bootstrap | None = None
        self._bootstrap_key: tuple[object, ...] = ()

    @property
    def compact_tools(self) -> bool:
        return self.window.budget.window < COMPACT_TOOLS_BELOW

    @property
    def budgets(self) -> tuple[int, int]:
        """(per file, total) characters of the bootstrap at this window."""
        return bootstrap_budgets(self.settings, self.window.budget.window)

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        return self.toolbox.schemas(compact=self.compact_tools)

    def bootstrap(self) -> Bootstrap:
        """The bootstrap files, re-read only when one of them or the budgets changed."""
        project = self.scopes.project if self.scopes else None
        more = (
            [(f"MEMORY.md ({project.label})", project.workspace / "MEMORY.md")] if project else []
        )
        key = (
            *(_stat(self.settings.workspace / name) for name in BOOTSTRAP_FILES),
            *(_stat(path) for _, path in more),
            self.budgets,
        )
        if self._bootstrap is None or key != self._bootstrap_key:
            per_file, total = self.budgets
            self._bootstrap = load_bootstrap(
                self.settings.workspace,
                max_chars=per_file,
                total_max_chars=total,
                more=more,
                clean=without_secret_lines if project else None,
            )
            self._bootstrap_key = key
        return self._bootstrap

    def system_prompt(self) -> str:
        parts = [
            prompts.CAIRN_IDENTITY,
            self._recall_rules(),
            *([prompts.project_rules(str(folder))] if (folder := self._project()) else []),
            f"Current date: {self.settings.today()}",
            f"# Project Context\n\n{self.bootstrap().text}",
        ]
        if self.conversation.reinjection:
            parts.append(self.conversation.reinjection)
        if self.conversation.prelude:
            parts.append(self.conversation.prelude)
        return "\n\n".join(parts)

    def _recall_rules(self) -> str:
        assisted = assists(self.settings.memory_assist, self.settings.api_base)
        return prompts.ASSISTED_RECALL if assisted else prompts.MEMORY_RECALL

    def _project(self) -> Path | None:
        """The project folder, when its tools are offered (`shell.tools.workbench`)."""
        return self.settings.project if self.toolbox.offers("project") else None

    def request(self, messages: Sequence[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """The messages of a call with `messages` (default: the conversation as it stands)."""
        if messages is None:
            messages = self.conversation.messages
        return [{"role": "system", "content": self.system_prompt()}, *messages]

    def measure(self, messages: Sequence[dict[str, Any]] | None = None) -> PromptSize:
        """Our own count of the whole prompt by part: system, tool schemas, `messages`
        (default: the conversation as it stands)."""
        if messages is None:
            messages = self.conversation.messages
        return PromptSize(
            system=self.counter.message({"role": "system", "content": self.system_prompt()}),
            tools=self.counter.tools(self.tool_schemas),
            messages=self.counter.messages(messages),
        )

    def count(self, messages: Sequence[dict[str, Any]] | None = None) -> int:
        """Our own count of the whole prompt (`measure`'s total)."""
        return self.measure(messages).total

    def too_big(self, size: int) -> str:
        """Why a prompt of `size` tokens was not sent, with its parts; the advice blames the
        message only when the system prompt and the tools left it half of the window."""
        fixed, window = self.measure([]), self.window.budget.window
        fixed_projected = self.projected([])
        system = round(fixed_projected * fixed.system / fixed.total) if fixed.total else 0
        tools, last_turn = fixed_projected - system, max(0, size - fixed_projected)
        if fixed_projected < window / 2:  # the message had a fair share of the window
            advice = "Shorten the message"
        elif tools > system:
            advice = (
                "The tools' schemas take the most: turn off an MCP server the model can do "
                "without (enabled = false in its [mcp.<name>] table)"
            )
        else:
            advice = "Shorten MEMORY.md or AGENTS.md"
        return (
            f"Not sent: the prompt would be {size:,} tokens, over the {window:,}-token window "
            f"even with only the last turn: the system prompt takes {system:,}, the tools' "
            f"schemas {tools:,}, the last turn {last_turn:,}. {advice}, or raise "
            "--context-window if the model allows more."
        )

    def projected(self, messages: Sequence[dict[str, Any]] | None = None) -> int:
        """The prompt as the provider will count it (`messages` default: the conversation)."""
        return self.calibration.project(self.count(messages))

    @property
    def calibration(self) -> Calibration:
        """How the provider counts the turns' prompts (and the flush's, the same shape)."""
        return self.turns.calibration

    def calibrate(self, reported: int, counted: int) -> None:
        """Take the provider's prompt tokens for a call whose prompt we counted at `counted`,
        and keep what was learned for the model's next session."""
        self.turns.learn(counted, reported)

    def usage(
        self, reported: tuple[int, int] = (0, 0), size: PromptSize | None = None
    ) -> UsageUpdated:
        """The meter for the conversation as it stands; `reported`: the provider's prompt and
        completion tokens for the last call; `size`: the prompt's count, when just taken."""
        budget = self.window.budget
        size = size or self.measure()
        system, tools, conversation = size.system, size.tools, size.messages
        counted = size.total
        return UsageUpdated(
            prompt_tokens=self.calibration.project(counted),
            window=budget.window,
            flush_threshold=budget.flush_threshold,
            compaction_threshold=budget.compaction_threshold,
            breakdown={"system": system, "tools": tools, "messages": conversation},
            reported_prompt_tokens=reported[0],
            completion_tokens=reported[1],
            window_source=budget.window_source,
            counted_prompt_tokens=counted,
            calibrated=self.calibration.calibrated,
            cycle_flushed=self.conversation.record.cycle.flushed(),
        )

    def report(self, reported: tuple[int, int] = (0, 0)) -> ContextReport:
        """`/context`: what the next prompt holds, how it was counted, and what was cut."""
        bootstrap = self.bootstrap()
        return ContextReport(
            usage=self.usage(reported),
            messages=len(self.conversation.messages),
            compactions=self.conversation.record.compaction_count,
            compact_tools=self.compact_tools,
            bootstrap_file_budget=self.budgets[0],
            bootstrap_total_budget=self.budgets[1],
            bootstrap_chars=dict(bootstrap.chars),
            bootstrap_cut={
                e.file: e.original_chars
                for e in bootstrap.events
                if isinstance(e, BootstrapTruncated)
            },
        )


def calibration_key(settings: Settings) -> str:
    """Whose counting a calibration describes: the model, and the server when one is named (two
    local servers may serve different models under one name)."""
    return f"{settings.model} @ {settings.api_base}" if settings.api_base else settings.model


def _stat(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError:
        return (-1, -1)
    return (info.st_mtime_ns, info.st_size)
