"""The app's colour themes: Cairn's own and the user's registered, switched with ctrl+t or from
the palette ("Theme: <name>", or Textual's own "Change theme" picker), and remembered across
runs in `<config dir>/state.toml` (Cairn's own file, written atomically; `config.toml` is never
touched).

`NO_COLOR` (set and not empty): the app starts on the high-contrast theme, whatever was
remembered. Textual itself greys every colour then (its `Monochrome` line filter, applied when
the variable is present at all), so the theme whose bases are pure black and white reads best.
A switch still works and is still remembered.

A switch restyles the screen in view and leaves the rest of a long transcript for between
frames (`widgets.restyle`); presses that come faster than the screen repaints coalesce: the
last one wins.
"""

from __future__ import annotations

import json
import os
import threading
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path

from textual import events, on
from textual.app import App
from textual.message import Message
from textual.theme import Theme

from shell.fsio import write_atomically
from themes import APP_VARIABLE_DEFAULTS, BUILTIN_THEMES, DEFAULT_THEME, NO_COLOR_THEME
from themes.user import load_user_themes
from widgets.restyle import Restyler

STATE_FILE = "state.toml"
"""What the TUI remembers between runs (the theme), in the config folder."""


def remembered_theme(config_dir: Path) -> str | None:
    """The theme chosen last time, or None (no file, unreadable, or no `theme` in it)."""
    try:
        data = tomllib.loads((config_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    theme = data.get("theme")
    return theme if isinstance(theme, str) else None


def remember_theme(config_dir: Path, name: str) -> None:
    """Keep `name` as the theme of the next run.

    Raises:
        OSError: the folder or the file could not be written.
    """
    config_dir.mkdir(parents=True, exist_ok=True)
    # A JSON string is a valid TOML basic string (same escapes).
    write_atomically(config_dir / STATE_FILE, f"theme = {json.dumps(name)}\n")


class ThemeNotRemembered(Message):
    """The theme chosen could not be written to the state file."""

    def __init__(self, error: OSError) -> None:
        super().__init__()
        self.error = error


class ThemeMemory:
    """Writes the chosen theme off the UI thread (an atomic write fsyncs twice: a slow disk
    must not hold a key press); a choice made while one is being written is written after it,
    so the last one wins."""

    def __init__(self, config_dir: Path, failed: Callable[[OSError], None]) -> None:
        self.config_dir = config_dir
        self.failed = failed
        """Called on the writing thread with the error of a write that failed."""
        self._lock = threading.Lock()
        self._wanted: str | None = None
        self._writer: threading.Thread | None = None

    def remember(self, name: str) -> None:
        with self._lock:
            self._wanted = name
            if self._writer is None:
                self._writer = threading.Thread(target=self._write, name="theme-memory")
                self._writer.start()

    def _write(self) -> None:
        while True:
            with self._lock:
                name, self._wanted = self._wanted, None
                if name is None:
                    self._writer = None
                    return
            try:
                remember_theme(self.config_dir, name)
            except OSError as error:
                self.failed(error)

    def wait(self, timeout_s: float = 5.0) -> None:
        """Until the last choice is written (the app is closing)."""
        with self._lock:
            writer = self._writer
        if writer is not None:
            writer.join(timeout_s)


def no_color(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether `NO_COLOR` asks for no colour (https://no-color.org: set and not empty)."""
    return bool(environ.get("NO_COLOR"))


class ThemedApp(App[None]):
    """An app with Cairn's themes and the user's, its variables' defaults, the theme cycle, and
    the choice remembered in `config_dir` (None: nothing is read or written)."""

    def __init__(self, *, theme_dir: Path | None = None, config_dir: Path | None = None) -> None:
        super().__init__()
        self.theme_dir = theme_dir
        self.config_dir = config_dir
        self.theme_cycle: list[str] = list(BUILTIN_THEMES)
        """The themes ctrl+t goes through: Cairn's, then the user's."""
        self.restyler = Restyler(self)
        self._theme_memory = (
            ThemeMemory(config_dir, self._not_remembered) if config_dir is not None else None
        )
        self._theme_wanted: str | None = None
        """The theme ctrl+t asked for, applied after the next refresh (None: none waits)."""
        self._theme_errors = self._register_themes()
        # Set before the first frame: a theme set in on_mount re-applies every style (~0.1 s).
        self.theme = self._theme_shown = self._starting_theme()

    def _register_themes(self) -> list[str]:
        for theme in BUILTIN_THEMES.values():
            self.register_theme(theme)
        if self.theme_dir is None:
            return []
        themes, errors = load_user_themes(self.theme_dir)
        for theme in themes.values():
            self.register_theme(theme)
            self.theme_cycle.append(theme.name)
        return errors

    def _starting_theme(self) -> str:
        if no_color():
            return NO_COLOR_THEME
        saved = remembered_theme(self.config_dir) if self.config_dir is not None else None
        return saved if saved is not None and saved in self.available_themes else DEFAULT_THEME

    def refresh_css(self, animate: bool = True) -> None:
        self.restyler.refresh_css(animate)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **APP_VARIABLE_DEFAULTS}

    @on(events.Mount)
    def _watch_theme_switches(self) -> None:
        if self._theme_errors:
            self.notify(
                "\n".join(self._theme_errors), title="Some themes did not load", severity="warning"
            )
        self.theme_changed_signal.subscribe(self, self._theme_switched)

    @on(events.Unmount)
    def _theme_written(self) -> None:
        if self._theme_memory is not None:
            self._theme_memory.wait()

    def _theme_switched(self, theme: Theme) -> None:
        """Any switch (ctrl+t, the palette, Textual's picker) says which theme is on, and is
        remembered for the next run."""
        if theme.name == self._theme_shown:
            return
        self._theme_shown = theme.name
        self.notify(f"theme: {theme.name}", timeout=1.5, markup=False)
        if self._theme_memory is not None:
            self._theme_memory.remember(theme.name)

    def _not_remembered(self, error: OSError) -> None:
        """A theme could not be written (on the writing thread)."""
        message = f"not remembered: {error}"
        self.call_from_thread(self.notify, message, title="Theme", severity="warning", markup=False)

    def action_cycle_theme(self) -> None:
        """ctrl+t: the next of `theme_cycle`, once the presses queued behind this one are
        read (each moves the choice on; only the last is applied)."""
        names = self.theme_cycle
        current = self._theme_wanted or self.theme
        index = names.index(current) if current in names else -1
        if self._theme_wanted is None:
            self.call_after_refresh(self._apply_wanted_theme)
        self._theme_wanted = names[(index + 1) % len(names)]

    def _apply_wanted_theme(self) -> None:
        if self._theme_wanted is not None:
            self.theme, self._theme_wanted = self._theme_wanted, None

    def action_use_theme(self, name: str) -> None:
        """The palette's "Theme: <name>"."""
        if name in self.available_themes:
            self.theme = name
