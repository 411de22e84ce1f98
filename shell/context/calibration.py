"""How a model's provider counts our prompts, learned from what it reports and kept per model.

Our tokenizer is not the provider's, and a provider's chat template adds or leaves out parts of
the request (llama-cpp-python's SmolLM2 template drops the tool schemas: every report was our
count minus the same 345 tokens). So the projection is a line through the provider's latest
report: `reported + slope × (counted now − counted then)`. The slope is fitted over the recent
reports whenever their sizes differ enough to tell a slope from an offset; it is 1 until the
first fit, and a later run of reports at one size keeps the last fit.

The line belongs to the model, not to a conversation: it holds across compactions, `/new` and
restarts (`.cairn/calibration.json`), so only the first call of a model's life goes uncalibrated.

The summariser's prompts are another shape and have a calibration of their own
(`through_origin`): each is a whole new transcript rendered as text, with no earlier prompt to
extend, so it is projected at the latest report's ratio. A template may count the two shapes
very differently: llama-cpp-python's `chatml-function-calling` drops tool results from a turn
but HTML-escapes every quote of a transcript, so SmolLM2's server counted a summariser prompt at
1.67× ours while it counted the turns at 0.65–0.95×.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shell.events import Notice
from shell.secrets.door import write_private

BELIEVABLE = (0.25, 4.0)
"""Reported ÷ counted prompt tokens a provider's report may have to be believed. Outside it the
report is not the whole prompt (a server that counts only what its prompt cache missed, or a
placeholder). Measured: SmolLM2 on llama-cpp-python reports 0.57–0.78 of our count; OpenAI
models within a few percent of it."""
SAMPLES = 32
"""Recent (counted, reported) pairs kept per model for the slope."""
SPREAD = 0.1
"""The slope is fitted only once the counted sizes span this share of the latest one."""
FILE = "calibration.json"


@dataclass
class Calibration:
    """One model's reports: (counted, reported) pairs, oldest first (the last is the anchor),
    and the slope last fitted to them."""

    samples: list[tuple[int, int]] = field(default_factory=list)
    slope: float = 1.0
    through_origin: bool = False
    """Project at the latest report's ratio (no offset, no fitted slope)."""

    @property
    def calibrated(self) -> bool:
        return bool(self.samples)

    def project(self, counted: int) -> int:
        """`counted` (our count of a prompt) as the provider will count it."""
        if not self.samples:
            return counted
        anchor_counted, anchor_reported = self.samples[-1]
        if self.through_origin:
            return round(counted * anchor_reported / anchor_counted)
        return max(0, round(anchor_reported + self.slope * (counted - anchor_counted)))

    def counted_within(self, provider_tokens: int) -> int:
        """The most of our tokens that the provider counts as at most `provider_tokens`."""
        if not self.samples:
            return provider_tokens
        anchor_counted, anchor_reported = self.samples[-1]
        if self.through_origin:
            return provider_tokens * anchor_counted // anchor_reported
        return max(0, anchor_counted + int((provider_tokens - anchor_reported) / self.slope))

    def learn(self, counted: int, reported: int) -> bool:
        """Take the provider's count of a prompt we counted at `counted`; False when it is not
        believable (see `BELIEVABLE`) and was ignored."""
        low, high = BELIEVABLE
        if counted <= 0 or not low <= reported / counted <= high:
            return False
        self.samples = [*self.samples, (counted, reported)][-SAMPLES:]
        if not self.through_origin and (fitted := _fitted_slope(self.samples)) is not None:
            self.slope = min(high, max(low, fitted))
        return True


@dataclass
class KeptCalibration:
    """A calibration and its entry in the store: what it learns is kept for the next session."""

    calibration: Calibration
    store: CalibrationStore
    key: str

    def learn(self, counted: int, reported: int) -> None:
        """Take the provider's count of a prompt we counted at `counted` (see `learn`)."""
        if self.calibration.learn(counted, reported):
            self.store.save(self.key, self.calibration)


def _fitted_slope(samples: list[tuple[int, int]]) -> float | None:
    """Least squares over the samples; None while their sizes are too close to tell."""
    counted = [c for c, _ in samples]
    if max(counted) - min(counted) < SPREAD * counted[-1]:
        return None
    mean_c = sum(counted) / len(counted)
    mean_r = sum(r for _, r in samples) / len(samples)
    covariance = sum((c - mean_c) * (r - mean_r) for c, r in samples)
    return covariance / sum((c - mean_c) ** 2 for c in counted)


class CalibrationStore:
    """The calibrations of every model used in a workspace, in `<state_dir>/calibration.json`.

    A file that cannot be read is set aside (`calibration.json.corrupt-<pid>`) and a model's
    entry of the wrong types skipped: a fresh start (the calibration is derived data), said once
    (`take_notices`)."""

    def __init__(self, state_dir: Path) -> None:
        self.path = Path(state_dir) / FILE
        self._notices: list[Notice] = []

    def take_notices(self) -> list[Notice]:
        notices, self._notices = self._notices, []
        return notices

    def kept(self, model: str, *, through_origin: bool = False) -> KeptCalibration:
        """`model`'s calibration, saved here whenever it learns."""
        return KeptCalibration(self.load(model, through_origin=through_origin), self, model)

    def load(self, model: str, *, through_origin: bool = False) -> Calibration:
        """`model`'s calibration (`model`: a `calibration_key`, or a key of another shape)."""
        entry = self._read().get(model)
        if entry is None:
            return Calibration(through_origin=through_origin)
        try:
            samples = [(int(c), int(r)) for c, r in entry["samples"]][-SAMPLES:]
            return Calibration(samples, float(entry["slope"]), through_origin)
        except (KeyError, TypeError, ValueError):
            self._say(
                f"Skipped the unreadable calibration of {model} in {FILE}; it is learned again"
            )
            return Calibration(through_origin=through_origin)

    def save(self, model: str, calibration: Calibration) -> None:
        models = self._read()
        models[model] = {
            "samples": [list(pair) for pair in calibration.samples],
            "slope": calibration.slope,
        }
        write_private(self.path, json.dumps(models, indent=1, sort_keys=True) + "\n")

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except OSError:
            return {}
        except ValueError:
            data = None
        if isinstance(data, dict):
            return data
        aside = self.path.with_name(f"{FILE}.corrupt-{os.getpid()}")
        with contextlib.suppress(OSError):
            os.replace(self.path, aside)
            self._say(f"Set aside {FILE}, unreadable, as {aside.name}; it is learned again")
        return {}

    def _say(self, message: str) -> None:
        if all(notice.message != message for notice in self._notices):
            self._notices.append(Notice(message, level="warning"))
