from __future__ import annotations

import dataclasses
import json
import typing

import pytest

from shell import events
from shell.events import EVENT_TYPES, from_json, to_json


def _sample(cls: type) -> events.BaseEvent:
    hints = typing.get_type_hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        hint = str(hints[f.name])
        if "dict" in hint:
            values[f.name] = {"k": 1}
        elif "list" in hint:
            values[f.name] = [{"path": "MEMORY.md"}] if "Any" in hint else ["a"]
        elif "bool" in hint:
            values[f.name] = True
        elif "int" in hint:
            values[f.name] = 7
        elif "float" in hint:
            values[f.name] = 1.5
        else:
            values[f.name] = f"{f.name}-välue"
    return cls(**values)


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


def test_every_event_class_is_in_the_union_the_bridge_matches() -> None:
    assert set(events.EVENT_CLASSES) == set(events.BaseEvent.__subclasses__())
    notice = events.Notice(message="hi")
    assert events.as_event(notice) is notice
    with pytest.raises(TypeError, match=r"object is not in shell\.events\.Event"):
        events.as_event(typing.cast(events.BaseEvent, object()))
