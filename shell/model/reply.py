"""A model's answer: its text, tool calls, finish reason and usage, assembled from streamed
chunks or from a whole response."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from shell.messages import field as read_field


@dataclass(frozen=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: str
    """Raw JSON text as the model sent it; possibly malformed (the tool layer reports that)."""
    from_text: bool = False
    """Written in the reply's text, read back as a call (`shell.model.textcalls`)."""
    by_cairn: bool = False
    """Made by Cairn for the model, not by it (`shell.loop.assist`)."""


@dataclass(frozen=True)
class ModelReply:
    text: str
    tool_calls: list[ToolCallRequest]
    finish_reason: str
    prompt_tokens: int = 0
    """Provider-reported usage; 0 when the provider said nothing."""
    completion_tokens: int = 0

    def message(self) -> dict[str, Any]:
        """The reply as an OpenAI-format assistant message for the transcript."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        return message


@dataclass
class ReplyBuilder:
    """Assembles streamed chunks: text pieces, tool calls by index, finish reason, usage."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def yielded_text(self) -> bool:
        return any(self.text)

    def add(self, chunk: Any) -> str:
        """Take one chunk in; return its text (empty when it carried none)."""
        if usage := getattr(chunk, "usage", None):
            self.prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
            self.completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        piece = ""
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) not in (0, None):
                continue
            self.finish_reason = getattr(choice, "finish_reason", None) or self.finish_reason
            delta = getattr(choice, "delta", None)
            piece += read_field(delta, "content") or ""
            for call in read_field(delta, "tool_calls") or []:
                self._add_call(call)
        self.text.append(piece)
        return piece

    def forget_usage(self) -> None:
        """The usage seen was not the provider's (litellm makes one up for a stream that sent
        none, from a count of the messages alone): the reply says the provider said nothing."""
        self.prompt_tokens = self.completion_tokens = 0

    def add_response(self, response: Any) -> bool:
        """Take a whole (not streamed) response in; False when it held no choice."""
        choices = [c for c in getattr(response, "choices", None) or [] if c.index in (0, None)]
        if not choices:
            return False
        self.add(_as_chunk(response, choices[0]))
        return True

    def _add_call(self, call: Any) -> None:
        index, call_id = read_field(call, "index"), read_field(call, "id")
        if index is None:  # some providers omit the index: match by id, else continue the last
            by_id = {c["id"]: i for i, c in self.calls.items() if c["id"]}
            last = max(self.calls, default=0)
            index = by_id.get(call_id, len(self.calls) if call_id and self.calls else last)
        entry = self.calls.setdefault(index, {"id": "", "name": "", "arguments": []})
        function = read_field(call, "function")
        if call_id:
            entry["id"] = call_id
        if name := read_field(function, "name"):
            entry["name"] = name
        if arguments := read_field(function, "arguments"):
            entry["arguments"].append(arguments)

    def build(self) -> ModelReply:
        tool_calls = [
            ToolCallRequest(
                id=c["id"] or f"call_{n}", name=c["name"], arguments="".join(c["arguments"])
            )
            for n, (_, c) in enumerate(sorted(self.calls.items()), start=1)
            if c["name"] or c["arguments"]
        ]
        finish = self.finish_reason or ("tool_calls" if tool_calls else "stop")
        return ModelReply(
            text="".join(self.text),
            tool_calls=tool_calls,
            finish_reason=finish,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
        )


def _as_chunk(response: Any, choice: Any) -> Any:
    """A whole response's choice in the shape of one streamed chunk (its message as the delta;
    tool calls get their list index, which whole responses leave out)."""
    message = getattr(choice, "message", None)
    calls = [
        {"index": i, "id": read_field(c, "id"), "function": read_field(c, "function")}
        for i, c in enumerate(read_field(message, "tool_calls") or [])
    ]
    delta = {"content": read_field(message, "content"), "tool_calls": calls}
    finished = SimpleNamespace(index=0, finish_reason=choice.finish_reason, delta=delta)
    return SimpleNamespace(usage=getattr(response, "usage", None), choices=[finished])


def provider_counted(response: Any) -> bool:
    """Whether a finished stream's usage came from the provider.

    Asked for usage (`stream_options.include_usage`), litellm's stream wrapper ends every
    stream with a usage chunk; when the provider sent none (llama.cpp's server) it estimates
    the prompt from the messages alone, tools left out (608 tokens for a 1,603-token prompt).
    The wrapper keeps, in `chunks`, a copy of each provider chunk that carried usage."""
    chunks = getattr(response, "chunks", None)
    if chunks is None:  # not litellm's wrapper: what it sent is all there is
        return True
    return any(getattr(chunk, "usage", None) is not None for chunk in chunks)


def unfinished(response: Any) -> bool:
    """Whether a stream that ended without an error never said it was finished.

    litellm's stream wrapper makes up a "stop" for such a stream, so the reply cannot tell;
    the wrapper's `received_finish_reason` (None) still does.
    """
    return getattr(response, "received_finish_reason", "unknown") is None
