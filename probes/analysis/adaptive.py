"""An adaptive sweep for the PSE: which difference to ask next, and when to stop.

A grid posterior over (pse, slope) of the logistic psychometric function, updated after every
answer, as QUEST+ does (Watson 2017) but for graded answers: the next difference is the candidate
where the curves the posterior still holds disagree most about the answer (the posterior variance
of the predicted probability). `done` says when the PSE's 95% credible interval is narrower
than a width; a run's sweep (probes/running/adaptive_sweep.py) stops instead by the interval of
`report --fit`, which it prints, so that a run has one answer (issue 34).
A graded answer (the probability of the positive answer, probes/analysis/graded.py) updates the
posterior by its Bernoulli quasi-likelihood, y log P + (1 - y) log(1 - P); a choice is the case
y in {0, 1}.

Written here with numpy rather than taken from a library: `questplus` (the maintained QUEST+
implementation) is not installed here and does not take graded responses; PsychoPy's staircases
bring a whole experiment framework. The grid is small (61 x 24 by default), so a step costs well
under a millisecond per candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@dataclass
class Design:
    """The posterior of one model's sweep. `candidates`: the differences that may be asked."""

    candidates: Sequence[float]
    pse_grid: np.ndarray = field(default_factory=lambda: np.linspace(-0.3, 0.3, 61))
    slope_grid: np.ndarray = field(default_factory=lambda: np.geomspace(0.005, 0.3, 24))
    asked: int = 0

    @classmethod
    def over(cls, candidates: Sequence[float]) -> Design:
        """A design whose grid fits the candidates' scale (a run's differences may be 0.1 apart
        or 5 degrees): PSEs from a quarter of the span below the lowest to a quarter above the
        highest (a PSE out there is told apart from one inside, never pinned), slopes from a
        hundredth of the span (a step) to the span itself (nearly flat)."""
        values = np.unique(np.asarray(candidates, dtype=float))
        low, high = float(values[0]), float(values[-1])
        span = high - low if high > low else 1.0
        pse = np.linspace(low - span / 4, high + span / 4, 101)
        return cls(values, pse_grid=pse, slope_grid=np.geomspace(span / 100, span, 24))

    def __post_init__(self) -> None:
        self.candidates = np.asarray(self.candidates, dtype=float)
        self.log_post = np.zeros((len(self.pse_grid), len(self.slope_grid)))
        # P(positive | candidate, pse, slope): candidates x pse x slope
        z = (self.candidates[:, None, None] - self.pse_grid[None, :, None]) / self.slope_grid[None, None, :]
        self._p = np.clip(_sigmoid(z), 1e-6, 1 - 1e-6)

    def posterior(self) -> np.ndarray:
        weights = np.exp(self.log_post - self.log_post.max())
        return weights / weights.sum()

    def update(self, x: float, y: float) -> None:
        """An answer at difference `x`: `y` the probability of the positive answer (or 0/1)."""
        z = (x - self.pse_grid[:, None]) / self.slope_grid[None, :]
        p = np.clip(_sigmoid(z), 1e-6, 1 - 1e-6)
        self.log_post += y * np.log(p) + (1 - y) * np.log1p(-p)
        self.asked += 1

    def pse_interval(self, level: float = 0.95) -> tuple[float, float]:
        marginal = self.posterior().sum(axis=1)
        cumulative = np.cumsum(marginal)
        tail = (1 - level) / 2
        low = self.pse_grid[min(np.searchsorted(cumulative, tail), len(self.pse_grid) - 1)]
        high = self.pse_grid[min(np.searchsorted(cumulative, 1 - tail), len(self.pse_grid) - 1)]
        return float(low), float(high)

    def pse(self) -> float:
        return float((self.posterior().sum(axis=1) * self.pse_grid).sum())

    def next_difference(self, available: Sequence[float] | None = None) -> float:
        """The candidate where the posterior's curves disagree most about the answer: the
        variance, over the posterior, of the predicted probability of the positive answer. A
        graded answer there says the most about which curve holds (for a choice it is the
        expected information's leading term). `available`: the candidates that may still be
        asked (a run's items at a difference run out); default all."""
        post = self.posterior()[None]
        predicted = (self._p * post).sum(axis=(1, 2))
        spread = (post * (self._p - predicted[:, None, None]) ** 2).sum(axis=(1, 2))
        if available is not None:
            allowed = np.isin(self.candidates, np.asarray(available, dtype=float))
            if not allowed.any():
                raise ValueError("none of the available differences is a candidate")
            spread = np.where(allowed, spread, -np.inf)
        return float(self.candidates[int(np.argmax(spread))])

    def inside(self) -> bool:
        """Whether the PSE's interval lies within the candidates' range: a PSE beyond the
        differences asked is only bounded on one side, however narrow the grid's edge makes it look."""
        low, high = self.pse_interval()
        return float(self.candidates.min()) <= low and high <= float(self.candidates.max())

    def done(self, width: float) -> bool:
        low, high = self.pse_interval()
        return high - low < width and self.inside()
