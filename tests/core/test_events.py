from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any

import pytest

from shell import events
from shell.events import EVENT_TYPES, from_json, to_json


def _value(hint: Any, name: str) -> Any:
    """A sample value of type `hint`, nested dataclasses, literals and optionals included."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _sample(hint)
    if origin is list:
        return [_value(args[0], name)]
    if origin is dict:
        return {"k": _value(args[1], name)}
    if origin is typing.Literal:
        return args[-1]
    if origin in (typing.Union, types.UnionType):
        return _value(next(a for a in args if a is not type(None)), name)
    if hint is Any:
        return {"path": "MEMORY.md"}
    return {bool: True, int: 7, float: 1.5, str: f"{name}-välue"}[hint]


def _sample(cls: type) -> Any:
    hints = typing.get_type_hints(cls)
    return cls(**{f.name: _value(hints[f.name], f.name) for f in dataclasses.fields(cls)})


@pytest.mark.parametrize("name", sorted(EVENT_TYPES))
def test_every_event_round_trips_through_json(name: str) -> None:
    event = _sample(EVENT_TYPES[name])
    line = to_json(event)
    assert json.loads(line)["type"] == name
    assert from_json(line) == event


def test_type_names_are_unique_snake_case_and_cover_the_union() -> None:
    union = set(typing.get_args(events.Event))
    assert union == set(EVENT_TYPES.values())
    for name in EVENT_TYPES:
        assert name == name.lower() and " " not in name


def test_unknown_type_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown event type"):
        from_json('{"type": "nope"}')


def test_events_are_frozen() -> None:
    event = events.TextDelta(text="hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.text = "changed"  # type: ignore[misc]


def test_events_compare_hash_and_print_as_frozen_dataclasses_do() -> None:
    """`@frozen` shares `__eq__`, `__hash__` and `__repr__` instead of generating them."""
    notice = events.Notice(message="hi")
    assert notice == events.Notice("hi") and hash(notice) == hash(events.Notice("hi"))
    assert notice != events.Notice("hi", level="warning")
    assert {notice, events.Notice("hi")} == {notice}
    assert repr(notice) == "Notice(message='hi', level='info')"

    @dataclasses.dataclass(frozen=True)
    class Twin:
        message: str
        level: str = "info"

    assert notice != Twin("hi") and notice.__eq__(Twin("hi")) is NotImplemented
    with pytest.raises(TypeError, match="unhashable"):  # a list field, as with a dataclass
        hash(events.SecretsRedacted(path="MEMORY.md", kinds=["api key"]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        del notice.message  # type: ignore[misc]


def test_every_event_class_is_in_the_union_the_bridge_matches() -> None:
    assert set(events.EVENT_CLASSES) == set(events.BaseEvent.__subclasses__())
    notice = events.Notice(message="hi")
    assert events.as_event(notice) is notice
    with pytest.raises(TypeError, match=r"object is not in shell\.events\.Event"):
        events.as_event(typing.cast(events.BaseEvent, object()))


def test_nested_values_come_back_typed_and_literals_are_checked() -> None:
    event = _sample(events.ProposalAccepted)
    back = from_json(to_json(event))
    assert isinstance(back, events.ProposalAccepted)
    assert isinstance(back.proposal.sources[0], events.SourceRef)
    assert back.proposal.sources[0].citation.startswith("path-välue#L7")
    line = to_json(event).replace('"kind": "update"', '"kind": "delete"')
    with pytest.raises(ValueError, match="'delete' is not one of 'add', 'update'"):
        from_json(line)


@pytest.mark.parametrize("reason", typing.get_args(events.WriteReason))
def test_a_memory_write_of_every_reason_round_trips(reason: str) -> None:
    written = events.MemoryWritten("MEMORY.md", 12, "abc1234", reason, lines_added=1)  # type: ignore[arg-type]
    assert from_json(to_json(written)) == written
