"""Scopes without leakage, through the real agent, litellm, the loopback model, real git, real
LanceDB and the MiniLM embedder: a fact the model writes in project A is never recalled,
bootstrapped or dreamed in project B; a fact about the user goes to the global memory and is
seen in both; a secret never reaches the global memory, and a secret planted in it by hand
never comes back in a project."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from shell import events as ev
from shell.agent import Agent
from shell.build import build_agent
from shell.config import Settings, ToolSettings
from shell.scopes.scopes import Scope, session_scopes
from tests.core.agent_helpers import collect, of
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.git_read import git

PROJECT_FACT = "Heron deploys blue-green to the kestrel-7 cluster every Thursday."
CURATED_FACT = "Heron's release manager is Oksana Varga."
USER_FACT = "The user prefers tabs over spaces and answers in British English."
TOKEN = "ghp_" + "Sc0p" * 9
SECRET_FACT = f"The user's GitHub token is {TOKEN}"
PROJECT_WORDS = ("kestrel", "Oksana", "Varga")


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "code" / "heron", tmp_path / "code" / "osprey"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    return a, b


def scoped(settings: Settings, project: Path) -> Settings:
    return replace(
        settings,
        project=project,
        embedder="minilm",
        tools=ToolSettings(project="off"),  # memory alone: the project tools are not tested here
    )


def call(name: str, **arguments: object) -> Reply:
    return Reply(tool_calls=[(f"{name}-{len(arguments)}", name, json.dumps(arguments))])


async def turn(agent: Agent, text: str) -> list[ev.BaseEvent]:
    return await collect(agent.submit(text))


def tool_results(fake: FakeOpenAI) -> list[str]:
    """What the tools answered the model, in the last request."""
    return [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "tool"]


def every_file_text(scope: Scope) -> str:
    """Every memory file of a scope's workspace and what git holds of them, as one text."""
    files = [p for p in scope.workspace.rglob("*.md") if ".cairn" not in p.parts]
    texts = [p.read_text(encoding="utf-8") for p in files]
    return "\n".join([*texts, git(scope.workspace, "log", "-p", "--all")])


async def write_in_a(fake: FakeOpenAI, settings: Settings) -> Agent:
    """Project A: the model keeps a project fact, a curated one, a fact about the user, and
    tries to put a secret in the user's memory."""
    agent = build_agent(settings, index_in_background=False, interactive=False)
    await collect(agent.start())
    fake.enqueue(
        call("memory_append", text=PROJECT_FACT),
        call("memory_append", text=f"- {CURATED_FACT}", path="MEMORY.md"),
        call("memory_append", text=USER_FACT, scope="user"),
        call("memory_append", text=SECRET_FACT, scope="user"),
        Reply(text="Noted."),
    )
    events = await turn(agent, "remember all of this")
    written = of(events, ev.MemoryWritten)
    own = session_scopes(settings).own.label
    assert [(w.scope, w.path) for w in written] == [
        (own, "memory/2026-11-30.md"),
        (own, "MEMORY.md"),
        ("global", "memory/2026-11-30.md"),
    ]
    refused = tool_results(fake)[-1]
    assert refused.startswith("Error:") and "never keeps a secret" in refused
    return agent


async def test_a_project_fact_is_never_recalled_bootstrapped_or_dreamed_in_another_project(
    fake_settings: Settings, fake_openai: FakeOpenAI, folders: tuple[Path, Path]
) -> None:
    a_settings, b_settings = (scoped(fake_settings, folder) for folder in folders)
    a = await write_in_a(fake_openai, a_settings)
    a_scope, b_scope = session_scopes(a_settings).own, session_scopes(b_settings).own
    assert a_scope.workspace != b_scope.workspace
    assert a_scope.workspace.parent == fake_settings.workspace.with_name("ws-projects")

    # A reads its own facts and the user's, each hit labelled with where it lives
    fake_openai.enqueue(call("memory_search", query="Where does Heron deploy?"), Reply(text="."))
    found = of(await turn(a, "where does heron deploy?"), ev.SearchPerformed)[0].hits
    assert found[0].scope == a_scope.label and "kestrel-7" in found[0].snippet
    payload = json.loads(tool_results(fake_openai)[-1])
    assert payload["results"][0]["scope"] == a_scope.label
    assert CURATED_FACT in a.request_builder.system_prompt()
    assert a.dreamer.settings.workspace == a_scope.workspace  # a project dreams its own memory
    assert a.dreamer.files.scope == a_scope.label  # and names it on what a decision writes
    await a.aclose()

    b = build_agent(b_settings, index_in_background=False, interactive=False)
    await collect(b.start())
    queries = (
        "Where does Heron deploy?",
        "kestrel-7 cluster",
        "Who is the release manager of Heron?",
        "Oksana Varga",
        "tabs or spaces?",
    )
    for query in queries:
        fake_openai.enqueue(call("memory_search", query=query, minScore=0), Reply(text="."))
    searches = [
        of(await turn(b, f"search {n}"), ev.SearchPerformed)[0] for n in range(len(queries))
    ]
    hits = [hit for search in searches for hit in search.hits]
    assert {hit.scope for hit in hits} <= {b_scope.label, "global"}
    assert not [hit for hit in hits if any(w in hit.snippet for w in PROJECT_WORDS)]
    assert "tabs over spaces" in searches[-1].hits[0].snippet  # the user's fact crosses
    assert searches[-1].hits[0].scope == "global"
    prompt = b.request_builder.system_prompt()
    assert not any(word in prompt for word in PROJECT_WORDS)

    dreamed = await collect(b.dream("manual"))
    assert not [e for e in dreamed if any(w in json.dumps(ev.to_dict(e)) for w in PROJECT_WORDS)]
    assert not any(word in every_file_text(b_scope) for word in PROJECT_WORDS)
    await b.aclose()

    user = session_scopes(a_settings).user
    global_text = every_file_text(user)
    assert USER_FACT in global_text
    assert TOKEN not in global_text and not any(w in global_text for w in PROJECT_WORDS)
    assert not list(user.workspace.joinpath(".cairn").rglob("recall.log"))  # no project query


async def test_a_secret_planted_in_the_global_memory_never_comes_back_in_a_project(
    fake_settings: Settings, fake_openai: FakeOpenAI, folders: tuple[Path, Path]
) -> None:
    settings = replace(scoped(fake_settings, folders[0]), secrets="off")
    agent = build_agent(settings, index_in_background=False, interactive=False)
    await collect(agent.start())
    memory = fake_settings.workspace / "MEMORY.md"
    memory.write_text(
        f"{memory.read_text()}\n- {SECRET_FACT}\n- The user's laptop is a ThinkPad.\n"
    )
    assert TOKEN not in agent.request_builder.system_prompt()
    assert "ThinkPad" in agent.request_builder.system_prompt()
    fake_openai.enqueue(
        call("memory_search", query="GitHub token of the user", minScore=0),
        call("memory_get", path="MEMORY.md", scope="user"),
        Reply(text="."),
    )
    events = await turn(agent, "what is my github token?")
    assert not [hit for hit in of(events, ev.SearchPerformed)[0].hits if TOKEN in hit.snippet]
    search, read = tool_results(fake_openai)[-2:]
    assert TOKEN not in search and TOKEN not in read
    assert "ThinkPad" in read and "[withheld: a line holding a secret" in read
    await agent.aclose()


async def test_with_no_project_open_everything_is_global_as_before(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = build_agent(fake_settings, index_in_background=False, interactive=False)
    await collect(agent.start())
    append = {t.name: t for t in agent.toolbox}["memory_append"]
    assert "scope" not in append.parameters["properties"]
    fake_openai.enqueue(call("memory_append", text=PROJECT_FACT), Reply(text="."))
    [written] = of(await turn(agent, "remember"), ev.MemoryWritten)
    assert written.scope == "global"
    assert PROJECT_FACT in (fake_settings.workspace / written.path).read_text()
    assert not fake_settings.workspace.with_name("ws-projects").exists()
    await agent.aclose()


async def test_each_memorys_first_index_build_names_that_memory(
    fake_settings: Settings, fake_openai: FakeOpenAI, folders: tuple[Path, Path]
) -> None:
    settings = scoped(fake_settings, folders[0])
    agent = build_agent(settings, index_in_background=False, interactive=False)
    await collect(agent.start())
    fake_openai.enqueue(call("memory_search", query="kestrel"), Reply(text="."))
    rebuilt = of(await turn(agent, "what do we know?"), ev.IndexRebuilt)
    own = session_scopes(settings).own.label
    assert sorted((e.scope, e.reason) for e in rebuilt) == [("global", "missing"), (own, "missing")]
    await agent.aclose()


async def test_a_write_may_name_its_memory_as_a_hit_names_it(
    fake_settings: Settings, fake_openai: FakeOpenAI, folders: tuple[Path, Path]
) -> None:
    """Qwen2.5-Coder-1.5B wrote back the label it read in a search ("global"): refused as an
    invalid argument, the fact was lost."""
    settings = scoped(fake_settings, folders[0])
    agent = build_agent(settings, index_in_background=False, interactive=False)
    await collect(agent.start())
    own = session_scopes(settings).own.label
    fake_openai.enqueue(
        call("memory_append", text=USER_FACT, scope="global"),
        call("memory_append", text=PROJECT_FACT, scope=own),
        Reply(text="."),
    )
    written = of(await turn(agent, "remember"), ev.MemoryWritten)
    assert [w.scope for w in written] == ["global", own]
    await agent.aclose()


async def test_the_flush_of_a_project_session_sends_the_users_lines_to_the_global_note(
    fake_settings: Settings, fake_openai: FakeOpenAI, folders: tuple[Path, Path]
) -> None:
    settings = replace(scoped(fake_settings, folders[0]), embedder="hash")
    agent = build_agent(settings, index_in_background=False, interactive=False)
    await collect(agent.start())
    fake_openai.enqueue(Reply(text="ok"))
    await turn(agent, "I prefer vim keys; heron's queue is sqs-heron-7")
    lines = "- User prefers vim keys.\n- Heron's queue is sqs-heron-7."
    fake_openai.enqueue(call("memory_append", text=lines), Reply(text="NO_REPLY"))
    events = await turn(agent, "/flush")
    [finished] = of(events, ev.FlushFinished)
    assert finished.outcome == "written"
    written = {w.scope: w for w in of(events, ev.MemoryWritten)}
    scopes = session_scopes(settings)
    assert set(written) == {"global", scopes.own.label}
    project_note = (scopes.own.workspace / written[scopes.own.label].path).read_text()
    global_note = (fake_settings.workspace / written["global"].path).read_text()
    assert "sqs-heron-7" in project_note and "vim" not in project_note
    assert "vim keys" in global_note and "sqs-heron-7" not in global_note
    await agent.aclose()


async def test_the_demo_brain_keeps_the_users_facts_global_and_the_rest_in_the_project(
    demo_settings: Settings, folders: tuple[Path, Path]
) -> None:
    settings = replace(demo_settings, project=folders[0], tools=ToolSettings(project="off"))
    agent = build_agent(settings, index_in_background=False, interactive=False)
    await collect(agent.start())
    [mine] = of(await turn(agent, "remember that I prefer tabs"), ev.MemoryWritten)
    [theirs] = of(
        await turn(agent, "remember that the staging database is on port 6543"), ev.MemoryWritten
    )
    assert (mine.scope, theirs.scope) == ("global", session_scopes(settings).own.label)
    await agent.aclose()


async def test_what_cairn_keeps_for_a_model_goes_where_the_flush_would_send_it(
    fake_settings: Settings, fake_openai: FakeOpenAI, folders: tuple[Path, Path]
) -> None:
    settings = replace(scoped(fake_settings, folders[0]), embedder="hash", memory_assist="on")
    agent = build_agent(settings, index_in_background=False, interactive=False)
    await collect(agent.start())
    fake_openai.enqueue(Reply(text="Sure."), Reply(text="Sure."))
    [mine] = of(await turn(agent, "remember that I prefer tabs"), ev.MemoryWritten)
    [theirs] = of(await turn(agent, "remember that heron builds with bazel"), ev.MemoryWritten)
    assert (mine.scope, theirs.scope) == ("global", session_scopes(settings).own.label)
    await agent.aclose()


async def test_a_new_session_in_a_project_starts_from_that_projects_recent_notes(
    fake_settings: Settings, fake_openai: FakeOpenAI, folders: tuple[Path, Path]
) -> None:
    a_settings, b_settings = (
        replace(scoped(fake_settings, folder), embedder="hash") for folder in folders
    )
    a = build_agent(a_settings, index_in_background=False, interactive=False)
    await collect(a.start())
    fake_openai.enqueue(call("memory_append", text=PROJECT_FACT), Reply(text="."))
    await turn(a, "remember")
    await a.aclose()
    for settings, seen in ((a_settings, True), (b_settings, False)):
        agent = build_agent(settings, index_in_background=False, interactive=False)
        await collect(agent.start())
        fake_openai.enqueue(Reply(text="hello"))
        events = await turn(agent, "hi")
        system = fake_openai.requests[-1]["messages"][0]["content"]
        assert ("kestrel-7" in system) is seen
        assert bool(of(events, ev.StartupPreludeInjected)) is seen
        await agent.aclose()
