"""The offline demo brain's compaction summaries: it answers `prompts.SUMMARY_MARKER` requests
with the summary by rule (`shell.lifecycle.rule_summary`), the same one compaction falls back on.
The demo only has the request's text, so it reads the transcript and the previous summary back
out of it (`prompts.summary_prompt` writes them between tags)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from shell import prompts
from shell.demo.messages import field, message_text
from shell.lifecycle.rule_summary import summarise

_RETRY_NOTE = re.compile(
    r"Your previous summary failed a quality check:.*?fixing these problems\.", re.DOTALL
)


def summary_request(messages: Sequence[Any]) -> str:
    """The summariser's request among `messages`: the last user message holding a
    <conversation>, or all user messages joined when none does."""
    users = [message_text(m) for m in messages if field(m, "role") == "user"]
    with_conversation = [u for u in users if "<conversation>" in u]
    return with_conversation[-1] if with_conversation else "\n\n".join(users)


def summary_reply(messages: Sequence[Any]) -> str:
    """The summary the summariser's request among `messages` asks for."""
    request = summary_request(messages)
    transcript = _between(request, "conversation")
    if transcript is None:  # no tags: the request itself is what to summarise
        transcript = _RETRY_NOTE.sub("", request.replace(prompts.SUMMARY_MARKER, ""))
    return summarise(transcript, _between(request, "previous-summary"))


def _between(text: str, tag: str) -> str | None:
    match = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.DOTALL)
    return match.group(1) if match else None
