"""A value as `json.loads` gives it, made into the typed value a field's hint names: nested
dataclasses, lists, dicts, optionals and literals (a literal outside its choices refused)."""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, Literal


def decode(hint: Any, value: Any) -> Any:
    """`value` (as `json.loads` gives it) made into `hint`: dataclasses, lists, dicts,
    optionals and literals; anything else is taken as it is."""
    if hint is Any or hint in _PLAIN:  # most fields: a resumed view decodes thousands
        return value
    origin, args = _shape(hint)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type) and isinstance(value, dict):
        hints = _hints(hint)
        return hint(**{name: decode(hints.get(name, Any), item) for name, item in value.items()})
    if origin is list and isinstance(value, list):
        return [decode(args[0], item) for item in value]
    if origin is dict and isinstance(value, dict):
        return {key: decode(args[1], item) for key, item in value.items()}
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        return decode(next(a for a in args if a is not type(None)), value)
    if origin is Literal and value not in args:
        raise ValueError(f"{value!r} is not one of {', '.join(map(repr, args))}")
    return value


_PLAIN = frozenset({str, int, float, bool})


@functools.cache
def _shape(hint: Any) -> tuple[Any, tuple[Any, ...]]:
    return typing.get_origin(hint), typing.get_args(hint)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)
