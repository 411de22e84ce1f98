"""What the why screen lists: the lines of the session's search hits and of the memory files,
read off the UI thread, and read again after a forget changed them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shell.events import SearchHit
from shell.memory.paths import CURATED_FILE, DIARY_FILE, daily_note
from shell.memory.provenance import ProvenanceError, parse_place, traceable
from shell.why import Why


@dataclass(frozen=True)
class Place:
    """A line to trace: its file, its 1-based number, and what the list shows of it."""

    path: str
    line: int
    text: str


@dataclass(frozen=True)
class Listing:
    """One list of the screen: search hits, or a file's lines."""

    title: str
    places: list[Place]


def file_listing_lines(why: Why, path: str) -> list[str]:
    try:
        return (why.store.root / traceable(why.store.root, path)).read_text("utf-8").splitlines()
    except (ProvenanceError, OSError, UnicodeDecodeError):
        return []


def file_listing(why: Why, path: str) -> Listing:
    """The non-blank lines of a workspace file."""
    lines = file_listing_lines(why, path)
    places = [Place(path, n, text) for n, text in enumerate(lines, 1) if text.strip()]
    return Listing(path, places)


def lists_for(
    why: Why, today: str, hits: Sequence[SearchHit], place: str = ""
) -> tuple[list[Listing], Place | None]:
    """The search hits, MEMORY.md, today's note and DREAMS.md, and the line `place` (FILE:LINE)
    names when given (its file listed too). Raises ValueError for a bad `place`."""
    listings = [Listing("search hits", hit_places(why, hits))]
    for path in (CURATED_FILE, daily_note(today), DIARY_FILE):
        listings.append(file_listing(why, path))
    if not place.strip():
        return listings, None
    try:
        path, line = parse_place(place)
        path = traceable(why.store.root, path)
    except ProvenanceError as error:
        raise ValueError(str(error)) from None
    listing = file_listing(why, path)
    select = next((p for p in listing.places if p.line == line), Place(path, line, ""))
    if listing.title not in {shown.title for shown in listings}:
        listings.append(listing)
    return listings, select


def hit_places(why: Why, hits: Sequence[SearchHit]) -> list[Place]:
    """Each line of each hit's window, once, newest search first."""
    places: list[Place] = []
    seen: set[tuple[str, int]] = set()
    texts: dict[str, list[str]] = {}
    for hit in hits:
        if hit.path not in texts:
            texts[hit.path] = file_listing_lines(why, hit.path)
        lines = texts[hit.path]
        for number in range(hit.start_line, min(hit.end_line, len(lines)) + 1):
            if (hit.path, number) not in seen and lines[number - 1].strip():
                seen.add((hit.path, number))
                places.append(Place(hit.path, number, lines[number - 1]))
    return places


def reread(why: Why, listing: Listing) -> Listing:
    """A listing read again after a forget changed the files: a file's lines anew, search
    hits only where their line still reads the same."""
    if listing.places and all(p.path == listing.title for p in listing.places):
        return file_listing(why, listing.title)
    lines = {p.path: file_listing_lines(why, p.path) for p in listing.places}
    kept = [
        p
        for p in listing.places
        if p.line <= len(lines[p.path]) and lines[p.path][p.line - 1] == p.text
    ]
    return Listing(listing.title, kept)
