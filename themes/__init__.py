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

CAIRN_CONTRAST = Theme(
    name="cairn-contrast",
    primary="#00d7ff",
    secondary="#ffff00",
    accent="#ff8700",
    warning="#ffd700",
    error="#ff5f5f",
    success="#00ff5f",
    foreground="#ffffff",
    background="#000000",
    surface="#000000",
    panel="#1c1c1c",
    dark=True,
    variables={
        "meter-track": "#808080",
        "meter-ok": "#00ff5f",
        "meter-near-flush": "#ffd700",
        "meter-over-flush": "#ff5f5f",
        "meter-compacting": "#ff5fff",
        "meter-mark": "#ffffff",
        "tool-card-border": "#ffffff",
        "tool-card-error-border": "#ff5f5f",
        "search-card-border": "#00d7ff",
        "memory-write": "#00ff5f",
        "written-line": "#003f00",
        "flush-block-border": "#ff8700",
        "compaction-block-border": "#ff5fff",
        "reinjection-border": "#00ffff",
        "dream-block-border": "#afafff",
        "user-message-border": "#00d7ff",
        "muted-text": "#d0d0d0",
        "demo-badge": "#ff8700",
        "footer-key-foreground": "#00d7ff",
        "input-selection-background": "#00d7ff 45%",
    },
)
"""Pure black and white bases, saturated accents, no dim text: for low vision, bright rooms and
`NO_COLOR` (which Textual turns into shades of grey, so the bases must carry the contrast)."""

CAIRN_DUSK = Theme(
    name="cairn-dusk",
    primary="#c4a7e7",
    secondary="#9ccfd8",
    accent="#f6c177",
    warning="#f6c177",
    error="#eb6f92",
    success="#a3be8c",
    foreground="#e6e1f0",
    background="#1b1826",
    surface="#221f31",
    panel="#2b2740",
    dark=True,
    variables={
        "meter-track": "#3a3550",
        "meter-ok": "#a3be8c",
        "meter-near-flush": "#f6c177",
        "meter-over-flush": "#eb6f92",
        "meter-compacting": "#c4a7e7",
        "meter-mark": "#e6e1f0",
        "tool-card-border": "#4a4560",
        "tool-card-error-border": "#eb6f92",
        "search-card-border": "#9ccfd8",
        "memory-write": "#a3be8c",
        "written-line": "#2e3a33",
        "flush-block-border": "#f6c177",
        "compaction-block-border": "#c4a7e7",
        "reinjection-border": "#9ccfd8",
        "dream-block-border": "#ebbcba",
        "user-message-border": "#c4a7e7",
        "muted-text": "#8a84a0",
        "demo-badge": "#f6c177",
        "footer-key-foreground": "#c4a7e7",
        "input-selection-background": "#c4a7e7 35%",
    },
)
"""A soft violet dark, warm accents: easier on the eyes at night than the default."""

BUILTIN_THEMES: dict[str, Theme] = {
    theme.name: theme for theme in (CAIRN_DARK, CAIRN_LIGHT, CAIRN_CONTRAST, CAIRN_DUSK)
}
"""Cairn's own themes by name, in the order ctrl+t cycles them; "cairn" is the default."""

NO_COLOR_THEME = CAIRN_CONTRAST.name
"""The theme a start under `NO_COLOR` uses (Textual greys every colour then)."""

DEFAULT_THEME = CAIRN_DARK.name
