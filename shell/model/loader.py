"""Loading litellm: once, quietly, offline, optionally in the background, with the custom
providers (the demo brain) installed. `client.py` calls the model; this module only gets litellm
ready for it. The import takes seconds, so nothing here runs at import time.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import warnings
from collections.abc import Callable
from typing import Any

from shell.heavy_import import collector_paused

_QUIET_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # else a blocking fetch and late stderr warnings
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "ORT_DISABLE_TELEMETRY": "1",
    "LANCEDB_LOG": "error",
}
_LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")

_prepare_lock = threading.Lock()
_providers_lock = threading.Lock()
_preloading = False
_litellm: Any = None
_providers: dict[str, Callable[[], Any]] = {}


def loaded_litellm() -> Any:
    """litellm if `prepare_litellm` has finished, else None (never waits)."""
    return _litellm


def prepare_litellm() -> Any:
    """Import and quieten litellm once (thread-safe); return the module.

    Sets the offline/quiet environment first (without overriding values the user set), turns
    off litellm's stdout banners and stderr log lines, and installs the registered providers.
    Call it off the UI thread: the first call takes about 3 s.
    """
    global _litellm
    with _prepare_lock:
        if _litellm is not None:
            return _litellm
        for name, value in _QUIET_ENV.items():
            os.environ.setdefault(name, value)
        with warnings.catch_warnings(), collector_paused():
            warnings.simplefilter("ignore")
            import litellm
        litellm.suppress_debug_info = True
        litellm.set_verbose = False  # type: ignore[attr-defined]  # set, though not exported
        # Python warnings go to stderr too; these fire lazily inside litellm's calls.
        warnings.filterwarnings("ignore", module=r"litellm(\.|$)")
        warnings.filterwarnings("ignore", message=r".*`ReadOnly` qualifier", category=UserWarning)
        for name in _LITELLM_LOGGERS:  # litellm logs to stderr, which would land on the TUI
            logger = logging.getLogger(name)
            for handler in list(logger.handlers):
                logger.removeHandler(handler)
            logger.addHandler(logging.NullHandler())
            logger.propagate = False
        with contextlib.suppress(Exception):  # a failed warm-up only costs the first call time
            _warm_up(litellm)
        with _providers_lock:
            for name, make_handler in _providers.items():
                _install_provider(litellm, name, make_handler)
            _litellm = litellm
        return litellm


def preload_litellm() -> None:
    """Start `prepare_litellm` in a background thread (once), so the seconds of the import
    pass while the person reads and types; the first model call waits only for what is left."""
    global _preloading
    with _providers_lock:
        if _preloading or _litellm is not None:
            return
        _preloading = True

    def load() -> None:
        with contextlib.suppress(Exception):  # the first model call reports any failure
            prepare_litellm()

    threading.Thread(target=load, name="cairn-preload", daemon=True).start()


def _warm_up(litellm: Any) -> None:
    """One mocked, streamed call (no network): litellm imports on its first call what a real
    first call would otherwise wait for (0.5 s of a demo answer). The model is one whose
    tokenizer is cl100k, which the context meter loads anyway: a gpt-4o model would load
    o200k too, 0.3–0.6 s that no demo answer needs."""
    response = litellm.completion(
        model="openai/gpt-3.5-turbo",
        messages=[{"role": "user", "content": "warm up"}],
        mock_response="ok",
        stream=True,
        api_key="sk-warm-up",  # mocked: never sent
    )
    for _ in response:
        pass


def register_provider(name: str, make_handler: Callable[[], Any]) -> None:
    """Route the models `name/…` to a litellm custom provider (a `litellm.CustomLLM`).

    `make_handler` is called once litellm is imported (now, if it already is), so registering
    costs no import. Registering a name again replaces its handler.
    """
    with _providers_lock:  # not the import's lock: registering never waits for the import
        _providers[name] = make_handler
        if _litellm is not None:
            _install_provider(_litellm, name, make_handler)


def _install_provider(litellm: Any, name: str, make_handler: Callable[[], Any]) -> None:
    others = [p for p in litellm.custom_provider_map if p.get("provider") != name]
    litellm.custom_provider_map = [*others, {"provider": name, "custom_handler": make_handler()}]
