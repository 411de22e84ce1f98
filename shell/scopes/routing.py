"""Which lines of a flush are about the user, and so go to the global memory.

The rule: a line is about the user when the user is its subject (after its list marker it
begins "User", "The user", "User's", "I", "I'm", "My" or "Me"), it cites no project file
(`path#Lx`) and it holds no secret. Everything else stays in the project: a project fact
kept in one project costs a search in another, a project fact in the global memory is a leak.
"""

from __future__ import annotations

import re

from shell.scopes.crossing import holds_secret

_MARKER = re.compile(r"^\s*(?:[-*+]\s+|\d{1,9}[.)]\s+)?(?:\[[ xX]\]\s+)?")
_ABOUT_USER = re.compile(r"(?:the\s+)?user(?:'s)?\b|i\b|i'm\b|my\b|me\b", re.IGNORECASE)
_CITES_FILE = re.compile(r"\S#L\d")


def about_user(line: str) -> bool:
    """Whether `line` is a fact about the user by the rule above."""
    marker = _MARKER.match(line)
    body = line[marker.end() :] if marker else line
    if not _ABOUT_USER.match(body) or _CITES_FILE.search(body):
        return False
    return not holds_secret(line)


def split_user_lines(text: str) -> tuple[str, str]:
    """(the project's lines, the user's lines) of `text`, each in its order."""
    project: list[str] = []
    user: list[str] = []
    for line in text.split("\n"):
        (user if line.strip() and about_user(line) else project).append(line)
    return "\n".join(project), "\n".join(user)
