"""Where a proposal's sources came from, so a person sees it before accepting, and a proposal
whose sources trace to no commit is never promoted ("memories without provenance cannot be
promoted", OpenClaw #42647)."""

from __future__ import annotations

from dataclasses import replace

from shell.events import Proposal, SourceOrigin, SourceRef
from shell.memory.paths import is_memory_file
from shell.memory.provenance import ROOT_FILES, ProvenanceError, Provenances


def traced(proposal: Proposal, provenances: Provenances) -> Proposal:
    """`proposal` with the origins of its sources as the files and history say now."""
    return replace(proposal, origins=[origin_of(s, provenances) for s in proposal.sources])


def origin_of(source: SourceRef, provenances: Provenances) -> SourceOrigin:
    if not is_memory_file(source.path) and source.path not in ROOT_FILES:
        return SourceOrigin(source.citation, None, "a project file the line cites, as it reads now")
    try:
        found = provenances.of(source.path, source.start_line)
    except ProvenanceError as error:
        return SourceOrigin(source.citation, None, f"no provenance: {error}")
    first = found.origin
    if first is None:
        return SourceOrigin(source.citation, None, f"no provenance: {found.unknown}")
    commit = first.commit
    return SourceOrigin(source.citation, commit.sha, first.summary(), commit.session, commit.turn)


def untraced(proposal: Proposal) -> str | None:
    """Why `proposal` (traced) cannot be promoted, or None when a source has provenance."""
    if proposal.traced:
        return None
    why = "; ".join(f"{o.citation}: {o.summary}" for o in proposal.origins) or "it has no source"
    return (
        f"{proposal.id} traces to no commit, and a line without provenance is not promoted ({why})"
    )
