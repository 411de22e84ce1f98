"""Credentials never reach a memory file or its commit (real detect-secrets, real git)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from shell.events import SecretsRedacted
from shell.git.store import GitStore
from shell.memory.files.door import MemoryFiles
from shell.memory.files.values import MemoryWriteError
from shell.memory.tools import memory_tools
from shell.secrets.detect import redact
from tests.git_read import commits, git

# Each planted value is fake, in the shape of its kind.
PLANTED = {
    "AWS Access Key": "AKIAIOSFODNN7EXAMPLE",
    "Anthropic API Key": "sk-ant-api03-Zx9v0Yh3kLmNoPqRsTuVwXyZ0123456789abcdefghIJKLMNOPqrst-xYz",
    "OpenAI Token": "sk-proj-abcdEFGHijklMNOPqrstUVWXyzT3BlbkFJabcdEFGHijklMNOPqrst",
    "GitHub Token": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "Slack Token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "Stripe Access Key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "JSON Web Token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w",
    "Bearer Token": "4f9a8c7d6e5b4a3c2d1e0f9a8b7c6d5e",
    "Basic Auth Credentials": "s3cr3tP4ss",
    "Secret Keyword": "hunter2hunter2",
}
LINES = {
    "AWS Access Key": "- the deploy key is {}",
    "Anthropic API Key": "- my Anthropic key: {}",
    "OpenAI Token": "- OPENAI_API_KEY={}",
    "GitHub Token": "- CI pushes with {}",
    "Slack Token": "- the bot token {} posts to #ops",
    "Stripe Access Key": "- stripe live key {}",
    "JSON Web Token": "- a session token {}",
    "Bearer Token": "- call it with `Authorization: Bearer {}`",
    "Basic Auth Credentials": "- the database is postgres://admin:{}@db.example.com:5432/app",
    "Secret Keyword": '- staging password = "{}"',
}
PRIVATE_KEY = "\n".join(
    [
        "-----BEGIN RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
        "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
        "-----END RSA PRIVATE KEY-----",
    ]
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "memory").mkdir()
    return tmp_path


def files(root: Path, policy: str = "redact") -> MemoryFiles:
    store = GitStore(root, clock=lambda: datetime(2026, 12, 1, tzinfo=UTC))
    store.ensure_repo()
    return MemoryFiles(root, store, secrets=policy)


def everything_committed(root: Path) -> str:
    return "\n".join(git(root, "show", c.sha, "--format=%B") for c in commits(root))


@pytest.mark.parametrize("kind", PLANTED)
def test_each_kind_is_redacted_in_the_file_and_the_commit(root: Path, kind: str) -> None:
    secret = PLANTED[kind]
    line = LINES[kind].format(secret)

    outcome = files(root).append("memory/2026-12-01.md", line, reason="tool")

    note = (root / "memory/2026-12-01.md").read_text()
    assert secret not in note and f"[REDACTED {kind}]" in note
    assert secret not in everything_committed(root)
    assert outcome.redaction == SecretsRedacted(path="memory/2026-12-01.md", kinds=[kind])
    assert outcome.event.commit and outcome.event.lines_added == 1


def test_a_private_key_is_redacted_from_its_first_line_to_its_last(root: Path) -> None:
    memory = files(root)
    memory.read("MEMORY.md")
    content = f"# Memory\n- the deploy key:\n{PRIVATE_KEY}\n- rotate it yearly\n"

    outcome = memory.write("MEMORY.md", content, reason="tool")

    text = (root / "MEMORY.md").read_text()
    assert "MIIEowIBAAKCAQEA" not in text and "VTLw7onLRnrq0" not in text
    assert "- the deploy key:\n[REDACTED Private Key]\n- rotate it yearly" in text
    assert outcome.redaction is not None and outcome.redaction.kinds == ["Private Key"]
    assert "VTLw7onLRnrq0" not in everything_committed(root)


def test_identifiers_that_only_look_random_are_kept(root: Path) -> None:
    text = (
        "- deployed commit 4f9a8c7d6e5b4a3c2d1e0f9a8b7c6d5e4f9a8c7d\n"
        "- request id 3f2a9c1e-7b4d-4e8a-9f0c-2d6b8e1a5c7f, ticket OPS-4821\n"
        "- the wifi is called cairn-guest and the API lives at https://api.example.com/v2\n"
    )
    assert redact(text) == (text, [])


def test_block_refuses_the_write_and_names_the_kind_not_the_value(root: Path) -> None:
    memory = files(root, "block")
    line = LINES["AWS Access Key"].format(PLANTED["AWS Access Key"])

    with pytest.raises(MemoryWriteError) as refused:
        memory.append("memory/2026-12-01.md", line, reason="tool")

    assert "AWS Access Key" in str(refused.value)
    assert PLANTED["AWS Access Key"] not in str(refused.value)
    assert not (root / "memory/2026-12-01.md").exists()


async def test_the_tool_reports_the_redaction_as_an_event(root: Path) -> None:
    [_, append, _] = memory_tools(files(root), today=lambda: "2026-12-01", origin=lambda: "t")
    line = LINES["GitHub Token"].format(PLANTED["GitHub Token"])

    result = await append.call({"text": line})

    assert result.error is None
    kinds = [type(event).__name__ for event in result.events]
    assert kinds == ["SecretsRedacted", "MemoryWritten"]
    assert PLANTED["GitHub Token"] not in result.content


# Secrets written in plain words: no code-like `name = "value"` for detect-secrets' keyword rule.
IN_WORDS = {
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": (
        "- remember that AWS access key id is AKIAIOSFODNN7EXAMPLE and the secret is {}"
    ),
    "9f3c2b7a1d8e4f6a0b5c3d2e1f0a9b8c7d6e5f4a": "- api token: {}",
    "Tr0ub4dor3xK9": "- the wifi password is {}",
    "s3cr3tP4ss": "- the staging db password: {}.",
    "Zx9vQ2mN7vL4wR8tYh3k": "- the API key for staging is {}.",
    "pA55w0rd2026": "- PASSWORD={}",
}


@pytest.mark.parametrize("secret", IN_WORDS)
def test_a_random_token_after_a_secret_s_name_is_redacted(root: Path, secret: str) -> None:
    line = IN_WORDS[secret].format(secret)

    outcome = files(root).append("memory/2026-12-01.md", line, reason="tool")

    note = (root / "memory/2026-12-01.md").read_text()
    assert secret not in note and secret not in everything_committed(root)
    assert "[REDACTED " in note
    assert outcome.redaction is not None


def test_the_aws_secret_in_words_and_its_key_id_are_both_redacted() -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    text, kinds = redact(IN_WORDS[secret].format(secret))

    assert text == (
        "- remember that AWS access key id is [REDACTED AWS Access Key] and the secret is "
        "[REDACTED Secret After A Keyword]"
    )
    assert kinds == ["AWS Access Key", "Secret After A Keyword"]


@pytest.mark.parametrize(
    "line",
    [
        "- the key commit is 4f9a8c7d6e5b4a3c2d1e0f9a8b7c6d5e4f9a8c7d",
        "- release key: commit 4f9a8c7d6e5b4a3c2d1e0f9a8b7c6d5e4f9a8c7d",
        "- the sha256 of the key file is "
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "- cache key 3f2a9c1e-7b4d-4e8a-9f0c-2d6b8e1a5c7f for the build",
        "- the token id is 3f2a9c1e7b4d4e8a9f0c2d6b8e1a5c7f",
        "- the signing key is at /home/bob/.ssh/id_ed25519",
        "- the password is in 1Password, ask Bob",
        "- the key takeaway: release-2026-12-01 went fine",
        "- Bob keeps his keys in locker 0.2",
        "- the key to the v2 migration is feature-flag-rollout-2026",
        "- tokens used: 12345678901234567890 over the week",
    ],
)
def test_identifiers_next_to_a_secret_s_name_are_kept(line: str) -> None:
    assert redact(line) == (line, [])
