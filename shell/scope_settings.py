"""The `[scopes]` table of the settings (`shell.config` reads it, with the rest)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScopeSettings:
    """Where project memories live and which projects may read each other's: the config's
    `[scopes]` table and `CAIRN_SCOPES_<NAME>`."""

    enabled: bool = True
    """A project folder gets a memory of its own; off: one global memory, as before scopes."""
    projects_dir: str = ""
    """The folder that holds one workspace per project; empty: beside the global workspace,
    `<workspace>-projects/` (`~/.local/share/cairn/workspace-projects/` by default)."""
    share: tuple[str, ...] = ()
    """Project folders whose memories may read each other (one group); empty: nothing
    crosses between projects. The global memory is read in every project either way, and a
    line holding a secret never crosses, whatever this says."""
