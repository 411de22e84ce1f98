"""Cairn's colour palettes: Textual `Theme` objects and the app's own theme variables.

Palettes only. Layout lives in `widgets/app.tcss`; a theme switch swaps variables, nothing else.
Every colour the widgets use beyond Textual's own (`$primary`, `$error`, …) is declared in
`APP_VARIABLE_DEFAULTS` and may be overridden by any theme's `variables`.
"""

from __future__ import annotations

from textual.theme import Theme

APP_VARIABLE_DEFAULTS: dict[str, str] = {
    "meter-track": "#3a3f4b",
    "meter-ok": "#7fb77e",
    "meter-near-flush": "#e5c07b",
    "meter-over-flush": "#e06c75",
    "meter-compacting": "#c678dd",
    "meter-mark": "#dcdfe4",
    "tool-card-border": "#4f5666",
    "tool-card-error-border": "#e06c75",
    "search-card-border": "#61afef",
    "memory-write": "#98c379",
    "written-line": "#33402f",
    "flush-block-border": "#d19a66",
    "compaction-block-border": "#c678dd",
    "reinjection-border": "#56b6c2",
    "dream-block-border": "#a9a1e1",
    "user-message-border": "#61afef",
    "muted-text": "#7f848e",
    "demo-badge": "#d19a66",
}
"""Defaults for the app's own CSS variables (`CairnApp.get_theme_variable_defaults`)."""

CAIRN_DARK = Theme(
    name="cairn",
    primary="#61afef",
    secondary="#56b6c2",
    accent="#d19a66",
    warning="#e5c07b",
    error="#e06c75",
    success="#98c379",
    foreground="#dcdfe4",
    background="#1e2127",
    surface="#262a32",
    panel="#2c313c",
    dark=True,
    variables={
        "footer-key-foreground": "#61afef",
        "input-selection-background": "#61afef 35%",
    },
)

CAIRN_LIGHT = Theme(
    name="cairn-light",
    primary="#2a6fb0",
    secondary="#197a85",
    accent="#a35a12",
    warning="#9a6a00",
    error="#b3261e",
    success="#2e7d32",
    foreground="#1f2328",
    background="#fafaf7",
    surface="#f0f0eb",
    panel="#e4e4dc",
    dark=False,
    variables={
        "meter-track": "#d4d4cc",
        "meter-ok": "#2e7d32",
        "meter-near-flush": "#9a6a00",
        "meter-over-flush": "#b3261e",
        "meter-compacting": "#7b3fa0",
        "meter-mark": "#1f2328",
        "tool-card-border": "#a8aab0",
        "tool-card-error-border": "#b3261e",
        "search-card-border": "#2a6fb0",
        "memory-write": "#2e7d32",
        "written-line": "#d5ead3",
        "flush-block-border": "#a35a12",
        "compaction-block-border": "#7b3fa0",
        "reinjection-border": "#197a85",
        "dream-block-border": "#5b4fb0",
        "user-message-border": "#2a6fb0",
        "muted-text": "#6a6f78",
        "demo-badge": "#a35a12",
        "footer-key-foreground": "#2a6fb0",
    },
)

BUILTIN_THEMES: dict[str, Theme] = {theme.name: theme for theme in (CAIRN_DARK, CAIRN_LIGHT)}
"""Cairn's own themes by name; "cairn" is the default."""

DEFAULT_THEME = CAIRN_DARK.name
