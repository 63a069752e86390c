"""The Stimulus lab's controls: every parameter of a generated task (from the registry's
`generated_families()`, so a new family, the illusions included, gets its controls without an
edit) as a slider, a number box or a list, and a control's value written as the command line
writes it (`--param gap=-0.1`)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import gradio as gr

from probes.benchmarks.generated import GeneratedBenchmark, Param
from probes.core.errors import BenchmarkError
from probes.core.registry import generated_families
from ui.choices import Dropdown

Spec = dict[str, Any]
# Parameters that name a draw rather than a quantity: typed, never slid (a slider from 0 to 1
# over two seeds says nothing).
TYPED = ("seed",)


# --- a task's parameters and their controls -------------------------------------------------


def generator(task: str) -> type[GeneratedBenchmark]:
    """The task's benchmark class (from the registry): its parameters without building its
    (possibly large) design."""
    families = generated_families()
    if task not in families:
        raise BenchmarkError(f"{task!r} is not a generated task; choose one of {', '.join(families)}")
    return families[task]


def task_params(task: str) -> dict[str, Param]:
    """Every parameter of the task, the prompt wording last (as GeneratedBenchmark takes it)."""
    cls = generator(task)
    return {**cls.params, "prompt": Param(tuple(cls.prompts), choices=tuple(cls.prompts))}


def is_numeric(spec: Param) -> bool:
    return all(isinstance(v, int | float | Fraction) and not isinstance(v, bool) for v in spec.default)


def is_integer(spec: Param) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in spec.default)


def slider_range(spec: Param) -> tuple[float, float, float]:
    """(minimum, maximum, step) spanning the paper's values, fine enough for values between:
    a tenth of the decade of the closest two values, or a hundredth when that leaves few steps."""
    numbers = sorted({float(v) for v in spec.default})
    low, high = numbers[0], numbers[-1]
    if is_integer(spec):
        return low, high, 1
    closest = min(b - a for a, b in zip(numbers, numbers[1:], strict=False))
    step = 10.0 ** math.floor(math.log10(closest))
    if (high - low) / step < 20:
        step /= 10
    decimals = _decimals(step)
    low = round(math.floor(round(low / step, 6)) * step, decimals)
    high = round(math.ceil(round(high / step, 6)) * step, decimals)
    return low, high, round(step, decimals)


def _decimals(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-9))


def value_text(spec: Param, value: Any) -> str:
    """A control's value as the command line writes it: ints without ".0", floats short."""
    if value is None or value == "":
        raise BenchmarkError("every parameter needs a value")
    if is_numeric(spec) and spec.choices is None:
        number = float(value)
        if is_integer(spec):
            return str(int(round(number)))
        return repr(round(number, 6))
    return str(value).strip()


def control(task: str, name: str, spec: Param) -> gr.components.Component:
    """A slider for a numeric parameter the paper varies, a number for one it holds fixed (a
    seed, a set size), a dropdown for a list of names or allowed values. Keyed by task, so a
    task's controls never inherit another task's props when the controls are drawn anew."""
    label = "Prompt wording" if name == "prompt" else name.replace("_", " ").capitalize()
    elem_id, key = f"stim-param-{name}", f"{task}:{name}"
    first = spec.default[0]
    if is_numeric(spec) and spec.choices is None and len(set(spec.default)) > 1 and name not in TYPED:
        low, high, step = slider_range(spec)
        precision = 0 if is_integer(spec) else _decimals(step)
        shown = [spec.label(v) for v in spec.default]
        info = "the paper: " + (
            ", ".join(shown) if len(shown) <= 6 else f"{shown[0]} to {shown[-1]}, {len(shown)} values"
        )
        return gr.Slider(low, high, float(first), step=step, precision=precision, label=label, info=info,
                         interactive=True, elem_id=elem_id, key=key, preserved_by_key=[])  # fmt: skip
    if is_numeric(spec) and spec.choices is None:
        precision = 0 if is_integer(spec) else None
        return gr.Number(
            first, precision=precision, label=label, interactive=True, elem_id=elem_id, key=key, preserved_by_key=[]
        )
    allowed = spec.choices if spec.choices is not None else spec.default
    own = spec.choices is None  # not limited to a list: the paper's values, or one of yours
    info = "the paper's values, or type your own" if own else None
    return Dropdown([str(v) for v in allowed], value=str(first), label=label, info=info,
                       allow_custom_value=own, interactive=True, elem_id=elem_id, key=key, preserved_by_key=[])  # fmt: skip


def default_spec(task: str) -> Spec:
    """The spec the controls show when a task is chosen: each parameter at its first value."""
    return {
        "task": task,
        "params": {name: value_text(spec, spec.default[0]) for name, spec in task_params(task).items()},
    }
