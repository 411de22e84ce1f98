"""The `[tools]` and `[mcp.<name>]` tables of the config, and their environment variables."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shell.config import ConfigError, McpServerSettings, Settings, load_settings


def settings_from(tmp_path: Path, toml: str, env: dict[str, str] | None = None) -> Settings:
    config = tmp_path / "config.toml"
    config.write_text(toml, encoding="utf-8")
    return load_settings({"workspace": tmp_path / "ws"}, env=env or {}, file=config)


def test_tools_and_mcp_tables(tmp_path: Path) -> None:
    settings = settings_from(
        tmp_path,
        '[tools]\nallow = ["run_command:pytest*"]\npass_env = ["OPENAI_API_KEY"]\n'
        '[mcp.time]\ncommand = "mcp-server-time"\nargs = ["--local-timezone", "UTC"]\n'
        '[mcp.docs]\nurl = "http://127.0.0.1:9/mcp"\nheaders = {X-Team = "a"}\n',
    )
    assert settings.tools.allow == ("run_command:pytest*",)
    assert settings.tools.pass_env == ("OPENAI_API_KEY",)
    assert settings.mcp == (
        McpServerSettings("time", command="mcp-server-time", args=("--local-timezone", "UTC")),
        McpServerSettings("docs", url="http://127.0.0.1:9/mcp", headers={"X-Team": "a"}),
    )


def test_environment_adds_to_the_tools_table(tmp_path: Path) -> None:
    settings = settings_from(
        tmp_path,
        "[tools]\ncommand_timeout = 30\n",
        env={"CAIRN_TOOLS_ALLOW": "grep, run_command:make*", "CAIRN_TOOLS_APPROVAL": "yes"},
    )
    assert settings.tools.allow == ("grep", "run_command:make*")
    assert settings.tools.approval == "yes"
    assert settings.tools.command_timeout == 30.0


def test_the_sandbox_settings_from_the_file_and_the_environment(tmp_path: Path) -> None:
    assert not settings_from(tmp_path, "").tools.network
    assert settings_from(tmp_path, "").tools.sandbox == "auto"
    from_file = settings_from(tmp_path, '[tools]\nnetwork = true\nsandbox = "off"\n').tools
    assert from_file.network and from_file.sandbox == "off"
    from_env = settings_from(
        tmp_path, "", env={"CAIRN_TOOLS_NETWORK": "1", "CAIRN_TOOLS_SANDBOX": "off"}
    ).tools
    assert from_env.network and from_env.sandbox == "off"


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[tools]\napproval = "always"\n', "must be ask or yes"),
        ('[tools]\nsandbox = "on"\n', "sandbox 'on' must be auto or off"),
        ("[tools]\nallowed = []\n", "unknown settings ['allowed']"),
        ("[tools]\nallow = [1]\n", "must be a list of strings"),
        ("[mcp.x]\nargs = []\n", "needs either command (stdio) or url (HTTP)"),
        ('[mcp.x]\ncommand = "a"\nurl = "http://b"\n', "needs either command"),
        ('[mcp.x]\ncommand = "a"\nport = 3\n', "unknown settings ['port']"),
        ('mcp = "x"\n', "one table per server"),
        ('[mcp.x]\ncommand = "a"\ncall_timeout = 0\n', "call_timeout and startup_timeout must"),
        ('[mcp.x]\ncommand = "a"\nstartup_timeout = -1\n', "must be over 0"),
    ],
)
def test_bad_tables_say_what_is_wrong(tmp_path: Path, toml: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        settings_from(tmp_path, toml)
