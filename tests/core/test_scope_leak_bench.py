"""bench.scope_leak at a small size: its facts are the seed's, its leak check finds the leaks
an unscoped workspace has (so a 0 in the scoped setup is a count, not a blind spot), and the
scoped setup has none."""

from __future__ import annotations

from bench.scope_leak import lay_out, make_facts, run


def test_the_facts_are_the_seeds_and_each_has_its_own_line() -> None:
    facts = lay_out(make_facts(3, 20, 4), ["heron", "osprey", "kestrel"])
    assert facts == lay_out(make_facts(3, 20, 4), ["heron", "osprey", "kestrel"])
    assert len({(f.path, f.line) for f in facts}) == len(facts) == 64
    values = [f.marker for f in facts if ":" not in f.marker and f.scope != "global"]
    assert len(values) == len(set(values))  # a value names one fact of one project


def test_scoped_recall_has_no_leak_where_one_workspace_has_many() -> None:
    results = run(projects=2, per_project=20, user_facts=3)
    scoped, unscoped = results["scoped"], results["unscoped"]
    assert scoped["searches"] == 3 * 43  # every fact from each project and from no project
    assert scoped["leaks_by_scope"] == scoped["leaks_by_text"] == 0
    assert unscoped["leaks_by_text"] > 0
    assert scoped["own_hit_at_k"] >= unscoped["hit_at_k"] - 0.05
