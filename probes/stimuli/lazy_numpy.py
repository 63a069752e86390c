"""numpy, imported when a stimulus is first drawn, not when its module is.

A run whose images are all known by hash (a second model's, a re-run) loads the stimulus classes
for their geometry, truth and references, and never draws: importing numpy was about a tenth of
a second before its first request (`python -X importtime`, bench/wire.py). Modules that draw
write `from probes.stimuli.lazy_numpy import np` and use `np` as usual; annotations naming
`np.ndarray` stay strings (`from __future__ import annotations`). So do the analysis modules the
store loads to keep its calibration sums and fit counts (probes/analysis/logistic.py, graded.py,
calibration_cells.py): a run writes its results, but fits nothing.
"""

from __future__ import annotations

from typing import Any


class _Numpy:
    def __getattr__(self, name: str) -> Any:
        import numpy

        # From now on numpy's names are this object's own: a look-up costs what `numpy.x` costs.
        self.__dict__.update(vars(numpy))
        return getattr(numpy, name)


np: Any = _Numpy()
