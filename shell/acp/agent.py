"""Cairn as an ACP agent: one Cairn session (`shell.agent.Agent`, built as the TUI builds it) for
each ACP session, its turns driven by the client's prompts.

The client is the person: a call that writes or executes and that no allow rule covers is asked
of it (`session/request_permission`: allow once, allow for this session, deny), and its answer
goes back to the turn waiting for it (`Agent.answer_approval`). A `session/cancel` stops the turn
at its next safe point, as esc does in the TUI. What the turn does reaches the client as
`session/update`s (`shell.acp.updates`). The session's project folder is the `cwd` the client
gives; the memory is the workspace's, as for every front end. The MCP servers a client passes
are not started: Cairn's come from its own config (`cairn tools` lists them).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shell.acp.updates import KINDS, updates
from shell.config import ConfigError, Settings, project_folder
from shell.events import (
    ApprovalChoice,
    ApprovalRequested,
    Error,
    Event,
    TurnCancelled,
    TurnEnding,
    TurnFinished,
)

if TYPE_CHECKING:
    from acp import Client
    from acp.schema import (
        ContentToolCallContent,
        FileEditToolCallContent,
        InitializeResponse,
        NewSessionResponse,
        PromptResponse,
        StopReason,
        TerminalToolCallContent,
    )

    from shell.agent import Agent

AGENT_NAME = "cairn"
CANCELLED = "the client cancelled the turn"
STOPS: dict[TurnEnding, StopReason] = {
    "completed": "end_turn",
    "empty": "end_turn",
    "error": "end_turn",
    "tool_limit": "max_turn_requests",
    "cancelled": "cancelled",
}


@dataclass
class _Session:
    agent: Agent
    said: list[Event] = field(default_factory=list)
    """What the session's start said, for the first prompt to show."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One turn at a time."""
    cancelled: bool = False
    """The client cancelled the turn under way (`session/cancel`, or a question it answered
    "cancelled"): the prompt's answer says so, whatever the turn had done by then."""


class CairnAcp:
    """The ACP agent (`acp.Agent`): sessions, prompts, cancels.

    Args:
        settings: The workspace, the model and the approval policy, as the command resolved
            them; each session gets the client's `cwd` as its project folder.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._conn: Client | None = None
        self._sessions: dict[str, _Session] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **_: Any,
    ) -> InitializeResponse:
        from acp import PROTOCOL_VERSION
        from acp.schema import (
            AgentCapabilities,
            Implementation,
            InitializeResponse,
            PromptCapabilities,
        )

        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=False, prompt_capabilities=PromptCapabilities(embedded_context=True)
            ),
            agent_info=Implementation(name=AGENT_NAME, title="Cairn", version="0.1.0"),
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        from acp import RequestError
        from acp.schema import NewSessionResponse

        from shell.build import build_agent

        if not Path(cwd).is_absolute():
            raise RequestError.invalid_params({"cwd": "must be an absolute path"})
        try:
            tools = replace(self.settings.tools, project="on")
            settings = replace(self.settings, project=project_folder(cwd), tools=tools)
        except ConfigError as error:
            raise RequestError.invalid_params({"cwd": str(error)}) from None
        agent = await asyncio.to_thread(build_agent, settings, interactive=True)
        session = _Session(agent)
        async for event in agent.start():
            session.said.append(event)
        if mcp_servers:
            from shell.events import Notice

            note = "the MCP servers the client passed are not started; Cairn's come from its config"
            session.said.append(Notice(note, "warning"))
        self._sessions[agent.session_id] = session
        # after the response: the client learns the session first, then its commands
        task = asyncio.get_running_loop().create_task(self._offer_commands(agent.session_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return NewSessionResponse(session_id=agent.session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        from acp.schema import PromptResponse

        session = self._session(session_id)
        stop: StopReason = "end_turn"
        async with session.lock:
            session.cancelled = False
            said, session.said = session.said, []
            for event in said:
                await self._show(session_id, event)
            agent = session.agent
            async with contextlib.aclosing(agent.submit(prompt_text(prompt))) as events:
                async for event in events:
                    match event:
                        case ApprovalRequested():
                            await self._show(session_id, event)
                            choice, reason = await self._ask(session_id, event)
                            if reason == CANCELLED:  # the client's stop, as its answer says
                                self._cancel(session)
                            agent.answer_approval(event.call_id, choice, reason)
                            continue
                        case TurnFinished(reason=reason):
                            stop = STOPS[reason]
                        case TurnCancelled():
                            stop = "cancelled"
                    await self._show(session_id, event)
            for event in agent.pending_events():  # the background's: a sync, the index
                await self._show(session_id, event)
        return PromptResponse(stop_reason="cancelled" if session.cancelled else stop)

    async def cancel(self, session_id: str, **_: Any) -> None:
        if session := self._sessions.get(session_id):
            self._cancel(session)

    async def aclose(self) -> None:
        """Close every session: saved, its writes pushed (`Agent.aclose`)."""
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.agent.aclose()

    # --- internals ----------------------------------------------------------------------

    def _cancel(self, session: _Session) -> None:
        """Stop the turn under way at its next safe point (as esc does in the TUI)."""
        if session.lock.locked():
            session.cancelled = True
            session.agent.cancel()

    def _session(self, session_id: str) -> _Session:
        from acp import RequestError

        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"no session {session_id!r}"})
        return session

    async def _offer_commands(self, session_id: str) -> None:
        """The slash commands a client may send as a prompt (`/compact`, `/flush`, …): all of
        `COMMANDS` but those that act on the TUI's screen."""
        from acp.helpers import update_available_commands
        from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

        from shell.commands import COMMANDS

        assert self._conn is not None
        offered = [
            AvailableCommand(
                name=command.name.removeprefix("/"),
                description=command.help,
                input=AvailableCommandInput(UnstructuredCommandInput(hint=command.args))
                if command.args
                else None,
            )
            for command in COMMANDS
            if not command.tui_only
        ]
        await self._conn.session_update(session_id, update_available_commands(offered))

    async def _show(self, session_id: str, event: Event) -> None:
        assert self._conn is not None
        if isinstance(event, Error):  # the person must see it, not only the thoughts
            from acp import update_agent_message_text

            await self._conn.session_update(
                session_id, update_agent_message_text(f"\n\nError: {event.message}\n")
            )
            return
        for update in updates(event):
            await self._conn.session_update(session_id, update)

    async def _ask(self, session_id: str, event: ApprovalRequested) -> tuple[ApprovalChoice, str]:
        """The client's answer to a call waiting for approval, as Cairn's choice and reason."""
        from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

        assert self._conn is not None
        options = [
            PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
            PermissionOption(
                option_id="allow_session",
                name=f"Allow for this session: {event.session_scope}",
                kind="allow_always",
            ),
            PermissionOption(option_id="deny", name="Deny", kind="reject_once"),
        ]
        call = ToolCallUpdate(
            tool_call_id=event.call_id,
            title=event.summary,
            kind=KINDS.get(event.tool, "other"),
            status="pending",
            content=_asked(event),
        )
        try:
            answer = await self._conn.request_permission(
                session_id=session_id, tool_call=call, options=options
            )
        except Exception as error:  # a client that cannot answer denies
            return "deny", f"the client did not answer ({type(error).__name__})"
        outcome = answer.outcome
        if isinstance(outcome, AllowedOutcome) and outcome.option_id == "allow_once":
            return "allow_once", ""
        if isinstance(outcome, AllowedOutcome) and outcome.option_id == "allow_session":
            return "allow_session", ""
        if isinstance(outcome, AllowedOutcome):
            return "deny", "denied in the client"
        return "deny", CANCELLED


def prompt_text(blocks: list[Any]) -> str:
    """A prompt's text: its text blocks, the text of the resources it embeds (a file the person
    attached), and the names of those it only links."""
    from acp.schema import (
        EmbeddedResourceContentBlock,
        ResourceContentBlock,
        TextContentBlock,
        TextResourceContents,
    )

    parts = []
    for block in blocks:
        match block:
            case TextContentBlock(text=text):
                parts.append(text)
            case EmbeddedResourceContentBlock(resource=TextResourceContents(uri=uri, text=text)):
                parts.append(f"{uri}:\n```\n{text}\n```")
            case ResourceContentBlock(uri=uri):
                parts.append(f"(attached: {uri})")
    return "\n\n".join(parts)


def _asked(
    event: ApprovalRequested,
) -> list[ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent]:
    from acp import text_block, tool_content

    shown = [
        f"$ {event.command}" if event.command else None,
        f"```diff\n{event.diff}\n```" if event.diff else None,
        event.detail,
    ]
    asked: list[ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent] = [
        tool_content(text_block(text)) for text in shown if text
    ]
    return asked
