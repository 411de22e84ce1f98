"""The base of every event: a frozen dataclass with a snake_case `type` name."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar, dataclass_transform

_T = TypeVar("_T")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def frozen(cls: type[_T]) -> type[_T]:
    """`@dataclass(frozen=True)`, made faster. The events' ~75 classes were a third of Cairn's
    imports before the TUI's first frame, most of it compiling the six methods a frozen
    dataclass generates for each. This one compiles three (`__init__` and the frozen
    `__setattr__`, `__delattr__`): importing the events took 31 ms instead of 56. `__eq__`,
    `__hash__` and `__repr__` are shared, and behave as the generated ones do (equal when of
    the same class with equal fields)."""
    made = dataclass(frozen=True, eq=False, repr=False)(cls)
    names = tuple(f.name for f in fields(made))  # type: ignore[arg-type]
    values: Callable[[Any], Any] = operator.attrgetter(*names) if names else lambda _: ()

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(values(self) == values(other))

    def __hash__(self: Any) -> int:
        return hash(values(self))

    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"

    made.__eq__ = __eq__  # type: ignore[method-assign]
    made.__hash__ = __hash__  # type: ignore[method-assign]
    made.__repr__ = __repr__  # type: ignore[method-assign]
    return made


@frozen
class BaseEvent:
    type: ClassVar[str] = ""
