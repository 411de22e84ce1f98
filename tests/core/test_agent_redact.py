"""`/sync redact`: a push a secret stopped is unblocked from the session, previewed first.
The real agent, real git and a bare remote."""

from __future__ import annotations

import subprocess
from pathlib import Path

from shell.config import Settings
from shell.events import (
    Error,
    SyncFailed,
    SyncFinished,
    SyncRedacted,
    SyncRedactionPreviewed,
)
from tests.core.test_agent_sync import bare, machine, settled, turn

KEY = "AKIAIOSFODNN7REALKEY"
NOTE = "memory/2026-12-02.md"


def head(root: Path) -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()


def remote_log(remote: Path) -> str:
    return subprocess.run(
        ["git", "log", "-p", "--all"], cwd=remote, capture_output=True, text=True, check=True
    ).stdout


async def test_sync_redact_previews_then_applies_and_the_push_goes(
    demo_settings: Settings, tmp_path: Path
) -> None:
    remote = bare(tmp_path)
    root = tmp_path / "ws"
    agent = machine(demo_settings, root, str(remote), "box")
    [_ async for _ in agent.start()]
    assert isinstance((await settled(agent))[-2], SyncFinished)
    (root / NOTE).write_text(f"- the key is {KEY}\n- and the rest of the day\n", encoding="utf-8")
    stopped = await turn(agent, "/sync")
    assert any(isinstance(e, SyncFailed) and e.kind == "secret" for e in stopped), stopped
    before = head(root)

    shown = await turn(agent, "/sync redact")

    [preview] = [e for e in shown if isinstance(e, SyncRedactionPreviewed)]
    assert preview.hint == "to rewrite them so: /sync redact apply" and preview.commits == 1
    assert preview.findings[0].endswith(
        f"{NOTE}:1 · AWS Access Key: - the key is [REDACTED AWS Access Key]"
    )
    assert head(root) == before and KEY not in repr(shown)

    applied = await turn(agent, "/sync redact apply")

    kinds = [type(e) for e in applied]
    assert SyncRedacted in kinds and SyncFinished in kinds, applied
    assert kinds.index(SyncRedacted) < kinds.index(SyncFinished)
    assert (root / NOTE).read_text(encoding="utf-8").startswith("- the key is [REDACTED")
    log = remote_log(remote)
    assert KEY not in log and "[REDACTED AWS Access Key]" in log
    wrong = await turn(agent, "/sync redact now")
    assert isinstance(wrong[-1], Error) and "redact apply" in wrong[-1].message
    await agent.aclose()
