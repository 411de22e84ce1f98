from __future__ import annotations

from pathlib import Path

import pytest

from shell.config import DEMO_MODEL, MIN_CONTEXT_WINDOW, ConfigError, load_settings
from shell.context.budget import ContextBudget


def test_defaults_use_the_demo_brain_without_keys(tmp_path: Path) -> None:
    settings = load_settings(env={}, file=tmp_path / "missing.toml")
    assert settings.model == DEMO_MODEL
    assert settings.demo
    assert settings.workspace.name == "workspace"


@pytest.mark.parametrize(
    ("env", "model"),
    [
        ({"OPENAI_API_KEY": "sk-x"}, "gpt-4o-mini"),
        ({"ANTHROPIC_API_KEY": "sk-ant-x"}, "claude-haiku-4-5"),
        ({"GEMINI_API_KEY": "g"}, "gemini/gemini-2.5-flash"),
        ({"DEEPSEEK_API_KEY": "d", "ANTHROPIC_API_KEY": "a"}, "claude-haiku-4-5"),
    ],
)
def test_a_provider_key_selects_a_model_of_that_provider(
    tmp_path: Path, env: dict[str, str], model: str
) -> None:
    settings = load_settings(env=env, file=tmp_path / "missing.toml")
    assert settings.model == model and not settings.demo


def test_precedence_file_then_env_then_flags(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('model = "from-file"\nmax_tool_rounds = 3\nworkspace = "/tmp/from-file"\n')
    env = {"CAIRN_MODEL": "from-env", "CAIRN_CONTEXT_WINDOW": "4096"}
    settings = load_settings({"workspace": tmp_path / "flag"}, env=env, file=config)
    assert settings.model == "from-env"
    assert settings.max_tool_rounds == 3
    assert settings.context_window == 4096
    assert settings.workspace == tmp_path / "flag"


def test_env_workspace(tmp_path: Path) -> None:
    settings = load_settings(env={"CAIRN_WORKSPACE": str(tmp_path)}, file=tmp_path / "none.toml")
    assert settings.workspace == tmp_path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model = ", "not valid TOML"),
        ("colour = 1", "unknown settings"),
        ("max_tool_rounds = 'x'", "not valid"),
    ],
)
def test_bad_config_files_are_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_settings(env={}, file=config)


def test_tiny_context_window_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="too small"):
        load_settings({"context_window": 100}, env={}, file=tmp_path / "none.toml")


def test_the_smallest_window_settings_take_is_the_smallest_a_budget_is_made_for(
    tmp_path: Path,
) -> None:
    settings = load_settings(
        {"context_window": MIN_CONTEXT_WINDOW}, env={}, file=tmp_path / "none.toml"
    )
    assert ContextBudget(settings.context_window or 0).window == MIN_CONTEXT_WINDOW
    with pytest.raises(ConfigError, match=f"minimum {MIN_CONTEXT_WINDOW}"):
        load_settings({"context_window": MIN_CONTEXT_WINDOW - 1}, env={}, file=tmp_path / "none")
    with pytest.raises(ValueError, match=f"minimum {MIN_CONTEXT_WINDOW}"):
        ContextBudget(MIN_CONTEXT_WINDOW - 1)


@pytest.mark.parametrize("where", ["file", "env"])
def test_a_project_that_is_not_a_folder_is_refused_wherever_it_is_set(
    tmp_path: Path, where: str
) -> None:
    missing = tmp_path / "no-such-project"
    config = tmp_path / "config.toml"
    config.write_text(f"project = {str(missing)!r}\n" if where == "file" else "")
    env = {"CAIRN_PROJECT": str(missing)} if where == "env" else {}
    with pytest.raises(ConfigError, match=f"{missing} is not a folder"):
        load_settings(env=env, file=config)
    (tmp_path / "project").mkdir()
    env = {"CAIRN_PROJECT": str(tmp_path / "project" / ".." / "project")}
    assert load_settings(env=env, file=tmp_path / "none").project == tmp_path / "project"


def test_secrets_takes_only_a_policy_the_scanner_knows(tmp_path: Path) -> None:
    from shell.secrets.detect import POLICIES

    for policy in POLICIES:
        assert load_settings({"secrets": policy}, env={}, file=tmp_path / "none").secrets == policy
    with pytest.raises(ConfigError, match="must be redact, block or off"):
        load_settings({"secrets": "warn"}, env={}, file=tmp_path / "none")


def test_dreaming_is_a_table_in_the_file_and_env_vars_by_name(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[dreaming]\nmin_score = 0.6\nidle_minutes = 20\n")
    settings = load_settings(env={"CAIRN_DREAMING_LIMIT": "4"}, file=config)
    assert (settings.dreaming.min_score, settings.dreaming.idle_minutes) == (0.6, 20.0)
    assert settings.dreaming.limit == 4 and settings.dreaming.enabled
    assert not load_settings(env={"CAIRN_DREAMING": "off"}, file=config).dreaming.enabled
    config.write_text("dreaming = false\n")
    off = load_settings(env={"CAIRN_DREAMING_LIMIT": "4"}, file=config).dreaming
    assert (off.enabled, off.limit) == (False, 4)


def test_an_unknown_dreaming_setting_is_a_clear_error(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[dreaming]\nminscore = 0.6\n")
    with pytest.raises(ConfigError, match=r"\[dreaming\]: unknown settings \['minscore'\]"):
        load_settings(env={}, file=config)
