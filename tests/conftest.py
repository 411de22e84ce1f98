"""Shared fixtures: a fixed clock, settings for a temporary workspace, a loopback fake model."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("LANCEDB_LOG", "error")

from shell.config import DEMO_MODEL, Settings
from shell.demo import register as register_demo
from shell.model.loader import prepare_litellm
from tests.fakes.openai_server import FakeOpenAI

FIXED_NOW = datetime(2026, 11, 30, 9, 30, tzinfo=timezone(timedelta(hours=1)))


class Clock:
    """A clock tests can move."""

    def __init__(self, now: datetime = FIXED_NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture(scope="session", autouse=True)
def demo_brain_registered() -> None:
    """Models "cairn-demo/…" reach the demo brain, as `build_agent` arranges in the product;
    litellm is loaded, as after start-up, so a test's events do not depend on whether an
    earlier test loaded it (`test_llm` checks the `Loading` events of a first call)."""
    register_demo()
    prepare_litellm()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def fake_openai(fake_server: FakeOpenAI) -> FakeOpenAI:
    fake_server.reset()
    return fake_server


@pytest.fixture
def fake_settings(workspace: Path, clock: Clock, fake_openai: FakeOpenAI) -> Settings:
    """A real litellm model string pointed at the loopback fake server."""
    return Settings(
        workspace=workspace,
        model="openai/fake",
        api_base=fake_openai.base_url,
        api_key="sk-test",
        context_window=32_000,
        retry_base_delay=0.01,
        request_timeout=5.0,
        embedder="hash",
        watch=False,
        clock=clock,
        git_author_email="cairn@localhost",  # the default names this host
        memory_assist="off",  # a loopback server is local: tests of it turn it on
    )


@pytest.fixture
def demo_settings(workspace: Path, clock: Clock) -> Settings:
    return Settings(
        workspace=workspace,
        model=DEMO_MODEL,
        embedder="hash",
        watch=False,
        clock=clock,
        git_author_email="cairn@localhost",
    )


def with_window(settings: Settings, window: int) -> Settings:
    return replace(settings, context_window=window)


@pytest.fixture
def unused_port() -> int:
    """A loopback port nothing listens on (bound, read, released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A loopback port that refuses every connection for the whole test: bound but not
    listening, so no other process can take it meanwhile (a released port can be)."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]
