"""User themes: `*.toml` files in a folder, each one Textual `Theme`.

A file looks like::

    name = "gruvbox-cairn"
    primary = "#83a598"
    background = "#282828"
    dark = true

    [variables]
    meter-ok = "#b8bb26"
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

_COLOUR_FIELDS = (
    "primary",
    "secondary",
    "warning",
    "error",
    "success",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)


class ThemeFileError(ValueError):
    """A theme file could not be turned into a Theme; the message names the file and why."""


def _check_colour(path: Path, key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ThemeFileError(f"{path.name}: {key} must be a colour string, got {value!r}")
    try:
        Color.parse(value.split()[0] if value.strip() else value)
    except ColorParseError:
        raise ThemeFileError(f"{path.name}: {key} = {value!r} is not a colour") from None
    return value


def theme_from_toml(path: Path) -> Theme:
    """Read one theme file.

    Raises:
        ThemeFileError: the file is unreadable, not TOML, or has a missing or bad field.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ThemeFileError(f"{path.name}: {error}") from None
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise ThemeFileError(f"{path.name}: name must be a non-empty string")
    if "primary" not in data:
        raise ThemeFileError(f"{path.name}: primary is required")
    unknown = set(data) - {"name", "dark", "variables", *_COLOUR_FIELDS}
    if unknown:
        raise ThemeFileError(f"{path.name}: unknown keys {sorted(unknown)}")
    colours: dict[str, Any] = {
        key: _check_colour(path, key, data[key]) for key in _COLOUR_FIELDS if key in data
    }
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ThemeFileError(f"{path.name}: [variables] must map names to strings")
    return Theme(name=name, dark=bool(data.get("dark", True)), variables=dict(variables), **colours)


def load_user_themes(directory: Path) -> tuple[dict[str, Theme], list[str]]:
    """Load every `*.toml` theme in `directory` (missing folder: none).

    Returns:
        The themes by name, and one message per file that failed (the rest still load).
    """
    themes: dict[str, Theme] = {}
    errors: list[str] = []
    if not directory.is_dir():
        return themes, errors
    for path in sorted(directory.glob("*.toml")):
        try:
            theme = theme_from_toml(path)
        except ThemeFileError as error:
            errors.append(str(error))
        else:
            themes[theme.name] = theme
    return themes, errors
