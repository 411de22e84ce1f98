"""The provider's count of our prompts, learned per model: a line through its latest report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shell.context.calibration import SAMPLES, Calibration, CalibrationStore

SMOLLM2 = [
    (806, 461),
    (863, 518),
    (896, 551),
    (1254, 910),
    (1499, 1156),
    (1587, 1244),
    (1232, 888),  # after a compaction
    (1257, 913),
]
"""(our count, the server's) of eight calls to SmolLM2-135M on llama-cpp-python at a 2,048
window, measured with bench/real_server: its chat template drops the tool schemas."""


SMOLLM2_SUMMARISER = [
    (1011, 1691),
    (913, 1286),
    (1104, 1504),
    (1112, 1362),
    (1155, 1410),
    (1076, 1390),
    (1119, 1438),
]
"""(our count, the server's) of the summariser's prompts in the same run: its template
HTML-escapes every quote of a transcript (1.2–1.7× our count), and each prompt is a new one."""


def worst_error(pairs: list[tuple[int, int]], calibration: Calibration) -> float:
    """The worst projection ÷ report (or its inverse) of every call after the first."""
    worst = 1.0
    for number, (counted, reported) in enumerate(pairs):
        if number:
            projected = calibration.project(counted)
            worst = max(worst, projected / reported, reported / projected)
        assert calibration.learn(counted, reported)
    return worst


def test_a_server_that_leaves_out_a_fixed_part_is_projected_exactly() -> None:
    assert worst_error(SMOLLM2, Calibration()) < 1.01


def test_a_provider_that_counts_more_per_token_is_learned_as_a_slope() -> None:
    # a conversation that grows by up to a fifth a call to 95k of our tokens and is compacted to
    # 20k, counted at 1.2× ours (until the sizes tell a slope, the line's slope is 1)
    sizes = [*(int(1_000 * 1.2**call) for call in range(26)), 20_000, 21_000]
    pairs = [(size, size * 6 // 5) for size in sizes]
    calibration = Calibration()
    assert worst_error(pairs, calibration) < 1.1
    assert calibration.slope == pytest.approx(1.2, abs=0.01)


def test_a_run_of_reports_at_one_size_keeps_the_slope_it_learned() -> None:
    calibration = Calibration()
    for size in (10_000, 30_000, 60_000):
        calibration.learn(size, size * 2)
    for _ in range(SAMPLES):
        calibration.learn(60_000, 120_000)
    assert len(calibration.samples) == SAMPLES
    assert calibration.slope == pytest.approx(2.0)
    assert calibration.project(10_000) == 20_000


def test_prompts_with_nothing_in_common_are_projected_at_the_latest_ratio() -> None:
    # a line through the latest report fits a slope to prompts that differ in what they hold,
    # not in size: it swung to 4× and back (worst 1.36) where the ratio stays within 1.2
    assert worst_error(SMOLLM2_SUMMARISER, Calibration()) > 1.3
    by_ratio = Calibration(through_origin=True)
    assert worst_error(SMOLLM2_SUMMARISER, by_ratio) < 1.2
    assert by_ratio.slope == 1.0
    assert by_ratio.project(1_000) == round(1_000 * 1438 / 1119)


@pytest.mark.parametrize("through_origin", [False, True])
def test_what_fits_a_provider_budget_is_the_projection_undone(through_origin: bool) -> None:
    calibration = Calibration(through_origin=through_origin)
    assert calibration.counted_within(1_024) == 1_024  # nothing learned: as we count
    for counted, reported in SMOLLM2 if not through_origin else SMOLLM2_SUMMARISER:
        calibration.learn(counted, reported)
    within = calibration.counted_within(1_024)
    assert calibration.project(within) <= 1_024 < calibration.project(within + 2)


@pytest.mark.parametrize("reported", [7, 10_000_000, 0])
def test_a_report_that_cannot_be_the_whole_prompt_is_ignored(reported: int) -> None:
    calibration = Calibration()
    assert not calibration.learn(1_000, reported)
    assert not calibration.calibrated and calibration.project(1_000) == 1_000


def test_the_store_keeps_each_models_line_and_shrugs_off_a_broken_file(tmp_path: Path) -> None:
    store = CalibrationStore(tmp_path)
    smol = Calibration()
    for counted, reported in SMOLLM2:
        smol.learn(counted, reported)
    store.save("openai/smollm2 @ http://127.0.0.1:8088/v1", smol)
    store.save("openai/other", Calibration([(100, 120)]))

    again = CalibrationStore(tmp_path)  # a new process: nothing shared but the file
    assert again.load("openai/smollm2 @ http://127.0.0.1:8088/v1") == smol
    assert again.load("openai/other").project(200) == 220
    assert not again.load("never/used").calibrated

    store.path.write_text('{"openai/other": {"samples": [["x"]], "slope": 1}}')
    assert not again.load("openai/other").calibrated
    store.path.write_text("not json")
    assert not again.load("openai/other").calibrated
    store.save("openai/other", Calibration([(100, 90)]))
    assert json.loads(store.path.read_text())["openai/other"]["samples"] == [[100, 90]]


def test_a_broken_file_or_entry_is_set_aside_and_said_once(tmp_path: Path) -> None:
    store = CalibrationStore(tmp_path)
    store.path.write_text('{"openai/other": {"samples": 7, "slope": 1}}')
    assert not store.load("openai/other").calibrated
    (skipped,) = store.take_notices()
    assert "Skipped the unreadable calibration of openai/other" in skipped.message
    store.path.write_text("not json")
    assert not store.load("openai/other").calibrated
    (aside,) = store.take_notices()
    assert "Set aside calibration.json" in aside.message and aside.level == "warning"
    assert list(tmp_path.glob("calibration.json.corrupt-*")) and not store.path.exists()
    assert store.take_notices() == []


def test_a_kept_calibration_is_saved_as_it_learns(tmp_path: Path) -> None:
    key = "openai/smollm2 @ http://127.0.0.1:8088/v1 · summariser"
    kept = CalibrationStore(tmp_path).kept(key, through_origin=True)
    kept.learn(1011, 1691)
    kept.learn(1000, 7)  # not believable: not learned, nothing saved
    again = CalibrationStore(tmp_path).load(key, through_origin=True)
    assert again == kept.calibration == Calibration([(1011, 1691)], through_origin=True)
