"""`bench.tui` at a tiny size: it runs and its output has the shape the README's table reads
(no timed assertions: the figures belong to the bench)."""

from __future__ import annotations

import math

from bench.tui import answer_tokens, measure, table


def test_the_answer_is_markdown_cut_into_tokens() -> None:
    pieces = answer_tokens(400)
    text = "".join(pieces)
    assert len(pieces) == 400
    assert "```python" in text and "\n- " in text and "\n1. " in text


async def test_the_bench_runs_at_a_tiny_size() -> None:
    result = await measure(
        [2000], tokens=60, runs=1, resume_turns=(3,), theme_turns=3, paste_lines=20
    )

    assert set(result["first_frame"]) == {"bare_s", "cairn_s", "ratio", "target_ratio"}
    assert set(result["first_frame_headless"]) == {"bare_s", "cairn_s", "ratio"}
    (run,) = result["streaming"]
    assert run["rate"] == 2000 and run["tokens"] == 60
    assert math.isfinite(run["lag_s"])  # the whole answer reached the Markdown widget
    assert result["max_rate_kept"] == (2000 if run["keeps_up"] else 0), "the one run's verdict"
    shown = table(result)
    assert f"| highest streamed rate kept up | {result['max_rate_kept']} tokens/s |" in shown
    assert f"| 2000 | 60 | {run['seconds']:.2f} | {run['lag_s']:.3f} s |" in shown
    assert "| resume of 3 turns, usable |" in shown
    assert "| transcript | 3 turns," in shown and "| paste of 20 lines, painted (a chip) |" in shown
