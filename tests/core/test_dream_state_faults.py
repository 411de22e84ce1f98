"""Dreaming's state under `.cairn/dreams/` that is not what Cairn wrote: a bad hit-log record
is dropped and the sweep goes on (it used to fail every sweep after it), a corrupt state is set
aside, a bad proposal record skipped, a corrupt calibration set aside, each said as a Notice
that reaches the front ends."""

from __future__ import annotations

import json
from pathlib import Path

from shell import events as ev
from shell.build import build_agent
from shell.config import Settings
from shell.dreaming import Decision
from shell.memory.hit_log import dreams_dir
from shell.workspace import init_workspace
from tests.conftest import Clock
from tests.core.agent_helpers import collect
from tests.core.dreams import FOUR, TODAY, WINDOW, DreamWorld, of
from tests.core.test_dream_review import proposed


async def test_a_hit_log_record_of_the_wrong_type_is_dropped_and_dreaming_goes_on(
    tmp_path: Path, clock: Clock
) -> None:
    dream = DreamWorld(tmp_path / "ws", clock)
    dream.note(TODAY, "- Tom takes his coffee black")
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR, score=0.62)
    log = dreams_dir(dream.root) / "recall.log"
    with log.open("a", encoding="utf-8") as file:
        file.write(json.dumps({"at": 1764500000, "q": "ab", "best": 0.6, "hits": []}) + "\n")
        file.write(json.dumps({"at": clock.now.isoformat(), "q": "cd", "best": "high"}) + "\n")

    events = await dream.sweep()
    assert not of(events, ev.DreamSweepSkipped)
    (notice,) = of(events, ev.Notice)
    assert "Dropped 2 record(s)" in notice.message and notice.level == "warning"
    assert len(of(events, ev.DreamProposed)) == 1

    clock.advance(hours=1)
    again = await dream.sweep()
    assert not of(again, ev.DreamSweepSkipped) and not of(again, ev.Notice)


async def test_a_bad_proposal_record_is_skipped_and_the_others_kept(
    tmp_path: Path, clock: Clock
) -> None:
    dream, proposal_id = await proposed(tmp_path, clock)
    state = dreams_dir(dream.root) / "proposals.json"
    data = json.loads(state.read_text())
    data["records"].append({"proposal": "not a proposal", "status": "open", "created": "x"})
    state.write_text(json.dumps(data))

    events = dream.dreamer.decide(Decision("accept", proposal_id), window=WINDOW)
    (notice,) = of(events, ev.Notice)
    assert "Skipped 1 unreadable proposal record" in notice.message
    assert of(events, ev.ProposalAccepted)


async def test_a_corrupt_dream_state_and_calibration_are_set_aside_and_said_at_the_start(
    demo_settings: Settings,
) -> None:
    init_workspace(demo_settings)
    folder = dreams_dir(demo_settings.workspace)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "proposals.json").write_text('{"version": 1, "records": [')
    (demo_settings.state_dir / "calibration.json").write_text("[1, 2")

    agent = build_agent(demo_settings, index_in_background=False)
    events = await collect(agent.start())
    await agent.aclose()

    (notice,) = [n for n in of(events, ev.Notice) if "dreaming's state" in n.message]
    assert "Set aside" in notice.message and notice.level == "warning"
    assert list(folder.glob("proposals.json.corrupt-*"))
    assert not (folder / "proposals.json").exists()
    (calibration,) = [n for n in of(events, ev.Notice) if "calibration.json" in n.message]
    assert "Set aside" in calibration.message


async def test_a_vector_cache_that_is_not_what_cairn_wrote_is_rebuilt(
    tmp_path: Path, clock: Clock
) -> None:
    """The cache is derived: garbage, another model's or another shape's vectors, or NaNs are
    never compared with (a row of the wrong width failed every sweep after it); the sweep embeds
    again and writes it whole."""
    import hashlib

    import numpy as np

    dream = DreamWorld(tmp_path / "ws", clock, min_score=0.0)
    dream.memory("- Priya leads billing")
    path = dream.note(TODAY, "- Tom takes his coffee black")
    dream.recalled(path, 1, FOUR)
    cache = dreams_dir(dream.root) / "vectors.npz"
    model = dream.recall.index.embedder.name
    key = np.array([hashlib.sha1(b"Priya leads billing").hexdigest()])  # MEMORY.md's line
    for bad in (
        b"not a zip file",
        {"keys": key, "vectors": np.ones((1, 7), np.float32), "model": model},
        {"keys": key, "vectors": np.full((1, 384), np.nan, np.float32), "model": model},
        {"keys": np.array([*key, "l"]), "vectors": np.ones((1, 384), np.float32), "model": model},
    ):
        if isinstance(bad, bytes):
            cache.write_bytes(bad)
        else:
            with cache.open("wb") as file:
                np.savez(file, **bad)
        events = await dream.sweep()
        assert not of(events, ev.DreamSweepSkipped), bad
        with np.load(cache) as kept:
            assert kept["vectors"].shape[1] == dream.recall.index.embedder.dim
            assert np.isfinite(kept["vectors"]).all()
    assert len(dream.dreamer.open_proposals(window=WINDOW)) == 1
