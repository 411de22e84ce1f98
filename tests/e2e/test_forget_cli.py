"""`cairn forget` as a user runs it: a preview that names places and counts, never the text;
`--yes` forgets; `--json` is one event per line; what cannot be forgotten exits 1."""

from __future__ import annotations

from pathlib import Path

from shell.git.store import GitStore
from shell.workspace import seed_workspace
from tests.e2e.test_cli import cairn, events_of, of

SECRET = "Kari's door code is 4471"


def _workspace(root: Path) -> Path:
    created = seed_workspace(root)
    (root / "memory" / "2026-11-30.md").write_text(f"- {SECRET}\n- the bins go out on Monday\n")
    store = GitStore(root, author_name="T", author_email="t@example.org")
    store.ensure_repo()
    assert store.commit([*created, "memory/2026-11-30.md"], "workspace: seed").error is None
    return root


def test_preview_then_forget(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    args = ("forget", "--workspace", str(root), "memory/2026-11-30.md:1")

    preview = cairn(*args, home=tmp_path, CAIRN_EMBEDDER="hash")
    assert preview.returncode == 0, preview.stderr
    assert "would forget" in preview.stdout and "memory/2026-11-30.md:1" in preview.stdout
    assert "1 commit rewritten" in preview.stdout and "4471" not in preview.stdout
    assert SECRET in (root / "memory" / "2026-11-30.md").read_text()

    done = cairn(*args, "--yes", "--json", home=tmp_path, CAIRN_EMBEDDER="hash")
    assert done.returncode == 0, done.stderr
    [forgotten] = of(events_of(done), "memory_forgotten")
    assert forgotten["applied"] and forgotten["objects_pruned"] and forgotten["commits"] == 1
    assert "4471" not in done.stdout
    assert (root / "memory" / "2026-11-30.md").read_text() == "- the bins go out on Monday\n"

    again = cairn("forget", "--workspace", str(root), "--text", SECRET, home=tmp_path)
    assert again.returncode == 1 and "in no file" in again.stdout
    outside = cairn("forget", "--workspace", str(root), "../../etc/passwd:1", home=tmp_path)
    assert outside.returncode == 1 and "not allowed" in outside.stdout
