"""Dreaming: what keeps being recalled becomes a proposal for MEMORY.md, reviewed by a person.

A sweep runs three phases over the hit log (`shell.memory.hit_log`) and the daily notes, read
through the memory index:

- light (`light`): the last days' notes; near-duplicates merged, reinforcement counted;
- REM (`rem`): a week of notes; recurring themes and candidate truths;
- deep (`deep`): recalled units ranked by six signals (`signals`) and gated; what passes is
  distilled into one line (`distill`: the fact a chat line states, `facts`), and MEMORY.md
  lines a newer note changes become update proposals (`updates`, on the evidence `changes`
  asks for).

The notes are read as the index chunks them, with the vectors dreaming keeps (`notes`,
`vectors`), so a sweep whose vectors are cached never opens the index.

What is never proposed is in `junk`. Proposals wait in a review queue (`state`, in
`.cairn/dreams/`) and in DREAMS.md (`diary`); accepting one changes MEMORY.md by exactly its line
(`review`), in its own commit. `Dreamer` (`dreamer`) is the whole of it for one workspace. This
package reads memory and writes through `shell.memory.files.door`; it knows nothing of the agent
loop, the lifecycle or the TUI.
"""

from __future__ import annotations

from shell.dreaming.dreamer import Dreamer
from shell.dreaming.review import Decision, Preview

__all__ = ["Decision", "Dreamer", "Preview"]
