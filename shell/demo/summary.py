"""The offline demo brain's compaction summaries: it answers `prompts.SUMMARY_MARKER` requests
with the summary by rule (`shell.lifecycle.rule_summary`), the same one compaction falls back on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shell.demo.messages import field, message_text
from shell.lifecycle.rule_summary import summarise


def summary_request(messages: Sequence[Any]) -> str:
    """The summariser's request among `messages`: the last user message holding a
    <conversation>, or all user messages joined when none does."""
    users = [message_text(m) for m in messages if field(m, "role") == "user"]
    with_conversation = [u for u in users if "<conversation>" in u]
    return with_conversation[-1] if with_conversation else "\n\n".join(users)


def summary_reply(messages: Sequence[Any]) -> str:
    """The summary the summariser's request among `messages` asks for."""
    return summarise(summary_request(messages))
