"""What the why screen lists: the lines of the session's search hits and of the memory files
(the global memory's, and the project's when one is open), read off the UI thread, and read
again after a forget changed them. Each line knows its memory (`scope`, the label a hit
shows), so it is traced in that memory's history."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from shell.events import SearchHit
from shell.memory.paths import CURATED_FILE, DIARY_FILE, daily_note
from shell.memory.provenance import ProvenanceError, parse_place, traceable
from shell.why import Why

GLOBAL = "global"


@dataclass(frozen=True)
class Place:
    """A line to trace: its memory, its file, its 1-based number, and what the list shows."""

    path: str
    line: int
    text: str
    scope: str = GLOBAL

    @property
    def name(self) -> str:
        """`file:line`, with the memory's label when it is not the global one."""
        where = f"{self.path}:{self.line}"
        return where if self.scope == GLOBAL else f"[{self.scope}] {where}"


@dataclass(frozen=True)
class Listing:
    """One list of the screen: search hits, or the lines of one memory's file (`file`)."""

    title: str
    places: list[Place]
    file: str | None = None
    scope: str = GLOBAL


def file_lines(why: Why, path: str) -> list[str]:
    try:
        return (why.store.root / traceable(why.store.root, path)).read_text("utf-8").splitlines()
    except (ProvenanceError, OSError, UnicodeDecodeError):
        return []


def file_listing(whys: Mapping[str, Why], path: str, scope: str = GLOBAL) -> Listing:
    """The non-blank lines of a memory's file."""
    lines = file_lines(whys[scope], path)
    places = [Place(path, n, text, scope) for n, text in enumerate(lines, 1) if text.strip()]
    title = path if scope == GLOBAL else f"[{scope}] {path}"
    return Listing(title, places, path, scope)


def lists_for(
    whys: Mapping[str, Why], today: str, hits: Sequence[SearchHit], place: str = ""
) -> tuple[list[Listing], Place | None]:
    """The search hits, then each memory's MEMORY.md and today's note (a project's first), and
    DREAMS.md; and the line `place` (FILE:LINE, of the global memory) names when given (its
    file listed too). Raises ValueError for a bad `place`."""
    listings = [Listing("search hits", hit_places(whys, hits))]
    for scope in sorted(whys, key=lambda label: label == GLOBAL):
        listings += [file_listing(whys, path, scope) for path in (CURATED_FILE, daily_note(today))]
    listings.append(file_listing(whys, DIARY_FILE))
    if not place.strip():
        return listings, None
    try:
        path, line = parse_place(place)
        path = traceable(whys[GLOBAL].store.root, path)
    except ProvenanceError as error:
        raise ValueError(str(error)) from None
    listing = file_listing(whys, path)
    select = next((p for p in listing.places if p.line == line), Place(path, line, ""))
    if listing.title not in {shown.title for shown in listings}:
        listings.append(listing)
    return listings, select


def hit_places(whys: Mapping[str, Why], hits: Sequence[SearchHit]) -> list[Place]:
    """Each line of each hit's window, once, newest search first (a hit of a memory this
    session does not hold, none)."""
    places: list[Place] = []
    seen: set[tuple[str, str, int]] = set()
    texts: dict[tuple[str, str], list[str]] = {}
    for hit in hits:
        if hit.scope not in whys:
            continue
        key = (hit.scope, hit.path)
        if key not in texts:
            texts[key] = file_lines(whys[hit.scope], hit.path)
        lines = texts[key]
        for number in range(hit.start_line, min(hit.end_line, len(lines)) + 1):
            if (*key, number) not in seen and lines[number - 1].strip():
                seen.add((*key, number))
                places.append(Place(hit.path, number, lines[number - 1], hit.scope))
    return places


def reread(whys: Mapping[str, Why], listing: Listing) -> Listing:
    """A listing read again after a forget changed the files: a file's lines anew, search
    hits only where their line still reads the same."""
    if listing.file is not None:
        return file_listing(whys, listing.file, listing.scope)
    lines = {(p.scope, p.path): file_lines(whys[p.scope], p.path) for p in listing.places}
    kept = [
        p
        for p in listing.places
        if p.line <= len(now := lines[(p.scope, p.path)]) and now[p.line - 1] == p.text
    ]
    return Listing(listing.title, kept)
