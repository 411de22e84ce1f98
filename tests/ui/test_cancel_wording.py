"""The words of a cancel receipt follow what had happened: a cancel before any tool ran does not
say a tool finished."""

from __future__ import annotations

from shell import events as ev
from widgets.format import cancel_receipt


def test_a_cancel_before_any_tool_ran_says_so() -> None:
    event = ev.TurnCancelled(turn=3, stopped_during="tool_calls", tools_stopped=["memory_search"])
    assert cancel_receipt(event) == "turn cancelled: before any tool ran; not run: memory_search"


def test_a_cancel_after_a_tool_says_it_finished_first() -> None:
    event = ev.TurnCancelled(
        turn=3, stopped_during="tool_calls", tools_finished=["memory_get"], tools_stopped=["x"]
    )
    assert cancel_receipt(event).startswith("turn cancelled: the tool under way finished first;")
