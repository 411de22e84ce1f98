"""Markdown parsed on several threads at once must not race on mdurl's lazy tables."""

from __future__ import annotations

import mdurl._decode
import mdurl._encode

import widgets  # noqa: F401  (importing the UI builds the tables)


def test_mdurl_tables_are_complete_before_any_parser_thread_runs() -> None:
    for table in (*mdurl._encode.encode_cache.values(), *mdurl._decode.decode_cache.values()):
        assert len(table) == 128
    assert mdurl.ENCODE_DEFAULT_CHARS in mdurl._encode.encode_cache
