"""The lines of a memory file, as the one door for writes compares them: pure functions over
text. (Reads take their window from `shell.tools.window`, like every reading tool.)"""

from __future__ import annotations

import difflib

from shell.text import split_lines


def new_lines(text: str, existing: set[str]) -> tuple[list[str], int]:
    """Lines of `text` whose fact is not already present (`existing` holds lines as they are;
    `same_line` compares them), with blank runs collapsed; and the skip count."""
    seen = {same_line(line) for line in existing}
    fresh: list[str] = []
    skipped = 0
    for line in split_lines(text):
        key = same_line(line)
        if not key:
            if fresh and fresh[-1].strip():
                fresh.append("")
            continue
        if key in seen:
            skipped += 1
            continue
        seen.add(key)
        fresh.append(line.rstrip())
    while fresh and not fresh[-1].strip():
        fresh.pop()
    return fresh, skipped


def same_line(line: str) -> str:
    """What two lines share when they state the same fact: "- The review is on 9 May." and
    "the review is on 9 May" (bullet, closing stop, case and spacing aside). A line that is
    only marks ("---", "* * *") is itself."""
    key = " ".join(line.strip().lstrip("-*+ ").rstrip(".!").split()).casefold()
    return key or line.strip()


def changed_lines(before: bytes, after: bytes) -> tuple[int, int]:
    """(added, removed): a changed line counts once each way, as a diff shows it."""
    old = split_lines(before.decode("utf-8", errors="replace"))
    new = split_lines(after.decode("utf-8", errors="replace"))
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    opcodes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    return sum(j2 - j1 for _, _, _, j1, j2 in opcodes), sum(i2 - i1 for _, i1, i2, _, _ in opcodes)
