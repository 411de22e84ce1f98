"""Which memories a session has: the global one, its project's, and what the setting shares.

A project's memory is found from the project folder's real path alone: `<projects dir>/
<folder name>-<12 hex of sha256(realpath)>/`. Not inside the project folder: a memory there
would be committed with the user's code, pushed with it, and read by every other tool that
opens the folder (Codex #23658 read one project's notes in another). The real path makes a
symlink to a folder the folder itself, so two names of one project share one memory and two
projects never do.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from shell.config import ConfigError, Settings

ScopeKind = Literal["global", "project"]
WRITE_SCOPES = ("project", "user")
"""What the model may name as a write's scope: its project, or the user (global)."""
GLOBAL: Literal["global"] = "global"

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Scope:
    """One memory: a full workspace. `label` is what every hit and write shows: "global", or
    "project:<folder name>"."""

    kind: ScopeKind
    label: str
    workspace: Path
    folder: Path | None = None
    """The project folder (real path) of a project scope."""


@dataclass(frozen=True)
class Scopes:
    """The memories of one session: `own` takes its writes (the project's, else the global
    one), `user` is the global memory, `shared` the other projects the setting lets it read."""

    own: Scope
    user: Scope
    shared: tuple[Scope, ...] = ()

    @property
    def project(self) -> Scope | None:
        return self.own if self.own.kind == "project" else None

    @property
    def readable(self) -> tuple[Scope, ...]:
        """Every memory this session reads, its own first."""
        return (self.own, *((self.user,) if self.project else ()), *self.shared)

    def crosses(self, scope: Scope) -> bool:
        """Whether what `scope` holds comes to this session from another scope (then a line
        holding a secret is dropped on the way)."""
        return scope != self.own

    def for_write(self, name: str | None) -> Scope:
        """The scope a write or a read names: "user" or "global" (the global memory), "project"
        (default) or the label its hits show ("project:heron").

        Raises:
            ScopeError: anything else (a path, another project's name).
        """
        if name in (None, "", "project", self.own.label):
            return self.own
        if name in ("user", GLOBAL):
            return self.user
        raise ScopeError(f"scope must be one of {', '.join(WRITE_SCOPES)}, not {name!r}")


class ScopeError(ValueError):
    """A scope that is not one of the session's."""


def projects_root(settings: Settings) -> Path:
    """The folder holding the project memories: `[scopes] projects_dir`, else beside the global
    workspace (`<workspace>-projects`), so a test's or a custom workspace keeps its projects
    with it."""
    if settings.scopes.projects_dir:
        return Path(settings.scopes.projects_dir).expanduser().resolve()
    workspace = settings.workspace.expanduser().resolve()
    return workspace.with_name(f"{workspace.name}-projects")


def project_scope(settings: Settings, folder: Path) -> Scope:
    """The memory of the project in `folder`, by its real path.

    Raises:
        ConfigError: the place would be inside the global workspace, or is a symlink (planted
            to point one project's memory at another's).
    """
    real = folder.resolve()
    digest = hashlib.sha256(str(real).encode("utf-8")).hexdigest()[:12]
    name = _UNSAFE.sub("-", real.name).strip(".-")[:40] or "project"
    place = projects_root(settings) / f"{name}-{digest}"
    if place.is_symlink():
        raise ConfigError(f"the project memory {place} is a symlink; remove it")
    if place.resolve().is_relative_to(settings.workspace.expanduser().resolve()):
        raise ConfigError(
            f"the project memory {place} would be inside the global workspace: set [scopes] "
            "projects_dir elsewhere"
        )
    return Scope("project", f"project:{name}", place, real)


def session_scopes(settings: Settings) -> Scopes:
    """The scopes a session with `settings` has; with no project open (or scopes off), the
    global memory alone, as before scopes."""
    user = Scope(GLOBAL, GLOBAL, settings.workspace)
    if settings.project is None or not settings.scopes.enabled:
        return Scopes(own=user, user=user)
    own = project_scope(settings, settings.project)
    return Scopes(own=own, user=user, shared=_shared(settings, own))


def _shared(settings: Settings, own: Scope) -> tuple[Scope, ...]:
    """The projects of `[scopes] share` other than `own`, when `own` is one of them; only those
    whose memory exists (reading never makes one)."""
    group = {Path(folder).expanduser().resolve() for folder in settings.scopes.share}
    if own.folder not in group:
        return ()
    others = sorted(group - {own.folder})
    scopes = (project_scope(settings, folder) for folder in others)
    return tuple(scope for scope in scopes if (scope.workspace / ".git").is_dir())


def scope_settings(settings: Settings, scope: Scope) -> Settings:
    """`settings` for one scope's workspace: its files, index and dream state."""
    return replace(settings, workspace=scope.workspace)
