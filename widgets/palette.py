"""Cairn's commands in Textual's command palette (ctrl+p): every slash command and the TUI's own
actions, found by name or by what they do ("compact" finds /compact)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from shell.commands import COMMANDS
from widgets.prompt import Prompt


@runtime_checkable
class PaletteHost(Protocol):
    """What the palette needs of the app (`CairnApp` has this shape): its prompt and the
    prompt's own path, its actions, and the theme cycle."""

    @property
    def prompt(self) -> Prompt: ...

    @property
    def theme_cycle(self) -> Sequence[str]: ...

    async def prompt_submitted(self, event: Prompt.Submitted) -> None: ...

    async def run_action(self, action: str) -> bool: ...


@dataclass(frozen=True)
class PaletteCommand:
    """One entry of the palette: a slash command sent through the prompt's path, or an action."""

    name: str
    """What the palette shows: `/compact`, or an action's title ("Toggle panes")."""
    help: str
    key: str = ""
    """The key that runs it too, shown after the help (Textual's spelling: "f2", "ctrl+l")."""
    action: str = ""
    """The app action to run (`toggle_side`); empty for a slash command, which is submitted."""

    @property
    def search_text(self) -> str:
        return f"{self.name} {self.help}"


def slash_commands() -> tuple[PaletteCommand, ...]:
    """Every command of the registry (`shell.commands.COMMANDS`), sent through the prompt."""
    return tuple(
        PaletteCommand(command.name, command.help, command.key or "") for command in COMMANDS
    )


TUI_COMMAND_ACTIONS = {
    "/review": "review",
    "/history": "history",
    "/conflicts": "resolve_conflicts",
    "/why": "why",
    "/clear": "clear_view",
    "/exit": "quit",
}
"""The app action each `tui_only` command of `shell.commands` runs."""

TUI_ACTIONS: tuple[PaletteCommand, ...] = (
    PaletteCommand("Toggle panes", "show or hide the memory panes", "f2", "toggle_side"),
    PaletteCommand(
        "Edit in $EDITOR", "open the memory file in view in your editor", "f4", "edit_memory"
    ),
    PaletteCommand("Cycle theme", "switch to the next colour theme", "ctrl+t", "cycle_theme"),
    PaletteCommand("Cancel turn", "stop the turn under way", "escape", "cancel_turn"),
)
"""The TUI's own actions that no slash command runs."""


def palette_commands() -> tuple[PaletteCommand, ...]:
    return slash_commands() + TUI_ACTIONS


def theme_commands(names: Iterable[str]) -> tuple[PaletteCommand, ...]:
    """One "Theme: <name>" entry per theme of the cycle (Cairn's and the user's)."""
    return tuple(
        PaletteCommand(
            f"Theme: {name}", "switch to this colour theme", action=f"use_theme({name!r})"
        )
        for name in names
    )


class CairnCommands(Provider):
    """The palette's Cairn section: slash commands and TUI actions."""

    @property
    def cairn(self) -> PaletteHost:
        assert isinstance(self.app, PaletteHost)
        return self.app

    def _runner(self, command: PaletteCommand) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            if command.action:
                await self.cairn.run_action(command.action)
            else:
                await self._submit(command.name)

        return run

    async def _submit(self, text: str) -> None:
        """Send `text` by the prompt's own path (as if typed and sent); what is typed in the
        prompt stays there (only the prompt's own Enter clears it)."""
        prompt = self.cairn.prompt
        await self.cairn.prompt_submitted(Prompt.Submitted(prompt, text))
        prompt.focus()

    def _commands(self) -> tuple[PaletteCommand, ...]:
        return palette_commands() + theme_commands(self.cairn.theme_cycle)

    @staticmethod
    def _help(command: PaletteCommand) -> str:
        return f"{command.help} ({command.key})" if command.key else command.help

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(
                command.name, self._runner(command), text=command.name, help=self._help(command)
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = max(matcher.match(command.name), matcher.match(command.search_text) * 0.5)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(command.name),
                    self._runner(command),
                    text=command.name,
                    help=self._help(command),
                )
