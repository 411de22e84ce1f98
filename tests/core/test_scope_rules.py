"""The rules of the scopes without an agent: where a project's memory lives, which scope a
write names, which lines of a flush are about the user, what crosses; and the flush tool
that sends the user's lines to the global note and the rest to the project's."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from shell.config import ConfigError, ScopeSettings, Settings, load_settings
from shell.git.store import GitStore
from shell.memory.files.door import MemoryFiles
from shell.memory.files.scoped import ScopedDoors
from shell.memory.tools import pinned_append_tool
from shell.scopes.crossing import WITHHELD, with_secret_lines_withheld, without_secret_lines
from shell.scopes.routing import about_user, split_user_lines
from shell.scopes.scopes import ScopeError, session_scopes
from shell.workspace import PROJECT_SEEDS, init_workspace
from tests.git_read import git

TOKEN = "ghp_" + "Rul3" * 9


def test_a_project_memory_is_found_from_the_real_path_beside_the_global_one(
    demo_settings: Settings, tmp_path: Path
) -> None:
    folder = tmp_path / "my project!"
    folder.mkdir()
    scopes = session_scopes(replace(demo_settings, project=folder))
    assert scopes.own.kind == "project" and scopes.own.label == "project:my-project"
    assert scopes.own.workspace.parent == tmp_path / "ws-projects"
    assert scopes.own.workspace.name.startswith("my-project-")
    assert scopes.readable == (scopes.own, scopes.user)
    assert session_scopes(replace(demo_settings, project=folder)) == scopes  # deterministic
    elsewhere = ScopeSettings(projects_dir=str(tmp_path / "mem"))
    moved = session_scopes(replace(demo_settings, project=folder, scopes=elsewhere))
    assert moved.own.workspace.parent == tmp_path / "mem"
    off = session_scopes(replace(demo_settings, project=folder, scopes=ScopeSettings(False)))
    assert off.readable == (off.own,) and off.own.kind == "global"


def test_the_scopes_table_is_read_from_the_config_file_and_the_environment(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[scopes]\nshare = ["/src/a", "/src/b"]\nprojects_dir = "/mem"\n')
    settings = load_settings(env={"CAIRN_SCOPES_ENABLED": "off"}, file=config)
    assert settings.scopes == ScopeSettings(False, "/mem", ("/src/a", "/src/b"))


@pytest.mark.parametrize("name", ["../other", "project:other", "global/..", "USER", "me"])
def test_a_write_names_only_user_or_project(
    demo_settings: Settings, tmp_path: Path, name: str
) -> None:
    scopes = session_scopes(replace(demo_settings, project=tmp_path))
    assert scopes.for_write(None) == scopes.for_write("project") == scopes.own
    assert scopes.for_write("user") == scopes.user
    with pytest.raises(ScopeError):
        scopes.for_write(name)


@pytest.mark.parametrize(
    ("line", "user"),
    [
        ("- User prefers tabs over spaces.", True),
        ("- The user's name is Ada.", True),
        ("* I live in Oslo.", True),
        ("- My editor is Helix.", True),
        ("- Heron deploys on Thursdays.", False),
        ("- Users of Heron log in with SSO.", False),
        ("- I ran make test (Makefile#L4).", False),
        (f"- My GitHub token is {TOKEN}", False),
    ],
)
def test_a_flushed_line_is_about_the_user_when_the_user_is_its_subject(
    line: str, user: bool
) -> None:
    assert about_user(line) is user


def test_what_crosses_loses_its_secret_lines() -> None:
    text = f"- tabs\n- token {TOKEN}\n- Oslo"
    assert without_secret_lines(text) == "- tabs\n- Oslo"
    assert with_secret_lines_withheld(text) == f"- tabs\n{WITHHELD}\n- Oslo"
    assert split_user_lines(f"- User likes tea\n- Heron ships\n- My token is {TOKEN}") == (
        f"- Heron ships\n- My token is {TOKEN}",
        "- User likes tea",
    )


async def test_the_flush_sends_the_users_lines_to_the_global_note(
    demo_settings: Settings, tmp_path: Path
) -> None:
    scopes = session_scopes(replace(demo_settings, project=tmp_path))
    doors = {}
    for scope, seeds in ((scopes.own, PROJECT_SEEDS), (scopes.user, None)):
        here = replace(demo_settings, workspace=scope.workspace)
        store: GitStore = init_workspace(here, seeds) if seeds else init_workspace(here)
        doors[scope.label] = MemoryFiles(scope.workspace, store)
    tool = pinned_append_tool(
        ScopedDoors(scopes, doors), "memory/2026-11-30.md", origin=lambda: "flush"
    )
    text = f"- User prefers short answers.\n- Heron's cache is redis-9.\n- My token is {TOKEN}"
    result = await tool.call(json.dumps({"text": text}))
    assert result.error is None
    payload = json.loads(result.content)
    assert payload["scope"] == scopes.own.label and payload["user"]["scope"] == "global"
    note = "memory/2026-11-30.md"
    project, user = (s.workspace / note for s in (scopes.own, scopes.user))
    assert "redis-9" in project.read_text() and "short answers" not in project.read_text()
    assert "short answers" in user.read_text() and "redis-9" not in user.read_text()
    assert TOKEN not in user.read_text() + git(scopes.user.workspace, "log", "-p")
    assert [e.scope for e in result.events if type(e).__name__ == "MemoryWritten"] == [
        "global",
        scopes.own.label,
    ]


def test_a_folder_name_cannot_shape_the_memorys_place_or_label(
    demo_settings: Settings, tmp_path: Path
) -> None:
    folder = tmp_path / "evil\nname [x]; rm -rf ~"
    folder.mkdir()
    scope = session_scopes(replace(demo_settings, project=folder)).own
    assert scope.workspace.parent == tmp_path / "ws-projects"
    assert scope.label == "project:evil-name-x-rm--rf"
    assert "\n" not in str(scope.workspace)


def test_a_projects_dir_inside_the_global_workspace_is_refused(
    demo_settings: Settings, tmp_path: Path
) -> None:
    inside = ScopeSettings(projects_dir=str(demo_settings.workspace / "memory"))
    with pytest.raises(ConfigError, match="inside the global workspace"):
        session_scopes(replace(demo_settings, project=tmp_path, scopes=inside))
