"""The dream review through `cairn mcp`: a client lists what dreaming proposes and passes on the
user's decisions, each one commit naming it, as the TUI's review and `cairn dream` make them."""

from __future__ import annotations

from pathlib import Path

from shell.events import DreamProposed
from tests.conftest import Clock
from tests.core.dreams import FOUR, TODAY, DreamWorld, of
from tests.e2e.mcp_helpers import connected, git, head, payload, text


async def two_proposals(root: Path, clock: Clock) -> tuple[str, str]:
    """The ids of the proposals of Tom's coffee (line 1) and of Ada's train (line 2)."""
    dream = DreamWorld(root, clock)
    dream.memory("- The office is in Oslo")
    dream.note(TODAY, "- Tom takes his coffee black", "- Ada rides the 7:40 train")
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR, score=0.62)
    dream.recalled(f"memory/{TODAY}.md", 2, [f"{q} train" for q in FOUR], score=0.62)
    proposed = {
        e.proposal.sources[0].start_line: e.proposal.id
        for e in of(await dream.sweep(), DreamProposed)
    }
    return proposed[1], proposed[2]


async def test_a_client_lists_accepts_and_rejects_proposals_each_in_one_commit(
    tmp_path: Path, clock: Clock
) -> None:
    ws = tmp_path / "ws"
    accepted, rejected = await two_proposals(ws, clock)
    before = head(ws)
    async with connected(ws, tmp_path, name="reviewer") as client:
        listed = payload(await client.call_tool("dream_proposals", {}))
        by_id = {p["id"]: p for p in listed["proposals"]}
        assert sorted(by_id) == sorted([accepted, rejected])
        coffee = by_id[accepted]
        assert coffee["changes"] and coffee["changes"][-1].startswith("+- ")
        assert coffee["sources"][0]["citation"].startswith(f"memory/{TODAY}.md#L1")
        yes = payload(await client.call_tool("dream_accept", {"id": accepted}))
        no = payload(await client.call_tool("dream_reject", {"id": rejected}))
        again = await client.call_tool("dream_accept", {"id": rejected})
        assert again.is_error and "rejected, not open" in text(again)
        missing = await client.call_tool("dream_reject", {"id": "d-nope"})
        assert missing.is_error and "no proposal" in text(missing)
        left = payload(await client.call_tool("dream_proposals", {}))
    assert (yes["accepted"], yes["open"], no["rejected"], no["open"]) == (accepted, 1, rejected, 0)
    assert left["proposals"] == []
    commits = git(ws, "log", f"{before}..HEAD", "--format=%H %s").splitlines()
    assert [line.split(" ", 1)[0] for line in commits] == [no["commit"], yes["commit"]]
    assert all(" memory(dream): " in line for line in commits)
    for sha in (yes["commit"], no["commit"]):
        assert "mcp client reviewer 1.0 over stdio" in git(ws, "log", "-1", "--format=%b", sha)
    assert "Tom takes his coffee black" in (ws / "MEMORY.md").read_text()
    assert "Ada rides" not in (ws / "MEMORY.md").read_text()
