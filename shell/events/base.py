"""The base of every event: a frozen dataclass with a snake_case `type` name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class BaseEvent:
    type: ClassVar[str] = ""
