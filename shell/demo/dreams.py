"""The offline demo brain's answer to dreaming's distilling call: each candidate distilled by
rule (`shell.dreaming.distill.by_rule`, an update's `now` as its text), as the JSON the call
asks for, so the whole dreaming
cycle runs offline and the same notes always give the same proposals."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from shell import prompts
from shell.demo.messages import last_user_text


def dream_reply(messages: Sequence[Any]) -> str:
    from shell.dreaming.distill import Draft, by_rule
    from shell.events import SourceRef

    request = last_user_text(messages)
    listing = request.split("Candidates:", 1)[-1] if prompts.DREAM_MARKER in request else "[]"
    try:
        candidates = json.loads(listing)
    except ValueError:
        candidates = []
    proposals = [
        {
            "id": str(item["id"]),
            "text": by_rule(
                Draft(
                    str(item["id"]),
                    "add",
                    str(item["text"]),
                    [SourceRef("", 0, 0, _date(item.get("date")))],
                    fact=str(item["now"]) if "now" in item else None,
                )
            ),
        }
        for item in candidates
        if isinstance(item, dict) and "id" in item and "text" in item
    ]
    return json.dumps({"proposals": proposals}, ensure_ascii=False)


def _date(value: object) -> str | None:
    """The candidate's date when it is one (the request is the model's to read, so checked)."""
    from datetime import date

    try:
        return date.fromisoformat(str(value)).isoformat()
    except ValueError:
        return None
