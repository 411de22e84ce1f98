"""Unblocking a push a secret stopped: the commits not pushed yet are rewritten with it
redacted, the pushed ones keep their SHAs, and then the push goes. Real git, a bare remote."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from shell.events import Notice
from shell.events.sync import SyncFailed, SyncFinished, SyncRedacted, SyncRedactionPreviewed
from tests.sync.conftest import DAY, Machine, git
from tests.sync.test_push_scan_bytes import AWS, TOKEN, commit_bytes

SECRETS = (TOKEN, AWS)


def everything_in(repo: Path) -> bytes:
    """Every object reachable from any ref of `repo` (blobs, trees, commits), and its log."""
    listed = git(repo, "rev-list", "--objects", "--all").split("\n")
    shas = "\n".join(line.split(" ")[0] for line in listed if line) + "\n"
    objects = subprocess.run(
        ["git", "cat-file", "--batch"], cwd=repo, input=shas.encode(), capture_output=True
    ).stdout
    log = subprocess.run(
        ["git", "log", "-p", "--all", "--binary", "--format=%H %an %ae%n%B"],
        cwd=repo,
        capture_output=True,
    ).stdout
    return objects + log


def holds_secret(repo: Path) -> bool:
    data = everything_in(repo)
    spelt = b"\x00".join(bytes([c]) for c in TOKEN.encode())
    return any(s.encode() in data for s in SECRETS) or spelt in data


def identities(repo: Path, revisions: str) -> list[str]:
    return git(repo, "log", "--format=%an|%ae|%aI|%cn|%ce|%cI", revisions).split("\n")


def unpushed_secrets(a: Machine) -> None:
    """Commits after the remote's head that hold the secrets in every way the scan reads."""
    commit_bytes(a, "memory/binary-note.md", b"- a\x00note " + TOKEN.encode() + b"\n- kept\n")
    commit_bytes(a, f"memory/{TOKEN}.md", b"- named after the token\n", "a note")
    commit_bytes(a, ".gitattributes", b"*.md -diff merge=union\n", "hide notes from diffs")
    a.append(DAY, f"- the key is {AWS}", "- and a harmless line")
    commit_bytes(a, "memory/later.md", b"- harmless\n", f"subject\n\nbody says {TOKEN}\n")
    commit_bytes(a, "memory/binary-note.md", b"- the token was removed again\n", "removed")
    commit_bytes(a, "memory/spelt.md", b"- " + b"\x00".join(bytes([c]) for c in TOKEN.encode()))
    (a.root / "memory" / "keys.bin").write_bytes(b"\x89PNG\x00\x00 " + AWS.encode() + b" end")


def test_the_rewrite_removes_every_secret_and_keeps_the_pushed_history(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    a.append(DAY, "- pushed before the secret")
    assert isinstance(a.engine.sync()[-1], SyncFinished)
    pushed = git(a.root, "rev-list", "HEAD").split("\n")
    unpushed_secrets(a)
    stopped = a.engine.sync()
    assert any(isinstance(e, Notice) and "keys.bin" in e.message for e in stopped)
    assert isinstance(stopped[-1], SyncFailed) and stopped[-1].kind == "secret"
    assert "/sync redact" in stopped[-1].message
    head, before = a.head(), identities(a.root, "origin/main..HEAD")
    assert holds_secret(a.root)

    shown = a.engine.redact_unpushed(apply=False, hint="apply it")

    preview = shown[0]
    assert len(shown) == 1 and isinstance(preview, SyncRedactionPreviewed)
    assert a.head() == head and preview.hint == "apply it" and preview.commits == 9
    assert not any(secret in repr(shown) for secret in SECRETS)
    said = "\n".join(preview.findings)
    assert "memory/binary-note.md:1 · GitHub Token: - a?note [REDACTED GitHub Token]" in said
    assert "file name memory/[REDACTED GitHub Token].md · GitHub Token" in said
    assert "commit message, line 3 · GitHub Token: body says [REDACTED GitHub Token]" in said
    assert f"{DAY}:2 · AWS Access Key: - the key is [REDACTED AWS Access Key]" in said
    assert "memory/keys.bin:1 · AWS Access Key" in said and "memory/spelt.md:1" in said

    done = a.engine.redact_unpushed(apply=True)

    assert isinstance(done[-1], SyncRedacted), done
    assert done[-1].commits == 9 and a.head() == done[-1].head != head
    assert git(a.root, "rev-list", "HEAD").split("\n")[-len(pushed) :] == pushed
    assert identities(a.root, "origin/main..HEAD") == before, "authors and dates kept"
    assert not holds_secret(a.root)
    assert git(a.root, "status", "--porcelain") == ""
    assert "[REDACTED AWS Access Key]" in a.text(DAY) and "- and a harmless line" in a.text(DAY)
    assert (a.root / "memory" / "[REDACTED GitHub Token].md").exists()
    assert not (a.root / "memory" / f"{TOKEN}.md").exists()
    assert (a.root / "memory" / "keys.bin").read_bytes().startswith(b"\x89PNG\x00\x00 [REDACTED")
    assert a.text("memory/binary-note.md") == "- the token was removed again\n"

    synced = a.engine.sync()

    assert isinstance(synced[-1], SyncFinished) and synced[-1].pushed_commits == 9, synced
    assert git(bare, "rev-parse", "main") == a.head()
    assert not holds_secret(bare)


def test_a_rewrite_is_refused_when_the_remote_moved(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, b = pair
    a.append(DAY, f"- key {AWS}")
    assert isinstance(a.engine.sync()[-1], SyncFailed)
    b.append(DAY, "- b pushes meanwhile")
    assert isinstance(b.engine.sync()[-1], SyncFinished)
    head = a.head()

    refused = a.engine.redact_unpushed(apply=True)

    assert len(refused) == 1 and isinstance(refused[0], SyncFailed), refused
    assert "has not merged it" in refused[0].message and "sync first" in refused[0].message
    assert a.head() == head and AWS in a.text(DAY)
    assert isinstance(a.engine.sync()[-1], SyncFailed)  # merges b, then stops at the key again
    assert isinstance(a.engine.redact_unpushed(apply=True)[-1], SyncRedacted)
    assert isinstance(a.engine.sync()[-1], SyncFinished)
    assert not holds_secret(bare)
    assert b.text(DAY).count("- b pushes meanwhile") == 1


def test_a_rewrite_is_refused_while_a_tracked_file_is_edited(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    a.append(DAY, f"- key {AWS}")
    assert isinstance(a.engine.sync()[-1], SyncFailed)
    (a.root / "MEMORY.md").write_text("# edited, not committed\n", encoding="utf-8")
    head = a.head()

    refused = a.engine.redact_unpushed(apply=True)

    assert isinstance(refused[-1], SyncFailed) and "MEMORY.md differ" in refused[-1].message
    assert a.head() == head and a.text("MEMORY.md") == "# edited, not committed\n"


def test_nothing_to_redact_rewrites_nothing(bare: Path, pair: tuple[Machine, Machine]) -> None:
    a, _ = pair
    a.append(DAY, "- harmless")
    head = a.head()

    events = a.engine.redact_unpushed(apply=True)

    assert len(events) == 1 and isinstance(events[0], SyncRedactionPreviewed)
    assert events[0].findings == [] and events[0].commits == 1 and a.head() == head


def test_a_secret_in_the_author_is_redacted_and_the_dates_kept(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    (a.root / DAY).write_text("- by someone\n", encoding="utf-8")
    git(a.root, "add", DAY)
    env = ["-c", f"user.name=dev {TOKEN}", "-c", "user.email=x@x"]
    git(a.root, *env, "commit", "-qm", "note", "--date=2001-02-03T04:05:06+07:00")
    assert isinstance(a.engine.sync()[-1], SyncFailed)

    assert isinstance(a.engine.redact_unpushed(apply=True)[-1], SyncRedacted)

    said = git(a.root, "log", "-1", "--format=%an|%aI", "HEAD")
    assert said == "dev [REDACTED GitHub Token]|2001-02-03T04:05:06+07:00"
    assert isinstance(a.engine.sync()[-1], SyncFinished)
    assert not holds_secret(bare)


def test_a_secret_in_a_signature_header_is_found_and_the_signature_dropped(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    a.append(DAY, "- signed, supposedly")
    raw = git(a.root, "cat-file", "commit", "HEAD").split("\n\n", 1)
    signature = (
        f"gpgsig -----BEGIN PGP SIGNATURE-----\n \n token {TOKEN}\n -----END PGP SIGNATURE-----"
    )
    forged = f"{raw[0]}\n{signature}\n\n{raw[1]}\n".encode()
    made = (
        subprocess.run(
            ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
            cwd=a.root,
            input=forged,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    git(a.root, "update-ref", "HEAD", made)
    failed = a.engine.sync()[-1]
    assert isinstance(failed, SyncFailed) and "the headers of commit" in failed.message

    assert isinstance(a.engine.redact_unpushed(apply=True)[-1], SyncRedacted)

    assert "gpgsig" not in git(a.root, "cat-file", "commit", "HEAD")
    assert isinstance(a.engine.sync()[-1], SyncFinished)
    assert not holds_secret(bare)


def test_unpushed_commits_before_the_secret_keep_their_shas(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    a.append(DAY, "- harmless, not pushed yet")
    clean = a.head()
    a.append(DAY, f"- key {AWS}")
    assert isinstance(a.engine.sync()[-1], SyncFailed)

    done = a.engine.redact_unpushed(apply=True)[-1]

    assert isinstance(done, SyncRedacted) and done.commits == 1
    assert git(a.root, "rev-parse", "HEAD~1") == clean


def test_a_rewrite_is_refused_when_the_histories_share_no_commit(
    bare: Path, pair: tuple[Machine, Machine], machine: Callable[[str], Machine]
) -> None:
    """A workspace pointed at the remote by hand, its history never merged with the remote's:
    nothing after a common commit to rewrite, and so nothing is."""
    c = machine("c")
    commit_bytes(c, "memory/own.md", b"- a history of its own\n")
    c.seed().append(DAY, f"- key {AWS}")
    git(c.root, "remote", "add", "origin", str(bare))
    git(c.root, "fetch", "-q", "origin")
    head = c.head()

    refused = c.engine.redact_unpushed(apply=True)

    assert len(refused) == 1 and isinstance(refused[0], SyncFailed), refused
    assert "has not merged it" in refused[0].message and c.head() == head


def test_a_utf16_note_is_redacted_in_place(bare: Path, pair: tuple[Machine, Machine]) -> None:
    a, _ = pair
    said = "- the secret is wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY\n- the rest stays\n"
    commit_bytes(a, "memory/utf16.md", said.encode("utf-16"))
    assert isinstance(a.engine.sync()[-1], SyncFailed)

    assert isinstance(a.engine.redact_unpushed(apply=True)[-1], SyncRedacted)

    kept = (a.root / "memory" / "utf16.md").read_bytes()
    assert "wJalrXUtnFEMI".encode("utf-16-le") not in kept and b"wJalrXUtnFEMI" not in kept
    assert "- the rest stays".encode("utf-16-le") in kept
    assert isinstance(a.engine.sync()[-1], SyncFinished)


def test_what_the_redaction_cannot_take_out_is_said_and_nothing_is_pushed(
    bare: Path, pair: tuple[Machine, Machine], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = pair
    a.append(DAY, f"- key {AWS}")
    a.append(DAY, "- after it")
    assert isinstance(a.engine.sync()[-1], SyncFailed)
    monkeypatch.setattr("shell.sync.redact.redacted", lambda data: data)  # a redaction that fails
    published = git(bare, "rev-parse", "main")

    events = a.engine.redact_unpushed(apply=True)

    assert [type(e) for e in events] == [SyncRedactionPreviewed, SyncRedacted, SyncFailed]
    failed = events[-1]
    assert isinstance(failed, SyncFailed) and failed.message.startswith("after the rewrite, still")
    assert git(bare, "rev-parse", "main") == published
