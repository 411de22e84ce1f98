"""No symlink race: a thread swaps a checked path for a symlink to outside as fast as it can,
while the real tools read or write it 300 times. Whatever the timing, no read returns the
outside content and no write changes the outside folder (a call may fail: that is the point).

Two places are swapped: the file itself (a regular file, then a symlink to the secret), and a
folder along the path (a real folder, then a symlink to an outside one)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shell.tools.project.files import file_tools, find_rg
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import CallContext, Tool, ToolResult

CALLS = 300
SECRET = "SECRET outside content\n"
INSIDE = "inside content\n"


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "d").mkdir(parents=True)
    outside.mkdir()
    (project / "f.txt").write_text(INSIDE)
    (project / "d" / "f.txt").write_text(INSIDE)
    (outside / "f.txt").write_text(SECRET)
    (outside / "only-outside.txt").write_text(SECRET)
    return project, outside


def swap_file(project: Path, outside: Path) -> Callable[[], None]:
    """f.txt: a regular file, then a symlink to the outside secret, each put in by a rename."""

    def swap() -> None:
        (project / ".link").unlink(missing_ok=True)
        (project / ".link").symlink_to(outside / "f.txt")
        os.replace(project / ".link", project / "f.txt")
        time.sleep(0)
        (project / ".plain").write_text(INSIDE)
        os.replace(project / ".plain", project / "f.txt")
        time.sleep(0)

    return swap


def swap_folder(project: Path, outside: Path) -> Callable[[], None]:
    """d: a real folder, then a symlink to the outside folder."""

    folder, aside = project / "d", project / ".d"

    def swap() -> None:
        if not folder.is_symlink() and folder.is_dir():
            if aside.is_dir():  # a write made d again while it was aside
                shutil.rmtree(aside)
            os.rename(folder, aside)
        if not folder.is_symlink():
            folder.symlink_to(outside, target_is_directory=True)
        time.sleep(0)  # let the tool run while d is the link, and again while it is the folder
        folder.unlink()
        if aside.is_dir():
            os.rename(aside, folder)
        time.sleep(0)

    return swap


@contextlib.contextmanager
def swapping(swap: Callable[[], None]) -> Iterator[list[int]]:
    """`swap` run in a loop on a thread until the block ends; yields [swaps done]."""
    stop, done = threading.Event(), [0]

    def loop() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                swap()
                done[0] += 1

    thread = threading.Thread(target=loop, daemon=True)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # the threads take turns often: more swaps land mid-call
    thread.start()
    try:
        yield done
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)


def tools(project: Path, rg: str | None = None) -> dict[str, Tool]:
    root = ProjectRoot(project, hooks=lambda _: ())  # no git asked: the opens are under test
    found = file_tools(root, OutputStore(project.parent / "out"), rg=rg)
    return {t.name: t for t in found}


async def call(tool: Tool, **arguments: Any) -> ToolResult:
    return await tool.call(arguments, context=CallContext(call_id="race"))


def tally(results: list[ToolResult]) -> dict[str, int]:
    return {
        "read inside": sum(INSIDE.strip() in r.content for r in results if r.error is None),
        "refused": sum(r.error is not None for r in results),
        "caught mid-swap": sum("while it was being opened" in (r.error or "") for r in results),
        "leaked": sum("SECRET" in r.content or "only-outside" in r.content for r in results),
    }


@pytest.mark.parametrize(("swapper", "path"), [(swap_file, "f.txt"), (swap_folder, "d/f.txt")])
def test_a_swapped_symlink_never_lets_a_read_see_outside(
    places: tuple[Path, Path],
    swapper: Callable[[Path, Path], Callable[[], None]],
    path: str,
) -> None:
    project, outside = places
    read_file = tools(project)["read_file"]

    async def reads() -> list[ToolResult]:
        return [await call(read_file, path=path) for _ in range(CALLS)]

    with swapping(swapper(project, outside)) as swaps:
        results = asyncio.run(reads())

    figures = tally(results)
    print(f"\n{path}: {CALLS} reads, {swaps[0]} swaps: {figures}")
    assert figures["leaked"] == 0
    assert swaps[0] > 0


@pytest.mark.parametrize(("swapper", "path"), [(swap_file, "f.txt"), (swap_folder, "d/f.txt")])
def test_a_swapped_symlink_never_lets_a_write_change_outside(
    places: tuple[Path, Path],
    swapper: Callable[[Path, Path], Callable[[], None]],
    path: str,
) -> None:
    project, outside = places
    found = tools(project)
    assert asyncio.run(call(found["read_file"], path=path)).error is None

    async def writes() -> list[ToolResult]:
        done = []
        for n in range(CALLS):
            done.append(await call(found["write_file"], path=path, content=INSIDE))
            done.append(await call(found["write_file"], path=f"d/new{n}.txt", content=INSIDE))
        return done

    with swapping(swapper(project, outside)) as swaps:
        results = asyncio.run(writes())

    figures = {
        "written": sum(r.error is None for r in results),
        "caught mid-swap": sum("while it was being opened" in (r.error or "") for r in results),
    }
    print(f"\n{path}: {len(results)} writes, {swaps[0]} swaps: {figures}")
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt", "only-outside.txt"]
    assert (outside / "f.txt").read_text() == SECRET
    assert not (outside / "f.txt").is_symlink()


@pytest.mark.parametrize(
    ("swapper", "path", "backend"),
    [
        (swap_file, "f.txt", "rg"),
        (swap_folder, "d", "rg"),
        (swap_folder, ".", "rg"),  # a folder the walk goes into, not the one named
        (swap_folder, ".", "fallback"),  # git grep and the pathspec walk
    ],
)
def test_a_swapped_symlink_never_lets_a_search_or_a_listing_see_outside(
    places: tuple[Path, Path],
    swapper: Callable[[Path, Path], Callable[[], None]],
    path: str,
    backend: str,
) -> None:
    """rg follows a symlink named as its argument, and any search program walks by name:
    it gets the opened scope, and what it prints is confirmed against the files opened so."""
    rg = find_rg() if backend == "rg" else None
    if backend == "rg" and rg is None:
        pytest.skip("no rg")
    project, outside = places
    found = tools(project, rg)

    async def searches() -> list[ToolResult]:
        done = []
        for _ in range(CALLS // 2):
            done.append(await call(found["grep"], pattern="side content", path=path))
            done.append(await call(found["list_files"], path=path))
        return done

    with swapping(swapper(project, outside)) as swaps:
        results = asyncio.run(searches())

    figures = tally(results)
    print(f"\n{path} ({backend}): {len(results)} calls, {swaps[0]} swaps: {figures}")
    assert figures["leaked"] == 0
