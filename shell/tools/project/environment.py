"""The environment a command gets: an allow-list, never Cairn's own.

Cairn's environment holds what a person keeps there: provider keys, but also `GITHUB_TOKEN`,
`PGPASSWORD`, `VAULT_TOKEN`, a cloud's session. No list of suffixes catches them all, so a
command gets only the variables known to be harmless (`SAFE_NAMES`, the `LC_*` ones), those the
`[tools] pass_env` setting names, and `NO_TERMINAL`; everything else stays out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

SAFE_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "TZ",
        "TMPDIR",
        "COLUMNS",
        "LINES",
        "VIRTUAL_ENV",
    }
)
"""Variables a command may see: where programs are, who runs them, how text is printed."""
SAFE_PREFIXES = ("LC_",)
NO_TERMINAL = {"GIT_TERMINAL_PROMPT": "0", "PAGER": "cat", "GIT_PAGER": "cat"}
"""Nothing the command starts waits on a terminal that is not there."""


def is_safe(name: str) -> bool:
    """Whether a variable is passed to every command (`SAFE_NAMES`, `LC_*`)."""
    return name in SAFE_NAMES or name.startswith(SAFE_PREFIXES)


def command_environment(
    environ: Mapping[str, str], pass_env: Sequence[str], cwd: str | None = None
) -> dict[str, str]:
    """What of `environ` a command gets: the safe variables and those named in `pass_env`,
    with no pager nor git prompt waiting on a terminal, and `PWD` set to `cwd` when given."""
    passed = set(pass_env)
    env = {k: v for k, v in environ.items() if is_safe(k) or k in passed}
    if cwd is not None:
        env["PWD"] = cwd
    return env | NO_TERMINAL
