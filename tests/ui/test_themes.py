"""Themes: the built-in palettes define every app variable; user TOML themes load or say why not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from textual.command import CommandList

from shell.build import build_agent
from tests.ui.conftest import MakeApp, demo_settings, started, until
from themes import APP_VARIABLE_DEFAULTS, BUILTIN_THEMES
from themes.user import load_user_themes
from widgets.app import CairnApp
from widgets.theme_choice import STATE_FILE, remembered_theme

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
    assert list(BUILTIN_THEMES) == ["cairn", "cairn-light", "cairn-contrast", "cairn-dusk"]
    for name in ("cairn-light", "cairn-contrast", "cairn-dusk"):
        variables = BUILTIN_THEMES[name].variables
        assert set(APP_VARIABLE_DEFAULTS) <= set(variables), f"{name} sets every app colour"
    contrast = BUILTIN_THEMES["cairn-contrast"]
    assert (contrast.background, contrast.foreground) == ("#000000", "#ffffff")


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
        for _ in range(5):
            await pilot.press("ctrl+t")
            seen.append(app.theme)
            variables.append(app.get_css_variables()["meter-ok"])
        assert seen == ["cairn", "cairn-light", "cairn-contrast", "cairn-dusk", "moss", "cairn"]
        assert variables[3] == "#b8bb26", "a user theme can override an app variable"


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


def app_remembering(workspace: Path, config_dir: Path) -> CairnApp:
    """The demo app whose chosen theme is kept in `config_dir` (`demo_app` set the folder)."""
    agent = build_agent(demo_settings(Path(workspace.name)), index_in_background=False)
    return CairnApp(agent, config_dir=config_dir)


async def test_a_theme_chosen_in_the_palette_is_said_and_remembered(
    demo_app: MakeApp, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    config = tmp_path / "config"
    app = app_remembering(workspace, config)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        assert app.theme == "cairn"
        await pilot.press("ctrl+p", *"Theme: cairn-dusk")
        await until(pilot, lambda: bool(app.screen.query(CommandList).first().option_count))
        await pilot.press("enter")
        await until(pilot, lambda: app.theme == "cairn-dusk")
        await until(
            pilot, lambda: any(n.message == "theme: cairn-dusk" for n in app._notifications)
        )
    assert remembered_theme(config) == "cairn-dusk"
    assert 'theme = "cairn-dusk"' in (config / STATE_FILE).read_text(encoding="utf-8")

    again = app_remembering(workspace, config)
    async with again.run_test(size=(120, 40)) as pilot:
        assert again.theme == "cairn-dusk"
        await pilot.press("ctrl+t")
        await until(pilot, lambda: remembered_theme(config) == "cairn")


async def test_no_color_starts_on_the_high_contrast_theme(
    demo_app: MakeApp, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / STATE_FILE).write_text('theme = "cairn-light"\n', encoding="utf-8")
    monkeypatch.setenv("NO_COLOR", "1")
    app = app_remembering(workspace, config)
    async with app.run_test(size=(120, 40)):
        assert app.theme == "cairn-contrast" and app.no_color  # Textual greys the colours too
    assert remembered_theme(config) == "cairn-light", "NO_COLOR does not forget the choice"
    monkeypatch.setenv("NO_COLOR", "")
    assert app_remembering(workspace, config).theme == "cairn-light"
