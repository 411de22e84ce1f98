"""The synthetic year of `bench.dream`: filler facts, the planted cases, and the hit log store
that Cairn used before (the in-run baseline for recording a search's hits)."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shell.fsio import exclusive_lock, write_atomically


@dataclass(frozen=True)
class Planted:
    fact: str
    questions: tuple[str, str, str, str]
    note_age: int
    """Days before the sweep of the note that holds it, inside the age gate (30 days)."""
    asked_ages: tuple[int, int, int, int] = (24, 11, 3, 3)
    """Days before the sweep of each question: three days of the last month."""


PLANTED = [
    Planted(
        "Tom takes his coffee black",
        (
            "how does Tom take his coffee?",
            "what coffee does Tom drink?",
            "does Tom want milk in his coffee?",
            "what is Tom's coffee order?",
        ),
        3,
    ),
    Planted(
        "The staging database is db-staging-2.internal on port 5433",
        (
            "what is the staging database host?",
            "which port does the staging database listen on?",
            "where does the staging DB run?",
            "how do I connect to the staging database?",
        ),
        28,
    ),
    Planted(
        "Priya leads the billing migration",
        (
            "who leads the billing migration?",
            "who is in charge of moving billing?",
            "who owns the billing migration project?",
            "which person runs the billing migration?",
        ),
        12,
    ),
    Planted(
        "Our deploy window is Friday 14:00",
        (
            "when is the deploy window?",
            "what time can we deploy?",
            "which day do deploys happen?",
            "when are we allowed to ship to production?",
        ),
        20,
    ),
    Planted(
        "My sister Ingrid lives in Tromsø",
        (
            "where does Ingrid live?",
            "which city is my sister in?",
            "where is my sister based?",
            "does Ingrid live in Norway?",
        ),
        26,
    ),
    Planted(
        "The office wifi password rotates on the first Monday of each month",
        (
            "when does the wifi password change?",
            "how often is the office wifi password rotated?",
            "is the wifi password rotated monthly?",
            "when is the next wifi password rotation?",
        ),
        25,
    ),
    Planted(
        "Marco is allergic to peanuts",
        (
            "what is Marco allergic to?",
            "does Marco have any food allergies?",
            "can Marco eat peanuts?",
            "what should we avoid cooking for Marco?",
        ),
        15,
    ),
    Planted(
        "The quarterly review is on 12 December",
        (
            "when is the quarterly review?",
            "what date is the quarterly review meeting?",
            "when do we present the quarterly results?",
            "is the quarterly review in December?",
        ),
        7,
    ),
    Planted(
        "Backups go to the cairn-backups-eu bucket every night",
        (
            "where do backups go?",
            "which bucket holds the nightly backups?",
            "how often do backups run?",
            "what is the backup bucket called?",
        ),
        29,
    ),
    Planted(
        "Lena prefers tea with oat milk",
        (
            "what does Lena drink?",
            "how does Lena take her tea?",
            "does Lena like oat milk?",
            "what should I bring Lena from the café?",
        ),
        18,
    ),
]

JUNK = [
    ("small talk", "- hi, how are you today?", 2),
    ("small talk", "- thanks, that was really helpful!", 5),
    ("small talk", "- good morning!", 9),
    (
        "flush prompt",
        "- [cairn:memory-flush] Pre-compaction memory flush. Store the durable facts",
        4,
    ),
    ("flush prompt", "- Pre-compaction memory flush: capture durable memories to disk now", 8),
    ("redacted", "- the staging token is [REDACTED github token]", 3),
    ("redacted", "- rotated the AWS key [REDACTED aws access key] today", 13),
    ("shell command", "- git push --force origin main", 1),
    ("shell command", "- $ kubectl rollout restart deploy/api", 14),
    ("shell command", "- sudo systemctl restart nginx", 15),
    ("heading", "## Infra", 16),
    ("heading", "### Follow-ups", 17),
    ("score metadata", "- deploy notes [score=0.82 recalls=5 avg=0.61]", 18),
    ("score metadata", "- <!-- openclaw-memory-promotion:memory/2026-03-02.md:3:4 -->", 19),
    ("score metadata", "- Tom takes his coffee black [score=0.91 signals=0.4]", 20),
    ("question", "- what time is the standup tomorrow?", 21),
    ("request", "- tell me a joke about deploys", 22),
]
"""(kind, line, age of the note in days): recalled often, never to be proposed. Three more are
lines of an earlier sweep's DREAMS.md block, copied into notes (`bench.dream.echo_dreams`)."""
DREAM_ECHO_AGES = (6, 10, 11)

ONCE_QUESTION = "a question asked once, number {}"

_NAMES = "Ana Ben Chen Dara Emil Femi Gita Hugo Iris Jon Kai Lia Mo Nia Omar Pia Rui Sia".split()
_PROJECTS = "search billing onboarding payments reporting mobile ledger invoicing".split()
_SERVICES = "api gateway worker scheduler indexer mailer exporter auth".split()
_PLACES = "Lisbon Oslo Kraków Leeds Turku Ghent Porto Bergen".split()
_TEMPLATES = (
    "- {name} reviewed the {project} design doc",
    "- Met {name} about {project}; the next step is a prototype",
    "- The {project} build took {n} minutes on CI",
    "- {name} is on call for the {service} this week",
    "- Ordered {n} monitors for the {place} office",
    "- The {service} p99 latency was {n} ms after the release",
    "- {name} moved the {project} standup to 10:{n:02d}",
    "- Lunch with {name} in {place}; we talked about {project}",
    "- The {service} ran out of disk at {n}% and was cleaned up",
    "- {name} shipped the {project} export for the {place} team",
)


def filler_line(rng: random.Random) -> str:
    return rng.choice(_TEMPLATES).format(
        name=rng.choice(_NAMES),
        project=rng.choice(_PROJECTS),
        service=rng.choice(_SERVICES),
        place=rng.choice(_PLACES),
        n=rng.randrange(2, 59),
    )


def old_hit_log(folder: Path) -> Callable[[str, list[tuple[str, int, float]]], None]:
    """The hit log as it was until this bench's change: every search locked the store, read it,
    updated its entries and wrote it back atomically with an fsync (512 entries at most)."""
    store, lock = folder / "recall.json", folder / "recall.json.lock"
    folder.mkdir(parents=True, exist_ok=True)

    def record(query: str, hits: list[tuple[str, int, float]]) -> None:
        digest = hashlib.sha1(query.encode("utf-8")).hexdigest()
        with exclusive_lock(lock):
            entries = json.loads(store.read_text())["entries"] if store.exists() else {}
            for path, line, score in hits:
                key = f"{path}:{line}:{line}"
                entry = entries.pop(key, None) or {
                    "path": path,
                    "start_line": line,
                    "end_line": line,
                    "recall_count": 0,
                    "query_hashes": [],
                    "days": [],
                    "best_score": 0.0,
                    "total_score": 0.0,
                }
                entry["recall_count"] += 1
                entry["query_hashes"] = [*entry["query_hashes"], digest][-32:]
                entry["days"] = [*entry["days"], "2026-11-30"][-16:]
                entry["best_score"] = max(entry["best_score"], score)
                entry["total_score"] += score
                entry["snippet"] = f"text of {path} line {line} " * 8
                entries[key] = entry
            entries = dict(list(entries.items())[-512:])
            write_atomically(store, json.dumps({"version": 1, "entries": entries}), mode=0o600)

    return record
