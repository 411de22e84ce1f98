"""The project folder citations are hashed and checked against: the settings' project, with
Cairn's own files reserved as they are from the project tools (a hash of a line of the config
would tell its secrets one guess at a time)."""

from __future__ import annotations

from shell.config import Settings
from shell.memory.citations.stamp import CitationStamper
from shell.tools.project.cairn_files import reserved_files
from shell.tools.project.root import ProjectRoot


def project_root(settings: Settings) -> ProjectRoot | None:
    """The project of `settings`; None when no project is open (or its folder is gone)."""
    if settings.project is None:
        return None
    try:
        return ProjectRoot(settings.project, reserved=reserved_files(settings))
    except OSError:
        return None


def citation_stamper(settings: Settings) -> CitationStamper:
    """What the write door hashes citations with, for `settings`' project."""
    return CitationStamper(project_root(settings))
