"""What one result gives every psychometric fit it can join, and the fits made from those parts.

A fit of P(positive) against a swept parameter (probes/analysis/psychometric.py for choices,
graded.py for probabilities) reads, of each result whose item holds a number for the parameter:
its level x, whether its reply is positive, negative, left out (unparsed or refused), an error or
without a reading (`code`), and the probability of the positive answer where it gave one (y).
`points` works that out once per result, for every numeric parameter of its item, so the store
can keep it as the result is written (probes/running/fit_kept.py) and add the choices up per
level: a choice fit needs only, per level, the replies and the positive ones, and per row what was
left out (logistic.fit_levels pools repeated levels itself, so counts per level fit exactly as the
single replies do). A graded fit's interval is a bootstrap over items (graded.graded_fit), which
needs each item's y: those are read one by one.

`fit_rows_of` makes the rows `report --fit` prints from those parts, by the very functions
fits.fit_table uses for Results (`psychometric.as_row`, `logistic.fit_levels`, `graded.graded_fit`,
the same seeds), so both give the same rows (tests/probes/test_fit_kept.py).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from probes.analysis.graded import graded_fit
from probes.analysis.logistic import RESAMPLES, fit_levels
from probes.analysis.psychometric import FitRow, _text, as_row, number, row_order
from probes.core.types import POSITIVE_ANSWER

POSITIVE, NEGATIVE, EXCLUDED, ERROR, UNRATED = "p", "n", "x", "e", "u"
Point = tuple[str, str, str | None]  # x as repr(float), code, y as repr(float) or None
CHOICES, GRADED = "choices", "probabilities"
# Fits from which `fit_rows_of` spreads its work over processes: each process starts in about a
# second (numpy and this package imported again), which a few dozen fits of 1,000 resamples repay.
PARALLEL_FROM = 64


def points(status: str, parsed: Any, params: Mapping[str, Any], probabilities: Mapping[str, Any] | None) -> dict:
    """Per numeric parameter of an item, what its result gives that parameter's fits (module
    docstring): `psychometric._Trials.add` and `graded.positive_probability` on stored values."""
    found: dict[str, Point] = {}
    if not params:
        return found
    if status == "error":
        code = ERROR
    elif status != "answered" or parsed is None:
        code = EXCLUDED
    elif params.get(POSITIVE_ANSWER) is not None:
        code = POSITIVE if _text(parsed) == _text(params[POSITIVE_ANSWER]) else NEGATIVE
    elif _text(parsed) in ("yes", "no"):
        code = POSITIVE if _text(parsed) == "yes" else NEGATIVE
    else:
        code = UNRATED
    y = None
    if probabilities and status != "error":
        key = params.get(POSITIVE_ANSWER)
        value = probabilities.get(str(key).strip().casefold() if key is not None else "yes")
        y = None if value is None else repr(float(value))
    for name, value in params.items():
        x = number(value)
        if x is not None:
            found[str(name)] = (repr(x), code, y)
    return found


Head = tuple[str, str, str, str, str]  # benchmark, model, mode, perturbation, group ("overall" or name=value)


@dataclass
class Tally:
    """A choice fit's parts: per level (replies rated, positive ones), and what was left out."""

    levels: dict[float, list[int]] = field(default_factory=dict)
    excluded: int = 0
    errors: int = 0
    unrated: int = 0

    def add(self, x: float, n: int, positives: int, excluded: int, errors: int, unrated: int) -> None:
        level = self.levels.setdefault(x, [0, 0])
        level[0] += n
        level[1] += positives
        self.excluded += excluded
        self.errors += errors
        self.unrated += unrated


def heads(head: tuple[str, str, str, str], groups: Mapping[str, Any], by: Sequence[str]) -> list[Head]:
    """The rows a result counts in: overall, and one per group of `by` it has (psychometric._groups)."""
    return [(*head, "overall")] + [(*head, f"{name}={groups[name]}") for name in by if name in groups]


def fit_rows_of(
    tallies: Mapping[Head, Tally],
    graded: Mapping[Head, Iterable[tuple[float, float]]],
    param: str,
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    workers: int | None = None,
) -> list[FitRow]:
    """The rows of fits.fit_table from their parts: the choices' per-level tallies and the
    probabilities' (x, y) points, each per report row. Each fit is its own work with its own
    seed, so from PARALLEL_FROM fits on they are made in `workers` processes (default: the cores
    this process may use), with the very rows one process makes."""
    # The heavier graded fits first, so the processes share them out.
    jobs = [_graded_job(key, pairs) for key, pairs in graded.items()]
    jobs += [_choice_job(key, tally) for key, tally in tallies.items()]
    workers = _cores() if workers is None else workers
    if workers <= 1 or len(jobs) < PARALLEL_FROM:
        return sorted((_fit_job(job, param=param, resamples=resamples, seed=seed) for job in jobs), key=row_order)
    import multiprocessing  # here: a store loads this module to keep its counts, and fits nothing
    from concurrent.futures import ProcessPoolExecutor

    made = partial(_fit_job, param=param, resamples=resamples, seed=seed)
    context = multiprocessing.get_context("spawn")  # nothing of this process's threads or store
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_keep_freed_memory) as pool:
        rows = list(pool.map(made, jobs, chunksize=4))
    return sorted(rows, key=row_order)


def _choice_job(key: Head, tally: Tally) -> tuple:
    levels = sorted(tally.levels.items())
    counted = {"excluded": tally.excluded, "errors": tally.errors, "unrated": tally.unrated}
    return CHOICES, key, [x for x, _ in levels], [c[0] for _, c in levels], [c[1] for _, c in levels], counted


def _graded_job(key: Head, pairs: Iterable[tuple[float, float]]) -> tuple:
    pairs = list(pairs)
    return GRADED, key, [p[0] for p in pairs], [p[1] for p in pairs], None


def _keep_freed_memory() -> None:
    """A fitting process keeps up to 64 MiB of the memory it frees (glibc's M_TRIM_THRESHOLD)
    rather than handing it back at once: a bootstrap's arrays of 128 kB and more are freed and
    asked for again thousands of times a second, and each time fresh pages cost a fault each
    (BENCHMARKS.md: the fits in a fifth to a third less time). Nothing where there is no mallopt."""
    import ctypes

    try:
        ctypes.CDLL(None).mallopt(-1, 64 << 20)  # M_TRIM_THRESHOLD
    except (AttributeError, OSError, TypeError):
        pass


def _fit_job(job: tuple, *, param: str, resamples: int, seed: int) -> FitRow:
    kind, key = job[0], job[1]
    if kind == GRADED:
        _, _, x, y, _ = job
        stream = [seed, zlib.crc32("\x1f".join((*key, param, "probabilities")).encode("utf-8"))]  # as graded_fit_rows
        fit = graded_fit(x, y, resamples=resamples, seed=stream)
        return as_row(key[:4], key[4], param, fit, source="probabilities")
    _, _, x, n, positives, counted = job
    stream = [seed, zlib.crc32("\x1f".join((*key, param)).encode("utf-8"))]  # as psychometric._fit
    fit = fit_levels(x, n, positives, resamples=resamples, seed=stream)
    return as_row(key[:4], key[4], param, fit, **counted)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
