"""Approvals: who lets a call that writes or executes run.

Reads run freely, and so do memory writes (each is a commit, and can be reverted). A project
edit, a command or an MCP tool asks first, unless a standing permission covers it: `--yes`
(`approval = "yes"`), an allow rule of the config, or the user's "allow for this session". In
the TUI the user answers a modal (`answer`); headless, no one can be asked, so what no rule
allows is denied with a tool error that says how to allow it. Every decision is an
`ApprovalDecided` event.

Only three things approve: the config, the flags and the user's answer. A tool's result (a
file's text, a command's output, an MCP result) is data for the model and cannot reach here.

Allow rules: "tool" allows every call of a tool (shell-style, so "time__*" allows a server's
tools); "tool:pattern" allows the calls whose subject matches: the path of an edit (shell-style),
or the command line of a `run_command`, parsed as the shell parses it
(`shell.tools.command_rules` has the grammar): "make*" allows `make` and `make test` but not
`makefoo`, `make; id` or `make() (id) && make`. A line that is not simple commands joined by
`&&`, `||`, `;` or `|` matches no pattern: only a rule naming the bare tool, `--yes` or the user
lets it run. A rule on a program that runs code (`make`, `pytest`, `npm`) trusts that program
with whatever the project's files tell it to do.

"Allow for this session" remembers the call's subject: that command line exactly, that file for
an edit, the whole tool for an MCP tool. When the commands' sandbox is unavailable
(`sandboxed=False`), no rule approves a command: it asks, or is denied headless, and says why.
"""

from __future__ import annotations

import asyncio
import fnmatch
import shlex
from dataclasses import dataclass
from typing import Literal

from shell.config import ToolSettings
from shell.events import ApprovalChoice, ApprovalDecided, ApprovalRequested, DecidedBy
from shell.tools.command_rules import Refused, covering_rules, suggested_patterns
from shell.tools.toolbox import CallContext, CallPreview, Tool

COMMAND_TOOL = "run_command"


@dataclass(frozen=True)
class Answer:
    choice: ApprovalChoice
    reason: str = ""


class Approvals:
    """The approver of one session's toolbox (`shell.tools.toolbox.Approver`).

    Args:
        settings: The `[tools]` settings: "ask" or "yes", and the allow rules.
        interactive: Whether someone can be asked (the TUI); headless runs deny instead.
        sandboxed: Whether commands run in a sandbox; without one no rule approves a command.
    """

    def __init__(
        self, settings: ToolSettings, *, interactive: bool, sandboxed: bool = True
    ) -> None:
        self.settings = settings
        self.interactive = interactive
        self.sandboxed = sandboxed
        self._session: set[tuple[str, str]] = set()
        self._waiting: dict[str, asyncio.Future[Answer | None]] = {}

    async def __call__(self, tool: Tool, preview: CallPreview, context: CallContext) -> str | None:
        """None when the call may run, else the reason the model is told."""
        if standing := self.standing(tool, preview):
            by, why = standing
            context.emit(ApprovalDecided(context.call_id, tool.name, True, by, "allow_once", why))
            return None
        if not self.interactive:
            reason = (
                f"{tool.name} was not run: it needs the user's approval, and no one can be "
                f"asked in a headless run. {self._how_to_allow(tool, preview)}"
            )
            context.emit(
                ApprovalDecided(context.call_id, tool.name, False, "headless", "deny", reason)
            )
            return reason
        answer = await self._ask(tool, preview, context)
        if answer is None:
            reason = "the user cancelled the turn before answering"
            context.emit(
                ApprovalDecided(context.call_id, tool.name, False, "cancel", "deny", reason)
            )
            return f"Not run: {reason}."
        if answer.choice == "allow_session":
            self._session.add(session_key(tool.name, preview.subject))
        allowed = answer.choice != "deny"
        reason = answer.reason.strip()
        context.emit(
            ApprovalDecided(context.call_id, tool.name, allowed, "user", answer.choice, reason)
        )
        if allowed:
            return None
        return f"The user denied {tool.name}: {reason or 'no reason given'}."

    def answer(self, call_id: str, choice: ApprovalChoice, reason: str = "") -> bool:
        """The user's answer to the call waiting as `call_id`; False when none waits."""
        waiting = self._waiting.get(call_id)
        if waiting is None or waiting.done():
            return False
        _settle(waiting, Answer(choice, reason))
        return True

    def standing(self, tool: Tool, preview: CallPreview) -> tuple[DecidedBy, str] | None:
        """What already allows this call (`--yes`, a rule, the session), if anything."""
        if self.settings.approval == "yes":
            return "yes", "--yes: every call is allowed"
        if session_key(tool.name, preview.subject) in self._session:
            return "session", "allowed for this session"
        if self._rules_approve(tool) and (
            rule := matching_rule(self.settings.allow, tool.name, preview.subject)
        ):
            return "rule", f"allow rule {rule!r}"
        return None

    def status(self, tool: Tool) -> Literal["free", "ask", "allowed"]:
        """How a call of `tool` is decided now, as `/tools` shows it."""
        if tool.risk not in ("write", "execute"):
            return "free"
        if self.settings.approval == "yes" or (tool.name, "") in self._session:
            return "allowed"
        if not self._rules_approve(tool):
            return "ask"
        names = [rule.partition(":")[0] for rule in self.settings.allow if ":" not in rule]
        return "allowed" if any(fnmatch.fnmatchcase(tool.name, n) for n in names) else "ask"

    def _rules_approve(self, tool: Tool) -> bool:
        return self.sandboxed or tool.name != COMMAND_TOOL

    def _how_to_allow(self, tool: Tool, preview: CallPreview) -> str:
        if not self._rules_approve(tool):
            rule = matching_rule(self.settings.allow, tool.name, preview.subject)
            held = f"The allow rule {rule!r} covers it, but no" if rule else "No"
            return (
                f"{held} allow rule approves a command while the commands' sandbox is "
                "unavailable: only --yes would let it run."
            )
        rules = suggested_rules(tool.name, preview.subject)
        if isinstance(rules, Refused):
            return (
                f"No allow rule can cover this command line ({rules.why}): only --yes would let "
                f"it run, or the bare rule {tool.name!r}, which allows every command."
            )
        flags = " ".join(f"--allow {_quoted(rule)}" for rule in rules)
        such = "an allow rule" if len(rules) == 1 else "allow rules"
        return f"Allow it with --yes or {such} such as {flags}."

    async def _ask(self, tool: Tool, preview: CallPreview, context: CallContext) -> Answer | None:
        """The user's answer, or None when the turn was cancelled while it waited."""
        waiting: asyncio.Future[Answer | None] = asyncio.get_running_loop().create_future()
        self._waiting[context.call_id] = waiting
        context.emit(
            ApprovalRequested(
                call_id=context.call_id,
                tool=tool.name,
                risk=tool.risk,
                summary=preview.summary,
                session_scope=session_scope(tool.name, preview.subject),
                command=preview.command,
                diff=preview.diff,
                detail=preview.detail,
            )
        )
        watcher = asyncio.ensure_future(context.cancelled.wait())
        watcher.add_done_callback(lambda _: _settle(waiting, None))
        try:
            return await waiting
        finally:
            watcher.cancel()
            self._waiting.pop(context.call_id, None)


def _settle(waiting: asyncio.Future[Answer | None], answer: Answer | None) -> None:
    if not waiting.done():
        waiting.set_result(answer)


def session_key(tool: str, subject: str) -> tuple[str, str]:
    """What "allow for this session" remembers: the call's subject (a command line exactly, an
    edit's file), or the whole tool when it has none (an MCP tool)."""
    return (tool, subject)


def session_scope(tool: str, subject: str) -> str:
    """What "allow for this session" would allow, in words."""
    if not subject:
        return f"every {tool}"
    if tool == COMMAND_TOOL:
        return f"{tool} `{subject}`"
    return f"{tool} {'to' if tool == 'write_file' else 'on'} `{subject}`"


def suggested_rules(tool: str, subject: str) -> tuple[str, ...] | Refused:
    """Rules that would allow this call and mean what they say: a pattern per program of a
    command line (`run_command:make*`), the path of an edit, or the bare tool."""
    if tool != COMMAND_TOOL:
        return (f"{tool}:{_literal_glob(subject)}" if subject else tool,)
    patterns = suggested_patterns(subject)
    if isinstance(patterns, Refused):
        return patterns
    return tuple(f"{tool}:{pattern}" for pattern in patterns)


def _quoted(rule: str) -> str:
    return f"'{rule}'" if "'" not in rule else shlex.quote(rule)


def _literal_glob(path: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in path)


def matching_rule(rules: tuple[str, ...], tool: str, subject: str) -> str | None:
    """The first allow rule that covers this call (see the module's rules), or None."""
    bare = [r for r in rules if ":" not in r and fnmatch.fnmatchcase(tool, r)]
    if bare:
        return bare[0]
    patterns = [
        (rule, pattern)
        for rule in rules
        for name, _, pattern in [rule.partition(":")]
        if pattern and fnmatch.fnmatchcase(tool, name)
    ]
    if not patterns or not subject:
        return None
    if tool != COMMAND_TOOL:
        return next((r for r, p in patterns if fnmatch.fnmatchcase(subject, p)), None)
    used = covering_rules(patterns, subject)
    return " + ".join(dict.fromkeys(used)) if used else None
