"""Themes: the built-in palettes define every app variable; user TOML themes load or say why not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.ui.conftest import MakeApp, started
from themes import APP_VARIABLE_DEFAULTS, BUILTIN_THEMES
from themes.user import load_user_themes

GOOD = """
name = "moss"
primary = "#83a598"
background = "#282828"
dark = true

[variables]
meter-ok = "#b8bb26"
"""


def test_builtin_themes_have_a_dark_default_and_a_light_one() -> None:
    assert BUILTIN_THEMES["cairn"].dark and not BUILTIN_THEMES["cairn-light"].dark
    light = BUILTIN_THEMES["cairn-light"].variables
    assert set(APP_VARIABLE_DEFAULTS) <= set(light), "the light theme overrides every app colour"


def test_user_themes_load_and_bad_files_are_reported(tmp_path: Path) -> None:
    (tmp_path / "moss.toml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "broken.toml").write_text("name = [", encoding="utf-8")
    (tmp_path / "nocolour.toml").write_text('name = "x"\nprimary = "chartreuse-ish"\n')
    (tmp_path / "noprimary.toml").write_text('name = "y"\n')
    themes, errors = load_user_themes(tmp_path)
    assert list(themes) == ["moss"]
    assert themes["moss"].variables == {"meter-ok": "#b8bb26"}
    assert len(errors) == 3
    assert any(e.startswith("broken.toml") for e in errors)
    assert any("is not a colour" in e for e in errors)
    assert any("primary is required" in e for e in errors)
    assert load_user_themes(tmp_path / "missing") == ({}, [])


async def test_user_themes_join_the_theme_cycle(demo_app: MakeApp, tmp_path: Path) -> None:
    theme_dir = tmp_path / "themes"
    theme_dir.mkdir()
    (theme_dir / "moss.toml").write_text(GOOD, encoding="utf-8")
    app = demo_app(theme_dir=theme_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        seen = [app.theme]
        variables = []
        for _ in range(3):
            await pilot.press("ctrl+t")
            seen.append(app.theme)
            variables.append(app.get_css_variables()["meter-ok"])
        assert seen == ["cairn", "cairn-light", "moss", "cairn"]
        assert variables[1] == "#b8bb26", "a user theme can override an app variable"


def test_the_tui_and_its_fakes_import_nothing_heavy() -> None:
    code = (
        "import sys, widgets.app, widgets.replay, tests.ui.scenarios, themes.user\n"
        "names = ('litellm', 'lancedb', 'fastembed', 'onnxruntime')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
