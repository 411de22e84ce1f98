"""list_files and grep: .gitignore honoured, bounded output with totals, clear errors; each
with the real rg and with its fallback (pathspec, git grep), which must agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shell.tools.project.files import file_tools, find_rg
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import CallContext, Tool, ToolResult


@pytest.fixture(params=["rg", "fallback"])
def rg(request: pytest.FixtureRequest) -> str | None:
    if request.param == "fallback":
        return None
    found = find_rg()
    assert found is not None, "the ripgrep wheel is in the lock: rg must be found"
    return found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with ignored files at every level, hidden files and a .git folder."""
    folder = tmp_path / "project"
    for name, text in {
        ".gitignore": "build/\n*.log\ngenerated.py\n",
        ".ignore": "scratch.txt\n",
        ".github/ci.yml": "needle: ci\n",
        "README.md": "needle in the readme\n",
        "build/out.py": "needle = 'built'\n",
        "debug.log": "needle in a log\n",
        "generated.py": "needle = 'generated'\n",
        "scratch.txt": "needle in scratch\n",
        "src/app.py": "def main():\n    return 'Needle'\n# needle\n",
        "src/.gitignore": "local_*.py\n!local_keep.py\n",
        "src/local_tmp.py": "needle = 'local'\n",
        "src/local_keep.py": "needle = 'kept'\n",
        "src/pkg/util.py": "NEEDLE = 1\n",
        ".git/HEAD": "needle: refs/heads/main\n",
    }.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (folder / "blob.bin").write_bytes(b"needle\x00\x01\x02")
    return folder


def tools(project: Path, rg: str | None) -> dict[str, Tool]:
    found = file_tools(ProjectRoot(project), OutputStore(project.parent / "out"), rg=rg)
    return {tool.name: tool for tool in found}


async def call(tool: Tool, **arguments: Any) -> ToolResult:
    return await tool.call(arguments, context=CallContext(call_id="call_1"))


async def ok(tool: Tool, **arguments: Any) -> dict[str, Any]:
    result = await call(tool, **arguments)
    assert result.error is None, result.error
    payload: dict[str, Any] = json.loads(result.content)
    return payload


VISIBLE = [
    ".github/ci.yml",
    ".gitignore",
    ".ignore",
    "README.md",
    "blob.bin",
    "src/.gitignore",
    "src/app.py",
    "src/local_keep.py",
    "src/pkg/util.py",
]


async def test_list_files_honours_the_ignore_files(project: Path, rg: str | None) -> None:
    listing = await ok(tools(project, rg)["list_files"])

    assert listing["files"] == VISIBLE and listing["total"] == len(VISIBLE)
    assert listing["path"] == "." and "note" not in listing


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"glob": "*.py"}, ["src/app.py", "src/local_keep.py", "src/pkg/util.py"]),
        ({"glob": "**/*.py"}, ["src/app.py", "src/local_keep.py", "src/pkg/util.py"]),
        ({"glob": "src/*.py"}, ["src/app.py", "src/local_keep.py"]),
        ({"path": "src/pkg"}, ["src/pkg/util.py"]),
        ({"path": "src", "glob": "pkg/*"}, ["src/pkg/util.py"]),
        ({"glob": "local_tmp.py"}, []),  # a glob never brings back an ignored file
        ({"path": "build"}, ["build/out.py"]),  # an ignored folder named outright is listed
    ],
)
async def test_list_files_narrowed(
    project: Path, rg: str | None, arguments: dict[str, str], expected: list[str]
) -> None:
    listing = await ok(tools(project, rg)["list_files"], **arguments)

    assert listing["files"] == expected and listing["total"] == len(expected)


async def test_list_files_is_bounded_with_the_total(project: Path, rg: str | None) -> None:
    many = project / "many"
    many.mkdir()
    for n in range(620):
        (many / f"f{n:04}.txt").write_text("x\n")

    listing = await ok(tools(project, rg)["list_files"], path="many")

    assert len(listing["files"]) == 500 and listing["total"] == 620
    assert listing["files"][:2] == ["many/f0000.txt", "many/f0001.txt"]
    assert "500 of 620" in listing["note"] and "glob" in listing["note"]


async def test_grep_honours_the_ignore_files(project: Path, rg: str | None) -> None:
    found = await ok(tools(project, rg)["grep"], pattern="needle")

    lines = sorted(found["text"].splitlines())
    scratch = [] if rg else ["scratch.txt:1:needle in scratch"]  # git knows no .ignore
    assert lines == [
        ".github/ci.yml:1:needle: ci",
        "README.md:1:needle in the readme",
        *scratch,
        "src/app.py:3:# needle",
        "src/local_keep.py:1:needle = 'kept'",
    ]
    assert found["matchingLines"] == len(lines) and "note" not in found


async def test_grep_ignore_case_glob_and_path(project: Path, rg: str | None) -> None:
    grep = tools(project, rg)["grep"]

    loose = await ok(grep, pattern="needle", ignore_case=True, glob="*.py")
    assert sorted(loose["text"].splitlines()) == [
        "src/app.py:2:    return 'Needle'",
        "src/app.py:3:# needle",
        "src/local_keep.py:1:needle = 'kept'",
        "src/pkg/util.py:1:NEEDLE = 1",
    ]
    inside = await ok(grep, pattern="NEE+DLE", path="src/pkg")
    assert inside["text"] == "src/pkg/util.py:1:NEEDLE = 1" and inside["path"] == "src/pkg"
    one_file = await ok(grep, pattern="needle|Needle", path="src/app.py")
    assert one_file["matchingLines"] == 2


async def test_grep_is_bounded_with_the_total(project: Path, rg: str | None) -> None:
    (project / "hay.txt").write_text("".join(f"hay {n}\n" for n in range(450)))
    (project / "wide.txt").write_text("hay " + "w" * 5000 + "\n")

    found = await ok(tools(project, rg)["grep"], pattern="^hay")

    lines = found["text"].splitlines()
    assert len(lines) == 200 and found["matchingLines"] == 451
    assert all(len(line) < 400 for line in lines)
    assert "200 of 451" in found["note"]


async def test_a_long_matching_line_is_cut(project: Path, rg: str | None) -> None:
    (project / "wide.txt").write_text("start " + "w" * 5000 + "\n")

    found = await ok(tools(project, rg)["grep"], pattern="start")

    assert found["text"].startswith("wide.txt:1:start") and len(found["text"]) < 400


async def test_no_match_says_so(project: Path, rg: str | None) -> None:
    found = await ok(tools(project, rg)["grep"], pattern="no-such-text-anywhere")

    assert found["matchingLines"] == 0 and found["text"] == "" and "No matches" in found["note"]


async def test_an_invalid_regex_is_a_clear_error(project: Path, rg: str | None) -> None:
    result = await call(tools(project, rg)["grep"], pattern="a(b")

    assert result.error is not None and "valid regex" in result.error
    assert "\n" not in result.error


@pytest.mark.parametrize("name", ["grep", "list_files"])
@pytest.mark.parametrize("given", ["..", "../project/../..", "/etc", "out"])
async def test_paths_outside_are_refused(
    project: Path, rg: str | None, name: str, given: str
) -> None:
    (project / "out").symlink_to(project.parent, target_is_directory=True)
    arguments: dict[str, Any] = {"path": given} | ({"pattern": "x"} if name == "grep" else {})

    result = await call(tools(project, rg)[name], **arguments)

    assert result.error is not None and "outside the project" in result.error


async def test_a_missing_path_is_a_clear_error(project: Path, rg: str | None) -> None:
    result = await call(tools(project, rg)["grep"], pattern="x", path="nowhere")

    assert result.error is not None and "does not exist" in result.error


def test_find_rg_prefers_the_interpreter_scripts_folder() -> None:
    import sysconfig

    found = find_rg()

    assert found is not None and Path(found).parent == Path(sysconfig.get_path("scripts"))
