"""Cairn's own files, which the project tools never reach even when the project holds them.

`cd ~; cairn` is the usual start, and then the project folder holds Cairn's config and state. A
write there would outlast the approval that let it through: a config with `approval = "yes"` and
an MCP server whose command is the model's own runs at the next start, allowed everything. So:

- the config file (`$CAIRN_CONFIG`'s, and the platform's, which a start without it reads) and the
  platform's config folder (themes, what the TUI remembers) are neither read nor written: the
  config may hold API keys;
- the state folder (`<workspace>/.cairn`: sessions, the index, kept outputs, MCP logs) is
  neither read nor written: sessions hold whole conversations, secrets pasted in included;
- the memory workspace is read, as `memory_get` reads it, but not written: memory changes only
  through the memory tools, which commit every write and apply the secrets policy;
- git's global config (`$GIT_CONFIG_GLOBAL`, `~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`) is
  read but not written: Cairn's own git commands read it, and a command in it
  (`core.fsmonitor`, `core.sshCommand`) would run at the next memory commit or push, unasked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from shell.config import Settings, config_file, config_path, default_workspace
from shell.tools.project.root import Reserved

_CONFIG = "Cairn's config file (it may hold API keys, and it says what runs without asking)"
_STATE = "in Cairn's state folder (sessions, the index, kept outputs)"
_GIT_CONFIG = "git's global config, which Cairn's own git commands read"


def reserved_files(settings: Settings, env: Mapping[str, str] | None = None) -> list[Reserved]:
    """Cairn's files that no project tool reads or writes, for `settings` and `env`."""
    env = os.environ if env is None else env
    in_use = config_path(env)
    platform = config_file()
    found = [
        Reserved(in_use, _CONFIG),
        Reserved(platform, _CONFIG),
        Reserved(in_use.parent / "state.toml", "what Cairn's TUI remembers (state.toml)"),
        Reserved(platform.parent, "in Cairn's config folder (its config, themes and state)"),
        Reserved(settings.state_dir, _STATE),
    ]
    if (default := default_workspace()) != settings.workspace:
        found.append(Reserved(default / ".cairn", _STATE))
    return found + [Reserved(path, _GIT_CONFIG, readable=True) for path in _git_configs(env)]


def _git_configs(env: Mapping[str, str]) -> list[Path]:
    home = Path(env.get("HOME") or Path.home())
    xdg = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    found = [home / ".gitconfig", xdg / "git" / "config"]
    if named := env.get("GIT_CONFIG_GLOBAL"):
        found.append(Path(named).expanduser())
    return found


def memory_folders(settings: Settings) -> list[Path]:
    """The memory workspaces: read as memory_get reads them, written only by the memory
    tools (the default one too, which another start may use)."""
    return list(dict.fromkeys([settings.workspace, default_workspace()]))
