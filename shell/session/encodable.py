"""Text that can always be written: a lone surrogate (U+D800–U+DFFF, which a model's JSON escape
or a file name read with `surrogateescape` can hold) has no UTF-8, and one such character made
every writer of a session raise. Here it becomes its escape, `\\udcff` as six characters
(Python's `backslashreplace`), so it stays visible and the text stays valid everywhere: a
transcript, a record, a view log, a trace, `cairn run`'s JSON and the request to the provider.
"""

from __future__ import annotations

import re
from typing import Any

_LONE = re.compile("[\ud800-\udfff]")


def escaped(text: str) -> str:
    """`text` with each lone surrogate written as its backslash escape."""
    if _LONE.search(text) is None:
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def escaped_value(value: Any) -> Any:
    """A JSON-like value (a message, a transcript entry) with every string in it `escaped`."""
    if isinstance(value, str):
        return escaped(value)
    if isinstance(value, dict):
        return {escaped_value(key): escaped_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(escaped_value(item) for item in value)
    return value


def escaped_json(line: str) -> str:
    """A JSON text (`json.dumps(..., ensure_ascii=False)`) as if its strings had been `escaped`
    before: a lone surrogate only ever stands inside a string there, and `\\\\udcff` reads back
    as the six characters, never as the surrogate again."""
    if _LONE.search(line) is None:
        return line
    return _LONE.sub(lambda match: f"\\\\u{ord(match[0]):04x}", line)
