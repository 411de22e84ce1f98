"""Each call of `bench.real_server`: Cairn's projection of its prompt by the call's shape (a
turn, a flush, the summariser: each has its own calibration) beside the server's own count, asked
by sending the same request again whole, not streamed, for one token."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from shell.agent import Agent
from shell.model import LLM
from shell.model.loader import prepare_litellm
from shell.prompts import FLUSH_MARKER, SUMMARY_MARKER


@dataclass(frozen=True)
class Call:
    """One call's prompt: Cairn's projection of it and the server's own count."""

    shape: str
    """"turn", "flush" or "summariser": each has its own calibration."""
    projected: int
    server: int
    calibrated: bool
    """Whether the shape's calibration had learned from a report before this call."""


Calls = list[Call]


class ProbedLLM(LLM):
    """The agent's model, asking the server after each call how many tokens its prompt was."""

    def __init__(self, llm: LLM, agent: Agent) -> None:
        super().__init__(
            llm.model, api_base=llm.api_base, api_key=llm.api_key, ask_count=llm.ask_count
        )
        self.max_attempts, self.timeout = llm.max_attempts, llm.timeout
        self.agent = agent
        self.calls: Calls = []

    async def stream(  # type: ignore[override]
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **kw: Any
    ) -> AsyncIterator[Any]:
        builder = self.agent.request_builder
        counted = builder.counter.messages(messages) + builder.counter.tools(tools or [])
        system = str(messages[0].get("content", ""))
        shape = "summariser" if system.startswith(SUMMARY_MARKER) else "turn"
        shape = "flush" if FLUSH_MARKER in system else shape
        kept = {"summariser": builder.summaries, "flush": builder.flushes}.get(shape, builder.turns)
        calibrated = kept.calibration.calibrated  # an uncalibrated flush goes by the turns'
        calibration = (
            kept.calibration if calibrated or shape != "flush" else builder.turns.calibration
        )
        projected = calibration.project(counted)
        async for item in super().stream(messages, tools, **kw):
            yield item
        request = {**self._request(messages, tools), "stream": False, "stream_options": None}
        probe = await prepare_litellm().acompletion(**request, max_tokens=1)
        self.calls.append(Call(shape, projected, int(probe.usage.prompt_tokens), calibrated))


def _off_by(call: Call) -> float:
    projected, server = call.projected, call.server
    return round(max(projected / server, server / projected), 3) if projected else 0.0


def projections(calls: Calls) -> dict[str, Any]:
    """How far each shape's projections were from the server's count, once calibrated, and
    the lowest projected ÷ server (below 1 the thresholds fire late: the risky side)."""
    calibrated = [call for call in calls if call.calibrated]
    return {
        "projected_vs_server": [[c.shape, c.projected, c.server] for c in calls],
        "uncalibrated_calls": len(calls) - len(calibrated),
        "worst_calibrated_call_off_by": {
            shape: max(_off_by(c) for c in calibrated if c.shape == shape)
            for shape in sorted({c.shape for c in calibrated})
        },
        "lowest_calibrated_projected_over_server": min(
            (round(c.projected / c.server, 3) for c in calibrated), default=None
        ),
    }
