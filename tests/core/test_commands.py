"""Slash commands: one registry (`shell.commands`) for the core, `cairn run` and the TUI; `/help`
lists them with their keys, and an unknown one never reaches the model."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from shell import commands
from shell import events as ev
from shell.config import DEMO_MODEL, Settings
from shell.headless.run import run_headless
from tests.conftest import Clock
from tests.core.agent_helpers import collect, of, started
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI


@pytest.mark.parametrize(
    ("text", "name", "argument", "known"),
    [
        ("/help", "/help", "", True),
        ("  /compact the API design  ", "/compact", "the API design", True),
        ("/quit", "/quit", "", True),
        ("/foo", "/foo", "", False),
        ("/compcat", "/compcat", "", False),
        ("/Help", "/help", "", True),  # case does not matter: it is never sent to the model
        ("/COMPACT the API", "/compact", "the API", True),
    ],
)
def test_a_slash_and_a_name_is_a_command(text: str, name: str, argument: str, known: bool) -> None:
    invocation = commands.parse(text)
    assert invocation is not None
    assert (invocation.name, invocation.argument) == (name, argument)
    assert (invocation.command is not None) == known


@pytest.mark.parametrize(
    ("typed", "near"),
    [("/hepl", "/help"), ("/compcat", "/compact"), ("/synk", "/sync"), ("/foo", None)],
)
def test_an_unknown_name_suggests_only_a_command_it_is_a_typo_of(
    typed: str, near: str | None
) -> None:
    assert commands.suggestion(typed) == near


@pytest.mark.parametrize(
    "text",
    [
        "/usr/bin is a folder",
        "/usr/bin",
        "/etc holds the configs",
        "/ what is this",
        "what does /help do?",
        "//comment",
    ],
)
def test_paths_and_sentences_that_start_with_a_slash_are_prompts(text: str) -> None:
    assert commands.parse(text) is None


def test_the_registry_has_each_name_once_with_its_help_and_keys() -> None:
    names = [n for c in commands.COMMANDS for n in (c.name, *c.aliases)]
    assert len(names) == len(set(names))
    assert all(commands.COMMAND_NAME.match(name) for name in names)
    assert all(c.help and not c.help.endswith(".") for c in commands.COMMANDS)
    keys = {c.name: c.key for c in commands.COMMANDS if c.key}
    assert keys == {
        "/review": "f3",
        "/history": "f5",
        "/conflicts": "f6",
        "/why": "f7",
        "/clear": "ctrl+l",
        "/exit": "ctrl+q",
    }
    assert {c.name for c in commands.COMMANDS if c.tui_only} == set(keys)
    assert commands.find("/quit") is commands.find("/exit")


async def test_help_lists_every_command_and_asks_no_model(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)

    events = await collect(agent.submit("/help"))

    [shown] = events
    assert isinstance(shown, ev.HelpShown)
    assert [c.name for c in shown.commands] == [c.name for c in commands.COMMANDS]
    review = next(c for c in shown.commands if c.name == "/review")
    assert review.key == "f3" and review.tui_only
    assert ev.from_json(ev.to_json(shown)) == shown
    assert fake_openai.requests == []
    await agent.aclose()


async def test_an_unknown_command_names_the_nearest_and_is_not_sent(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)

    events = await collect(agent.submit("/flsuh"))
    nothing_near = await collect(agent.submit("/zzzzzz"))

    assert events == [ev.Error("command", "unknown command /flsuh — did you mean /flush?")]
    assert nothing_near == [ev.Error("command", "unknown command /zzzzzz — /help lists them")]
    assert fake_openai.requests == [] and agent.messages == [] and agent.record.turns == 0
    await agent.aclose()


async def test_a_path_is_sent_to_the_model_as_a_prompt(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(Reply(text="It is."))

    events = await collect(agent.submit("/usr/bin is a folder"))

    assert of(events, ev.TurnStarted)[0].prompt == "/usr/bin is a folder"
    assert fake_openai.requests[-1]["messages"][-1]["content"] == "/usr/bin is a folder"
    await agent.aclose()


async def test_a_tui_command_in_the_core_says_where_it_works(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)

    events = await collect(agent.submit("/review"))

    assert events == [ev.Notice("/review works in the TUI only (f3).")]
    assert fake_openai.requests == []
    await agent.aclose()


async def test_cairn_run_answers_help_and_unknown_commands_from_the_registry(
    tmp_path: Path,
) -> None:
    settings = Settings(
        workspace=tmp_path / "ws", model=DEMO_MODEL, embedder="hash", watch=False, clock=Clock()
    )
    out = io.StringIO()

    code = await run_headless(settings, ["/help", "/foo"], out=out)

    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    [shown] = [line for line in lines if line["type"] == "help_shown"]
    assert "/compact" in [c["name"] for c in shown["commands"]]
    [error] = [line for line in lines if line["type"] == "error"]
    assert error["message"].startswith("unknown command /foo")
    assert not [line for line in lines if line["type"] == "turn_started"]
    assert code == 1
