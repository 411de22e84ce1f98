"""The project folder citations are hashed and checked against: the settings' project, with
Cairn's own files reserved as they are from the project tools. A hash of a line tells whoever
reads it whether a guess at the line is right, so nothing the model may not read is hashed: not
Cairn's config, and no project at all when the project tools are off."""

from __future__ import annotations

from shell.config import Settings
from shell.memory.citations.stamp import CitationStamper
from shell.tools.project.cairn_files import reserved_files
from shell.tools.project.root import ProjectRoot


def project_root(settings: Settings) -> ProjectRoot | None:
    """The project of `settings`; None when no project is open, its folder is gone, or the
    project tools are off (`[tools] project = "off"`)."""
    if settings.project is None or settings.tools.project == "off":
        return None
    try:
        return ProjectRoot(settings.project, reserved=reserved_files(settings))
    except OSError:
        return None


def citation_stamper(settings: Settings) -> CitationStamper:
    """What the write door hashes citations with, for `settings`' project."""
    return CitationStamper(project_root(settings))
