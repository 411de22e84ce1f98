"""Citations of project files on memory lines: hashed by the write door, checked at recall.

Real parts throughout: a real project folder edited by a script, the real write door over a real
git repo, a real LanceDB index (the hash embedder) searched by the real pipeline. The attacks
are what a model (or a file synced from another machine) could write: paths out of the
project, symlinks to devices and huge files, forged hashes, a thousand citations on one line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from shell.events import SearchPerformed, from_json, to_json
from shell.git.store import GitStore
from shell.memory.citations import refs
from shell.memory.citations.check import check_text
from shell.memory.citations.source import MAX_FILE_BYTES, MOVE_SEARCH_HASHES, ProjectSource
from shell.memory.citations.stamp import CitationStamper
from shell.memory.files.door import MemoryFiles
from shell.memory.files.values import Edit
from shell.memory.index.embed import HashEmbedder
from shell.memory.index.memory_index import MemoryIndex
from shell.memory.search.pipeline import MemorySearch
from shell.secrets import detect
from shell.tools.project.root import ProjectRoot, Reserved
from tests.core.conftest import FIXED

README = "".join(f"README line {n}: tests run with make test {n}\n" for n in range(1, 41))
CODE = "def main():\n    return run(fast=True)\n\n\ndef run(fast):\n    return fast\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "README.md").write_text(README)
    (folder / "src" / "app.py").write_text(CODE)
    return folder


@pytest.fixture
def files(tmp_path: Path, project: Path) -> MemoryFiles:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    store = GitStore(root, clock=lambda: FIXED)
    store.ensure_repo()
    return MemoryFiles(root, store, citations=CitationStamper(ProjectRoot(project)))


def marks(text: str, project: Path | None) -> list[tuple[str, str]]:
    return [(c.citation, c.mark) for c in check_text(text, ProjectSource.of(project))]


def written(files: MemoryFiles, name: str = "MEMORY.md") -> str:
    return (files.root / name).read_text()


# --- finding citations ------------------------------------------------------------------------


def test_every_written_form_of_a_citation_is_found_and_urls_and_memory_citations_are_not() -> None:
    line = (
        "- make test (README.md#L12), `src/app.py#L1-L2`, [docs/a.md#L3-9], 'b.py#L4'@x "
        "https://github.com/o/r/blob/main/c.py#L5 memory/2026-11-02.md#L3 MEMORY.md#L1 x#Ly"
    )
    found = refs.find(line)
    assert [(c.path, c.start, c.end) for c in found] == [
        ("README.md", 12, 12),
        ("src/app.py", 1, 2),
        ("docs/a.md", 3, 9),
        ("b.py", 4, 4),
    ]


# --- hashing at write time ----------------------------------------------------------------------


def test_an_appended_line_carries_the_hash_of_the_lines_it_cites(files: MemoryFiles) -> None:
    outcome = files.append("MEMORY.md", "- tests run with make test (README.md#L12)", reason="tool")
    line = written(files).strip()
    expected = refs.digest(README.splitlines()[11:12])
    assert line == f"- tests run with make test (README.md#L12@{expected})"
    assert outcome.event.citations_unhashed == []
    assert files.git.committed("MEMORY.md") == written(files).encode()  # hashed before commit


def test_the_hash_survives_appending_the_same_fact_again(files: MemoryFiles) -> None:
    files.append("MEMORY.md", "- runs fast (src/app.py#L2)", reason="tool")
    again = files.append("MEMORY.md", "- runs fast (src/app.py#L2)", reason="tool")
    assert again.event.lines_skipped == 1 and again.event.commit is None


def test_a_rewrite_keeps_the_hash_a_kept_line_was_written_with(
    files: MemoryFiles, project: Path
) -> None:
    files.append("MEMORY.md", "- runs fast (src/app.py#L2)", reason="tool")
    old = written(files)
    (project / "src" / "app.py").write_text(CODE.replace("fast=True", "fast=False"))
    files.read("MEMORY.md")
    files.write("MEMORY.md", old + "- run takes fast (src/app.py#L5)\n", reason="tool")
    lines = written(files).splitlines()
    assert lines[0] == old.strip()  # still the old hash: the rewrite does not launder it
    assert marks(lines[0], project) == [("src/app.py#L2", "stale")]
    assert marks(lines[1], project) == [("src/app.py#L5", "fresh")]


def test_a_forged_hash_on_a_new_line_is_replaced_by_the_true_one(
    files: MemoryFiles, project: Path
) -> None:
    files.append(
        "MEMORY.md", "- run fast (src/app.py#L2@deadbeef) and README.md#L1@XYZ", reason="tool"
    )
    line = written(files).strip()
    assert "deadbeef" not in line and "@XYZ" not in line
    assert marks(line, project) == [("src/app.py#L2", "fresh"), ("README.md#L1", "fresh")]


@pytest.mark.parametrize("cited", ["README.md#L16", "README.md#L16@0badc0de"])
def test_a_citation_of_lines_that_say_none_of_the_fact_gets_no_hash(
    files: MemoryFiles, project: Path, cited: str
) -> None:
    # Qwen2.5-Coder-1.5B copied its instructions' example citation onto a fact the user told it;
    # hashed, the invented source showed fresh at every recall
    fact = f"- staging database lives on db-stage-3.internal, port 5433 ({cited})"
    outcome = files.append("MEMORY.md", fact, reason="tool")
    assert outcome.event.citations_unhashed == [
        "README.md#L16: its lines say none of this line's words; cite the lines that say it"
    ]
    line = written(files).strip()
    assert line == "- staging database lives on db-stage-3.internal, port 5433 (README.md#L16)"
    assert marks(line, project) == [("README.md#L16", "unchecked")]


def test_a_citation_sharing_a_word_in_any_form_is_hashed(files: MemoryFiles, project: Path) -> None:
    outcome = files.append(
        "MEMORY.md",
        "- Testing goes through make (README.md#L16); run returns its input (src/app.py#L5-L6)",
        reason="tool",
    )
    assert outcome.event.citations_unhashed == []
    line = written(files).strip()
    assert marks(line, project) == [("README.md#L16", "fresh"), ("src/app.py#L5-L6", "fresh")]


def test_the_secret_scanner_does_not_take_a_hashed_citation_for_a_secret(
    files: MemoryFiles,
) -> None:
    outcome = files.append("MEMORY.md", "- see README.md#L3-L9 and src/app.py#L1-2", reason="tool")
    assert outcome.redaction is None
    assert written(files).count("@") == 2
    assert all(list(detect.findings(line)) == [] for line in written(files).splitlines())


# --- attacks on the write door ------------------------------------------------------------------


def test_paths_out_of_the_project_are_never_read_nor_hashed(
    files: MemoryFiles, project: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("the password is hunter2\n")
    (project / "leak").symlink_to(secret)
    (project / "zero").symlink_to("/dev/zero")
    relative = os.path.relpath(secret, project)
    text = f"- a {relative}#L1 b {secret}#L1 c leak#L1 d zero#L1 e ../../etc/passwd#L1"
    outcome = files.append("MEMORY.md", text, reason="tool")
    assert written(files).strip() == text  # nothing hashed
    reasons = outcome.event.citations_unhashed
    assert len(reasons) == 5
    assert sum("outside the project folder" in r for r in reasons) == 4
    assert sum("absolute path" in r for r in reasons) == 1


def test_a_hash_an_outsider_forged_from_a_file_out_of_reach_is_never_confirmed(
    project: Path, tmp_path: Path
) -> None:
    """Were the file outside read, a correct hash of it would check fresh: an oracle."""
    secret = tmp_path / "outside.txt"
    secret.write_text("the password is hunter2\n")
    (project / "leak").symlink_to(secret)
    true = refs.digest(["the password is hunter2"])
    line = f"- x leak#L1@{true} y {os.path.relpath(secret, project)}#L1@{true} z {secret}#L1@{true}"
    assert [m for _, m in marks(line, project)] == ["unchecked", "unchecked", "unchecked"]


def test_a_reserved_file_is_neither_hashed_nor_checked(tmp_path: Path, project: Path) -> None:
    (project / "config.toml").write_text('api_key = "k"\n')
    root = ProjectRoot(project, reserved=[Reserved(project / "config.toml", "Cairn's config")])
    true = refs.digest(['api_key = "k"'])
    stamped = CitationStamper(root).stamp("", f"- key at config.toml#L1@{true}\n")
    assert stamped.text == "- key at config.toml#L1\n"  # the offered hash is dropped too
    assert "not readable by the model" in stamped.unhashed[0]
    [checked] = check_text(f"config.toml#L1@{true}", ProjectSource(root))
    assert checked.mark == "unchecked"


def test_a_huge_sparse_file_a_device_and_a_fifo_are_refused_without_reading(
    project: Path,
) -> None:
    with (project / "huge.log").open("wb") as huge:
        huge.truncate(1 << 30)  # 1 GB, sparse
    os.mkfifo(project / "pipe")
    (project / "zero").symlink_to("/dev/zero")
    inside = project / "inner"
    inside.mkdir()
    (inside / "zero").symlink_to("/dev/zero")
    stamped = CitationStamper(ProjectRoot(project)).stamp(
        "", "- huge.log#L1 pipe#L1 zero#L1 inner/zero#L2\n"
    )
    assert stamped.text == "- huge.log#L1 pipe#L1 zero#L1 inner/zero#L2\n"
    assert f"larger than {MAX_FILE_BYTES:,} bytes" in stamped.unhashed[-1]
    assert "not a regular file" in stamped.unhashed[-2]
    assert all("outside the project" in r for r in stamped.unhashed[:2])


def test_a_line_of_a_thousand_citations_hashes_and_checks_only_the_first_few(
    files: MemoryFiles, project: Path
) -> None:
    line = "- " + " ".join(f"README.md#L{n % 40 + 1}" for n in range(1000))
    outcome = files.append("MEMORY.md", line, reason="tool")
    stored = written(files).strip()
    assert stored.count("@") == refs.MAX_PER_LINE
    assert "992 citations past the first 8" in outcome.event.citations_unhashed[0]
    checks = check_text(stored, ProjectSource.of(project))
    assert [c.mark for c in checks] == ["fresh"] * refs.MAX_PER_LINE + ["unchecked"]
    assert checks[-1].reason == "992 more citations not checked"


def test_a_range_too_long_or_backwards_is_not_hashed(files: MemoryFiles) -> None:
    outcome = files.append("MEMORY.md", "- README.md#L1-L500 and README.md#L9-L3", reason="tool")
    assert "@" not in written(files)
    assert [r.split(": ")[0] for r in outcome.event.citations_unhashed] == [
        "README.md#L9-L3",
        "README.md#L1-L500",
    ]


# --- checking at recall -------------------------------------------------------------------------


def stamp(project: Path, text: str) -> str:
    return CitationStamper(ProjectRoot(project)).stamp("", text).text


def test_each_edit_of_the_cited_file_gives_its_mark(project: Path) -> None:
    line = stamp(project, "- a README.md#L5 b README.md#L10-L12 c src/app.py#L2 d README.md#L39")
    assert [m for _, m in marks(line, project)] == ["fresh"] * 4
    readme = project / "README.md"
    readme.write_text("# Title\n\n" + README)  # lines moved down by two
    moved = check_text(line, ProjectSource.of(project))
    assert [c.mark for c in moved] == ["stale", "stale", "fresh", "stale"]
    assert [c.moved_to for c in moved] == ["L7", "L12-L14", "", "L41"]
    readme.write_text(README.replace("make test 11", "tox 11"))  # changed in place
    assert [m for _, m in marks(line, project)] == ["fresh", "stale", "fresh", "fresh"]
    readme.write_text("".join(README.splitlines(keepends=True)[:11]))  # truncated
    truncated = check_text(line, ProjectSource.of(project))
    assert [c.mark for c in truncated] == ["fresh", "gone", "fresh", "gone"]
    assert truncated[1].reason == "README.md#L10-L12: README.md has 11 lines now"
    (project / "src" / "app.py").unlink()  # deleted
    assert marks(line, project)[2] == ("src/app.py#L2", "gone")


def test_without_a_hash_or_a_project_a_citation_is_unchecked(project: Path) -> None:
    line = stamp(project, "- a README.md#L5")
    assert marks("- a README.md#L5", project) == [("README.md#L5", "unchecked")]
    [checked] = check_text(line, ProjectSource.of(None))
    assert (checked.mark, checked.reason) == ("unchecked", "no project is open")


@pytest.fixture
def searched(files: MemoryFiles, tmp_path: Path, project: Path) -> MemorySearch:
    files.append(
        "MEMORY.md",
        "- The test suite runs with make test (README.md#L12)\n"
        "- The entry point main calls run fast (src/app.py#L1-L2)\n"
        "- The user likes green tea (no citation)",
        reason="tool",
    )
    index = MemoryIndex(files.root, HashEmbedder(), index_dir=tmp_path / "index")
    index.sync()
    return MemorySearch(index, project=ProjectRoot(project))


def test_a_search_marks_its_hits_and_tells_the_model(searched: MemorySearch, project: Path) -> None:
    (project / "README.md").write_text(README.replace("make test 12", "tox 12"))
    result = searched.search("test suite make test", min_score=0.0, max_results=5)
    by_name = {c.citation: c for hit in result.hits for c in hit.citations}
    assert by_name["README.md#L12"].mark == "stale"
    assert by_name["src/app.py#L1-L2"].mark == "fresh"
    assert all(c.citation in hit.snippet for hit in result.hits for c in hit.citations)
    payload = result.to_model_json()
    shown = next(r for r in payload["results"] if "test suite" in r["snippet"])
    assert "[stale: README.md#L12 changed since this was written]" in shown["sourceChecks"]
    assert "sourceChecks:" in payload["note"]
    assert "citations" in result.timings_ms
    event = result.to_event()
    assert from_json(to_json(event)) == event  # the marks round-trip with the event
    assert isinstance(event, SearchPerformed)


def test_a_search_with_checks_off_marks_nothing(searched: MemorySearch) -> None:
    plain = MemorySearch(searched.index, check_citations=False)
    result = plain.search("test suite make test", min_score=0.0)
    assert all(hit.citations == [] for hit in result.hits)
    assert "sourceChecks" not in json.dumps(result.to_model_json())


def test_an_unknown_mark_in_a_recorded_event_is_refused() -> None:
    hit = {
        "type": "search_performed",
        "query": "q",
        "mode": "hybrid",
        "hits": [
            {
                "path": "MEMORY.md",
                "start_line": 1,
                "end_line": 1,
                "score": 1.0,
                "vector_score": 1.0,
                "text_score": 1.0,
                "snippet": "x",
                "citation": "MEMORY.md#L1",
                "citations": [{"citation": "README.md#L1", "mark": "rotten"}],
            }
        ],
    }
    with pytest.raises(ValueError, match="rotten"):
        from_json(json.dumps(hit))


def test_one_check_reads_at_most_its_byte_budget(project: Path) -> None:
    """Six files of 900 kB cited in one snippet: the first four are read, then it stops."""
    body = "x = 1\n" * 150_000
    for n in range(6):
        (project / f"big{n}.py").write_text(body)
    line = stamp(project, "- " + " ".join(f"big{n}.py#L1" for n in range(4)))
    line += " " + " ".join(f"big{n}.py#L1@{refs.digest(['x = 1'])}" for n in (4, 5))
    checks = check_text(line, ProjectSource.of(project))
    assert [c.mark for c in checks] == ["fresh"] * 4 + ["unchecked"] * 2
    assert "4,000,000-byte budget is spent" in checks[-1].reason


def test_a_symlink_loop_a_folder_and_a_name_too_long_are_refused_with_a_reason(
    project: Path,
) -> None:
    (project / "loop").symlink_to(project / "loop")
    long = "a" * 5000 + ".py"
    stamped = CitationStamper(ProjectRoot(project)).stamp("", f"- loop#L1 src#L1 {long}#L1\n")
    assert "@" not in stamped.text
    loop, folder, named = stamped.unhashed[::-1]
    assert loop.startswith("loop#L1: loop is not readable by the model") and "loop" in loop
    assert folder == "src#L1: src is not a regular file"
    assert named.endswith("cannot be read (File name too long)") and len(named) < 200


def test_dreaming_moving_a_note_s_line_into_memory_keeps_its_hash(
    files: MemoryFiles, project: Path
) -> None:
    """The fact was written against the code of then: promoting it does not vouch for now."""
    files.append(
        "memory/2026-11-02.md", "- run fast (src/app.py#L2) and README.md#L3", reason="tool"
    )
    noted = written(files, "memory/2026-11-02.md").strip()
    (project / "src" / "app.py").write_text(CODE.replace("fast=True", "fast=False"))
    promoted = noted + " — Source: README.md#L4"
    files.rewrite([Edit("MEMORY.md", "", promoted + "\n")], reason="dream", summary="accept")
    line = written(files).strip()
    assert line.startswith(noted)  # the note's hashes, as they were
    assert marks(line, project) == [
        ("src/app.py#L2", "stale"),
        ("README.md#L3", "fresh"),
        ("README.md#L4", "fresh"),  # the new citation is hashed now
    ]


def test_the_search_for_moved_text_stops_at_its_hash_budget(project: Path) -> None:
    """Twenty stale citations of 1 to 20 lines in a file of 4,000: ~80,000 places to hash,
    past the budget; the first ones are re-pointed, the later ones only marked stale."""
    body = [f"line {n}" for n in range(4_000)]
    (project / "big.txt").write_text("\n".join(body) + "\n")
    line = stamp(
        project, "".join(f"- big.txt#L{100 * n}-L{100 * n + n - 1}\n" for n in range(1, 21))
    )
    (project / "big.txt").write_text("\n".join(["new", *body]) + "\n")
    checks = check_text(line, ProjectSource.of(project), limit=20)
    assert [c.mark for c in checks] == ["stale"] * 20
    moved = [c.moved_to for c in checks]
    assert moved[0] == "L101" and moved[-1] == ""
    hashed = sum(4_001 - n + 1 for n in range(1, 21) if moved[n - 1])
    assert hashed <= MOVE_SEARCH_HASHES
