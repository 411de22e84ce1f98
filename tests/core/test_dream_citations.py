"""Dreaming proposes to re-cite a MEMORY.md line whose citation of a project file went stale:
real workspace, git, index and sweep; a project edited by a script. The proposal waits for a
person; accepting it writes the line with a fresh hash, in one commit."""

from __future__ import annotations

from pathlib import Path

from shell.dreaming.cited import without_citation
from shell.events import DreamProposed, ProposalAccepted
from shell.memory.citations import refs
from shell.memory.citations.check import check_text
from shell.memory.citations.source import ProjectSource
from shell.memory.citations.stamp import CitationStamper
from shell.tools.project.root import ProjectRoot
from tests.conftest import Clock
from tests.core.dreams import WINDOW, DreamWorld, of

MAKEFILE = "setup:\n\tpip install -e .\ntest:\n\tmake test-all\n"


def world(tmp_path: Path, clock: Clock) -> tuple[DreamWorld, Path]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "Makefile").write_text(MAKEFILE)
    dream = DreamWorld(tmp_path / "ws", clock)
    dream.files.citations = CitationStamper(ProjectRoot(project))
    dream.memory("- The office is in Oslo", "- Tests run with make test-all (Makefile#L3-L4)")
    return dream, project


def marks(dream: DreamWorld, project: Path) -> list[str]:
    text = (dream.root / "MEMORY.md").read_text()
    return [c.mark for c in check_text(text, ProjectSource.of(project))]


async def test_a_stale_citation_is_proposed_again_with_what_the_file_says_now(
    tmp_path: Path, clock: Clock
) -> None:
    dream, project = world(tmp_path, clock)
    assert not of(await dream.sweep(), DreamProposed)  # fresh: nothing to propose
    (project / "Makefile").write_text(MAKEFILE.replace("test-all", "check"))
    (event,) = of(await dream.sweep(), DreamProposed)
    proposal = event.proposal
    assert proposal.kind == "update" and proposal.distilled_by == "rule"
    assert proposal.text == "Tests run with make test-all"
    assert [s.citation for s in proposal.sources] == ["Makefile#L3-L4", "MEMORY.md#L4"]
    assert "it now reads: “test: make check”" in proposal.reason
    memory = (dream.root / "MEMORY.md").read_text()
    assert marks(dream, project) == ["stale"]  # nothing changed before a person accepts

    events = dream.dreamer.accept(proposal.id, "Tests run with make check", window=WINDOW)
    (accepted,) = of(events, ProposalAccepted)
    assert accepted.edited and accepted.commit
    after = (dream.root / "MEMORY.md").read_text()
    assert after.splitlines()[2] == memory.splitlines()[2]  # the other line as it was
    assert after.splitlines()[3].startswith("- Tests run with make check — Source: Makefile#L3-L4@")
    assert marks(dream, project) == ["fresh"]  # hashed anew by the door at acceptance
    assert not of(await dream.sweep(), DreamProposed)


async def test_lines_that_moved_are_re_cited_where_they_are_now(
    tmp_path: Path, clock: Clock
) -> None:
    dream, project = world(tmp_path, clock)
    (project / "Makefile").write_text("# build\n\n" + MAKEFILE)
    (event,) = of(await dream.sweep(), DreamProposed)
    assert event.proposal.sources[0].citation == "Makefile#L5-L6"
    assert "are now at Makefile#L5-L6" in event.proposal.reason
    dream.dreamer.accept(event.proposal.id, window=WINDOW)
    assert marks(dream, project) == ["fresh"]


async def test_a_rejected_re_citation_does_not_come_back_and_gone_is_not_proposed(
    tmp_path: Path, clock: Clock
) -> None:
    dream, project = world(tmp_path, clock)
    (project / "Makefile").write_text(MAKEFILE.replace("test-all", "check"))
    (event,) = of(await dream.sweep(), DreamProposed)
    dream.dreamer.reject(event.proposal.id)
    clock.advance(days=1)
    assert not of(await dream.sweep(), DreamProposed)
    (project / "Makefile").unlink()
    assert not of(await dream.sweep(), DreamProposed)  # gone: nothing to re-cite


async def test_a_stale_source_of_an_accepted_line_is_re_cited_once(
    tmp_path: Path, clock: Clock
) -> None:
    dream, project = world(tmp_path, clock)
    dream.memory("- Setup installs the package — Source: Makefile#L1-L2")
    (project / "Makefile").write_text(MAKEFILE.replace("-e .", "-e '.[dev]'"))
    (event,) = of(await dream.sweep(), DreamProposed)
    assert event.proposal.text == "Setup installs the package"
    dream.dreamer.accept(event.proposal.id, window=WINDOW)
    line = (dream.root / "MEMORY.md").read_text().splitlines()[2]
    assert line.startswith("- Setup installs the package — Source: Makefile#L1-L2@")
    assert line.count("Source:") == 1
    assert marks(dream, project) == ["fresh"]


def test_the_re_cited_fact_reads_as_a_sentence_without_its_citation() -> None:
    for line, fact in [
        ("tests run with make (Makefile#L2@0123abcd).", "tests run with make."),
        ("see `Makefile#L2`, then run it", "see, then run it"),
        ("Makefile#L2 says how", "says how"),
    ]:
        assert without_citation(line, refs.find(line)[0]) == fact
