"""Benchmark scopes: does recall ever cross from one project's memory into another's, and what
do scopes cost recall inside a project, against one unscoped workspace in the same run.

Run: `python -m bench.scope_leak [--json] [--projects 10] [--facts 100] [--user-facts 20]`.

- **Facts.** Generated from a seed (`SEED`), never tuned to the search: each project gets
  components drawn from one list and ten attributes per component (host, port, owner, deploy
  day, language, store, timeout, version, team, region) with drawn values, one line per fact,
  ten facts per daily note. The projects share the templates and components, so the same
  question ("Which host does the billing cache run on?") has an answer in every project: the
  hardest case for leakage. The global memory holds facts about the user.
- **Scoped.** A global workspace and one workspace per project laid out as Cairn does
  (`shell.scopes`), each with its own production `MemoryIndex` (MiniLM); each session searches
  through the production `ScopedSearch` (its project and the global memory), k = 5, minScore 0.
  Every fact's question is asked from every project and from a session with no project.
  A **leak** is a hit from a memory the asking session may not read (by its scope label), or a
  hit whose text names another project's facts (by the unique value its line holds).
- **Recall.** hit@5: one of the five hits cites the fact's line; for a project's fact asked in
  its project, for a user's fact asked in each project.
- **Baseline.** The same facts, files and lines in ONE unscoped workspace (one index), each
  asked once: hit@5 there, and how often its best hit is another project's line.

The embedder is loaded once and each question embedded once (a cache shared by the indexes):
the figures are recall and leakage, not speed; the wall time is printed for scale.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("LANCEDB_LOG", "error")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from shell.config import Settings
from shell.events import Event, SearchHit
from shell.memory.index.embed import Embedder, load_embedder
from shell.memory.index.memory_index import MemoryIndex
from shell.memory.search.pipeline import MemorySearch
from shell.memory.search.scoped import ScopedSearch
from shell.scopes.scopes import Scope, Scopes, session_scopes

SEED = 36
K = 5
CLOCK = datetime(2026, 12, 7, tzinfo=UTC)
FIRST_DAY = date(2026, 1, 1)
FACTS_PER_NOTE = 10
PROJECT_NAMES = (
    "heron", "osprey", "kestrel", "plover", "avocet", "bittern", "curlew", "dunlin", "egret",
    "gannet", "harrier", "ibis", "jacana", "lapwing", "merlin", "nightjar",
)  # fmt: skip
COMPONENTS = (
    "billing cache", "search gateway", "auth proxy", "report worker", "upload queue",
    "metrics collector", "email sender", "image resizer", "audit log", "feature flags service",
    "payment webhook", "session store", "rate limiter", "pdf renderer", "sync daemon",
    "backup job", "admin console", "notification hub", "geo lookup", "ledger service",
)  # fmt: skip
WORDS = (
    "amber", "birch", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo",
    "juniper", "kelp", "lumen", "maple", "nimbus", "onyx", "pine", "quartz", "rowan", "slate",
    "tundra", "umber", "vale", "willow", "yarrow", "zephyr",
)  # fmt: skip
PEOPLE = (
    "Amara Okafor", "Bjorn Lund", "Chen Wei", "Dara Singh", "Elif Kaya", "Farid Haddad",
    "Greta Moll", "Hiro Sato", "Ines Duarte", "Jonas Berg", "Kavya Rao", "Lena Novak",
)  # fmt: skip
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
LANGUAGES = ("Go", "Rust", "Kotlin", "Elixir", "TypeScript", "Python", "Java", "C#")
STORES = ("Postgres", "Redis", "DynamoDB", "Cassandra", "SQLite", "ClickHouse", "MongoDB")
TEAMS = ("platform", "payments", "growth", "infra", "data", "security", "mobile")
REGIONS = ("eu-west-1", "us-east-2", "ap-south-1", "eu-central-1", "us-west-2", "sa-east-1")
USER_FACTS = (
    ("The user prefers tabs over spaces in every language.", "Tabs or spaces?"),
    ("The user's name is Ada Lindqvist.", "What is my name?"),
    ("The user lives in Trondheim.", "Where do I live?"),
    ("The user drinks green tea, never coffee.", "What do I drink?"),
    ("The user wants answers in British English.", "Which English should answers use?"),
    ("The user's editor is Helix with the gruvbox theme.", "Which editor do I use?"),
    ("The user works 08:00 to 16:00 Central European Time.", "When do I work?"),
    ("The user reviews pull requests every morning at 09:30.", "When do I review PRs?"),
    ("The user's birthday is 14 March.", "When is my birthday?"),
    ("The user dislikes emoji in commit messages.", "Emoji in commits?"),
    ("The user runs Fedora 41 on a ThinkPad X1.", "What computer do I use?"),
    ("The user's manager is Priya Natarajan.", "Who is my manager?"),
    ("The user prefers short answers with code first.", "How should answers be written?"),
    ("The user signs emails as 'A. L.'.", "How do I sign emails?"),
    ("The user is learning Japanese on Tuesdays.", "What language am I learning?"),
    ("The user's cat is called Miso.", "What is my cat's name?"),
    ("The user takes a run every Sunday at 07:00.", "When do I run?"),
    ("The user's favourite book is The Dispossessed.", "What is my favourite book?"),
    ("The user uses fish as their shell.", "Which shell do I use?"),
    ("The user's desk phone extension is 4471.", "What is my extension?"),
)


@dataclass(frozen=True)
class Fact:
    scope: str
    """"global", or the project's name."""
    text: str
    question: str
    marker: str
    """A value only this fact's line holds (a leak is found by it); "n:…" for the facts whose
    value repeats across projects (an owner, a day), which the text check skips."""
    path: str = ""
    line: int = 0


def _attributes(rng: random.Random, component: str, counter: int) -> list[tuple[str, str, str]]:
    """The (fact tail, question, unique marker) of one component's ten attributes."""
    host = f"{rng.choice(WORDS)}-{counter:04d}.internal"
    port = str(20_000 + counter)
    version = f"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{counter}"
    timeout = str(100 + counter)
    return [
        (f"runs on host {host}", f"Which host does the {component} run on?", host),
        (f"listens on port {port}", f"What port does the {component} listen on?", f"port {port}"),
        (f"is owned by {rng.choice(PEOPLE)}", f"Who owns the {component}?", ""),
        (f"deploys every {rng.choice(DAYS)}", f"When does the {component} deploy?", ""),
        (f"is written in {rng.choice(LANGUAGES)}", f"What language is the {component} in?", ""),
        (f"keeps its data in {rng.choice(STORES)}", f"Where does the {component} keep data?", ""),
        (
            f"times out after {timeout} ms",
            f"What is the timeout of the {component}?",
            f"after {timeout} ms",
        ),
        (
            f"is pinned to version {version}",
            f"Which version is the {component} on?",
            f"version {version}.",
        ),
        (f"pages the {rng.choice(TEAMS)} team", f"Which team does the {component} page?", ""),
        (f"is deployed in {rng.choice(REGIONS)}", f"Which region is the {component} in?", ""),
    ]


def make_facts(projects: int, per_project: int, user_facts: int) -> list[Fact]:
    """The facts of every project (seeded), then the user's."""
    rng = random.Random(SEED)
    facts: list[Fact] = []
    counter = 0
    for name in PROJECT_NAMES[:projects]:
        chosen = rng.sample(COMPONENTS, k=min(len(COMPONENTS), -(-per_project // 10)))
        mine: list[Fact] = []
        for component in chosen:
            counter += 1
            for tail, question, marker in _attributes(rng, component, counter):
                text = f"The {component} {tail}."
                mine.append(Fact(name, text, question, marker or f"{counter}:{tail}"))
        facts += mine[:per_project]
    facts += [Fact("global", t, q, t) for t, q in USER_FACTS[:user_facts]]
    return facts


def lay_out(facts: list[Fact], projects: Sequence[str]) -> list[Fact]:
    """Each fact with the daily note and line it is written to (the same in both setups)."""
    placed: list[Fact] = []
    notes = 0
    for scope in ("global", *projects):
        mine = [f for f in facts if f.scope == scope]
        for n, fact in enumerate(mine):
            day = FIRST_DAY + timedelta(days=notes + n // FACTS_PER_NOTE)
            line = 3 + n % FACTS_PER_NOTE  # after the heading and a blank line
            placed.append(replace(fact, path=f"memory/{day.isoformat()}.md", line=line))
        notes += -(-len(mine) // FACTS_PER_NOTE)
    return placed


def write_notes(root: Path, facts: Sequence[Fact]) -> None:
    notes: dict[str, list[str]] = {}
    for fact in facts:
        notes.setdefault(fact.path, []).append(f"- {fact.text}")
    (root / "memory").mkdir(parents=True, exist_ok=True)
    for path, lines in notes.items():
        day = Path(path).stem
        (root / path).write_text(f"# {day}\n\n" + "\n".join(lines) + "\n", encoding="utf-8")


class CachedQueries:
    """The embedder, with each query embedded once for every index that asks."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self.name = embedder.name
        self.dim = embedder.dim
        self._queries: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._embedder.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        if text not in self._queries:
            self._queries[text] = self._embedder.embed_query(text)
        return self._queries[text]


class BenchRecall:
    """One scope's index and search, as `RecallService` gives them to `ScopedSearch`."""

    def __init__(self, workspace: Path, embedder: Embedder) -> None:
        self.index = MemoryIndex(workspace, embedder, index_dir=workspace / ".cairn" / "index")
        self.index.sync(trigger="manual")
        self.searcher = MemorySearch(self.index, clock=lambda: CLOCK, recency_weight=0.0)

    def before_search(self) -> list[Event]:
        return []


def _cites(hit: SearchHit, fact: Fact) -> bool:
    return hit.path == fact.path and hit.start_line <= fact.line <= hit.end_line


def run(projects: int, per_project: int, user_facts: int) -> dict[str, Any]:
    names = list(PROJECT_NAMES[:projects])
    facts = lay_out(make_facts(projects, per_project, user_facts), names)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cairn-scope-leak-") as tmp:
        root = Path(tmp)
        embedder = CachedQueries(load_embedder("minilm", root / "fastembed"))
        base = Settings(workspace=root / "workspace", embedder="minilm")
        sessions: dict[str, Scopes] = {"(none)": session_scopes(base)}
        for name in names:
            (root / "code" / name).mkdir(parents=True)
            sessions[name] = session_scopes(replace(base, project=root / "code" / name))
        workspaces: dict[str, Scope] = {"global": sessions["(none)"].user}
        workspaces |= {name: sessions[name].own for name in names}
        for scope_name, scope in workspaces.items():
            write_notes(scope.workspace, [f for f in facts if f.scope == scope_name])
        recalls = {label: BenchRecall(s.workspace, embedder) for label, s in workspaces.items()}
        indexed = time.perf_counter()
        scoped = _scoped(facts, names, sessions, workspaces, recalls)
        searched = time.perf_counter()
        for recall in recalls.values():
            recall.index.close()
        write_notes(root / "unscoped", facts)
        baseline = _baseline(facts, BenchRecall(root / "unscoped", embedder))
    return {
        "seed": SEED,
        "projects": projects,
        "project_facts": sum(f.scope != "global" for f in facts),
        "user_facts": sum(f.scope == "global" for f in facts),
        "k": K,
        "scoped": scoped,
        "unscoped": baseline,
        "seconds": {
            "index": round(indexed - started, 1),
            "scoped_searches": round(searched - indexed, 1),
            "total": round(time.perf_counter() - started, 1),
        },
    }


def _scoped(
    facts: list[Fact],
    names: list[str],
    sessions: dict[str, Scopes],
    workspaces: dict[str, Scope],
    recalls: dict[str, BenchRecall],
) -> dict[str, Any]:
    by_label = {scope.label: name for name, scope in workspaces.items()}
    markers = {name: {f.marker for f in facts if f.scope == name} for name in names}
    searches = leaks_by_label = leaks_by_text = 0
    own_hits = own_asked = user_hits = user_asked = 0
    examples: list[str] = []
    for asking, scopes in sessions.items():
        readable = {scope.label for scope in scopes.readable}
        search = ScopedSearch(scopes, [(s, recalls[by_label[s.label]]) for s in scopes.readable])
        foreign = [marker for name in names if name != asking for marker in markers[name]]
        for fact in facts:
            hits = search.search(fact.question, max_results=K, min_score=0.0).hits
            searches += 1
            for hit in hits:
                if hit.scope not in readable:
                    leaks_by_label += 1
                    examples.append(f"{asking}: {hit.scope} {hit.citation}")
                if any(marker in hit.snippet for marker in foreign if ":" not in marker):
                    leaks_by_text += 1
                    examples.append(f"{asking}: {hit.snippet[:80]!r}")
            found = any(_cites(h, fact) and by_label[h.scope] == fact.scope for h in hits)
            if fact.scope == asking:
                own_asked, own_hits = own_asked + 1, own_hits + found
            elif fact.scope == "global" and asking != "(none)":
                user_asked, user_hits = user_asked + 1, user_hits + found
    return {
        "searches": searches,
        "leaks_by_scope": leaks_by_label,
        "leaks_by_text": leaks_by_text,
        "leak_examples": examples[:5],
        "own_hit_at_k": round(own_hits / max(1, own_asked), 3),
        "own_asked": own_asked,
        "user_hit_at_k_in_projects": round(user_hits / max(1, user_asked), 3),
        "user_asked": user_asked,
    }


def _baseline(facts: list[Fact], recall: BenchRecall) -> dict[str, Any]:
    """Each fact asked once in the one workspace; a hit naming another project's value is
    what the same text check counts as a leak in the scoped setup."""
    hits_at_k = best_elsewhere = leaks_by_text = 0
    project_facts = [f for f in facts if f.scope != "global"]
    markers = [(f.scope, f.marker) for f in project_facts if ":" not in f.marker]
    for fact in facts:
        hits = recall.searcher.search(fact.question, max_results=K, min_score=0.0).hits
        hits_at_k += any(_cites(h, fact) for h in hits)
        if fact.scope != "global":
            foreign = [m for scope, m in markers if scope != fact.scope]
            leaks_by_text += sum(any(m in h.snippet for m in foreign) for h in hits)
        if fact.scope != "global" and hits:
            owner = next((f.scope for f in project_facts if _cites(hits[0], f)), fact.scope)
            best_elsewhere += owner != fact.scope
    recall.index.close()
    return {
        "searches": len(facts),
        "leaks_by_text": leaks_by_text,
        "hit_at_k": round(hits_at_k / len(facts), 3),
        "project_facts_best_hit_from_another_project": round(
            best_elsewhere / max(1, len(project_facts)), 3
        ),
    }


def print_table(results: dict[str, Any], out: Any = sys.stdout) -> None:
    s, u = results["scoped"], results["unscoped"]
    print(
        f"{results['project_facts']} project facts in {results['projects']} projects + "
        f"{results['user_facts']} user facts (seed {results['seed']}), k = {results['k']}",
        file=out,
    )
    print("| setup | searches | leaks (scope) | leaks (text) | hit@5 |", file=out)
    print("| --- | ---: | ---: | ---: | ---: |", file=out)
    print(
        f"| scoped: own project | {s['searches']:,} | {s['leaks_by_scope']} | "
        f"{s['leaks_by_text']} | {s['own_hit_at_k']:.3f} |",
        file=out,
    )
    print(
        f"| scoped: user facts in each project | | | | {s['user_hit_at_k_in_projects']:.3f} |",
        file=out,
    )
    print(
        f"| one unscoped workspace | {u['searches']:,} | — | {u['leaks_by_text']:,} | "
        f"{u['hit_at_k']:.3f} |",
        file=out,
    )
    print(
        "\nunscoped: a project fact's best hit was another project's line for "
        f"{u['project_facts_best_hit_from_another_project']:.1%} of the questions",
        file=out,
    )
    for example in s["leak_examples"]:
        print(f"  leak: {example}", file=out)
    seconds = results["seconds"]
    print(
        f"time: index {seconds['index']} s, scoped searches {seconds['scoped_searches']} s, "
        f"total {seconds['total']} s",
        file=out,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="JSON on stdout, table on stderr")
    parser.add_argument("--projects", type=int, default=10)
    parser.add_argument("--facts", type=int, default=100, help="facts per project")
    parser.add_argument("--user-facts", type=int, default=len(USER_FACTS))
    args = parser.parse_args()
    if not 1 <= args.projects <= len(PROJECT_NAMES):
        parser.error(f"--projects must be 1 to {len(PROJECT_NAMES)}")
    results = run(args.projects, args.facts, min(args.user_facts, len(USER_FACTS)))
    print_table(results, sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
