"""A result too big for the context is cut before it enters the transcript, and can be read on."""

from __future__ import annotations

import json
from pathlib import Path

from shell.tools.fitting import fit_result, result_budget
from shell.tools.project.outputs import OutputStore
from shell.tools.toolbox import ToolResult


def test_a_small_result_passes_untouched(tmp_path: Path) -> None:
    result = ToolResult('{"text": "short"}')
    assert fit_result(result, "c1", OutputStore(tmp_path), 1_000) is result
    assert not list(tmp_path.iterdir())


def test_a_json_result_is_cut_inside_its_longest_text_and_stays_json(tmp_path: Path) -> None:
    lines = [f"line {n}" for n in range(1, 5_001)]
    result = ToolResult(json.dumps({"path": "big.log", "text": "\n".join(lines), "from": 1}))
    outputs = OutputStore(tmp_path)
    fitted = fit_result(result, "call_3", outputs, 2_000)
    payload = json.loads(fitted.content)
    assert len(fitted.content) <= 2_400
    assert payload["path"] == "big.log" and payload["from"] == 1
    text = payload["text"]
    assert text.startswith("line 1\nline 2\n") and text.endswith("line 5000")
    marker = next(line for line in text.splitlines() if line.startswith("[…"))
    assert 'read_output(ref="output:call_3", from=' in marker
    first_cut = int(marker.split("from=")[1].split(")")[0])
    assert f"line {first_cut - 1}\n[…" in text  # the marker says where the cut begins
    assert outputs.find("output:call_3").read_text() == "\n".join(lines)  # kept whole


def test_plain_text_is_cut_at_line_ends(tmp_path: Path) -> None:
    text = "".join(f"row {n}\n" for n in range(10_000))
    fitted = fit_result(ToolResult(text), "c2", OutputStore(tmp_path), 1_500)
    head, _, tail = fitted.content.partition("\n[…")
    assert head.endswith("\n") or head.splitlines()[-1].startswith("row ")
    assert all(line.startswith("row ") for line in head.splitlines())
    assert tail.splitlines()[-1] == "row 9999"


def test_the_budget_follows_the_window() -> None:
    assert result_budget(2_048) == 1_024
    assert result_budget(4_096) == 2_048
    assert result_budget(1_000_000) == 48_000
    assert result_budget(512) == 1_000


def test_a_json_list_is_cut_by_items_and_the_result_fits(tmp_path: Path) -> None:
    paths = [f"src/package_{n:04}/module.py" for n in range(500)]
    listing = ToolResult(json.dumps({"path": ".", "files": paths, "total": 500}))
    outputs = OutputStore(tmp_path)
    fitted = fit_result(listing, "call_9", outputs, 2_048)
    assert len(fitted.content) <= 2_048 + 1_000
    payload = json.loads(fitted.content)
    assert payload["total"] == 500 and payload["files"][0] == paths[0]
    kept = len(payload["files"]) - 1
    marker = payload["files"][-1]
    assert f"{500 - kept:,} more items cut" in marker and f"from={kept + 1}" in marker
    whole = outputs.find("output:call_9").read_text().splitlines()
    assert json.loads(whole[kept]) == paths[kept]  # from= points at the first item cut
