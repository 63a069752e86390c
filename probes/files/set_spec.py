"""What names a generated set: the benchmark, its parameters, how many items and the seed, so the
same set can be drawn again anywhere (`draw` is a pure function of them, through the sampler
`run` and `generate` share: `probes.core.selection.draw_set`).

Every exported folder (png, hf, lmms-eval) carries it as `probe_set.json`, which `run FOLDER`
reads to ask the set again (`probes.files.set_folder`), and the lmms-eval task written beside a
set carries it in its scorer, so replies coming back from another toolkit are matched to the very
items we drew: regenerated here and compared by id, question, options and answer.

The seed picks the sample. A family drawn with random positions has a design seed of its own
(the parameter `seed`), which a description always names (`spec_of` writes the family's default
where none was given), so it reads the same to any version. A description written before it was
named (no `seed` parameter) was drawn with the sample's seed as the design seed too, and reads
so (`from_dict`): every folder and lmms-eval log written since still draws its very items.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probes.core.benchmark import Benchmark
from probes.core.errors import InputRejected
from probes.core.registry import generated_family
from probes.core.selection import draw_set
from probes.core.types import Item
from probes.files.export_folder import ExportFolder

SPEC_FILE = "probe_set.json"
MAX_SPEC_BYTES = 100_000
COMMAND_OUT = "OUT"  # the folder, in the command a description holds


@dataclass(frozen=True)
class SetSpec:
    benchmark: str
    params: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    n: int = 0
    seed: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "params": {k: list(v) for k, v in self.params.items()},
                "n": self.n, "seed": self.seed}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Any, where: str) -> SetSpec:
        """A spec as written by `as_dict`; InputRejected naming `where` if it is not one."""
        try:
            params = data["params"]
            if not isinstance(params, dict) or not all(
                isinstance(v, list) and all(isinstance(x, str) for x in v) for v in params.values()
            ):
                raise TypeError
            spec = cls(str(data["benchmark"]), {str(k): tuple(v) for k, v in params.items()}, data["n"], data["seed"])
            if not all(isinstance(x, int) and not isinstance(x, bool) for x in (spec.n, spec.seed)) or spec.n < 1:
                raise TypeError
        except (KeyError, TypeError):
            raise InputRejected(f"{where}: not a generated set's description (benchmark, params, n, seed)") from None
        if "seed" not in spec.params and _design_seed(spec.benchmark) is not None:
            # Written before descriptions named the design seed: the sample's seed drew the design.
            return cls(spec.benchmark, {**spec.params, "seed": (str(spec.seed),)}, spec.n, spec.seed)
        return spec

    def command(self, out: str | Path, form: str = "png") -> str:
        """The command that writes this set, as a person would type it."""
        words = ["python", "-m", "probes", "generate", self.benchmark, "--n", str(self.n), "--seed", str(self.seed)]
        for name, values in self.params.items():
            words += ["--param", f"{name}={','.join(values)}"]
        words += ["--out", str(out)]
        if form != "png":
            words += ["--format", form]
        return shlex.join(words)

    def draw(self) -> tuple[Benchmark, list[Item]]:
        """The set again: the same items, ids, questions and answers as when it was written (and
        as `run BENCHMARK --limit N --seed S` with these parameters asks)."""
        return draw_set(self.benchmark, self.params, self.n, self.seed)


def spec_of(benchmark: str, params: Mapping[str, Sequence[str]], n: int, seed: int) -> SetSpec:
    """The description of `generate BENCHMARK --n N --seed S --param ...`: the parameters as
    given, and a family's design seed named (its default) where they leave it out."""
    named = {name: tuple(values) for name, values in params.items()}
    default = _design_seed(benchmark) if "seed" not in named else None
    if default is not None:
        named["seed"] = default
    return SetSpec(benchmark, named, n, seed)


def _design_seed(benchmark: str) -> tuple[str, ...] | None:
    """The design seeds a generated family draws with by default, None if it has no such
    parameter (or is not a generated family)."""
    family = generated_family(benchmark)
    if family is None or "seed" not in family.params:
        return None
    return tuple(str(value) for value in family.params["seed"].default)


def write_spec(spec: SetSpec, folder: ExportFolder, form: str) -> None:
    """probe_set.json: the description, and the command that writes the set (the folder named
    OUT: the description holds no path of the machine it was written on, so a folder written
    anywhere, the Stimulus lab's included, holds the same bytes)."""
    record = {**spec.as_dict(), "command": spec.command(COMMAND_OUT, form)}
    folder.write(SPEC_FILE, (json.dumps(record, indent=2) + "\n").encode("utf-8"))


def read_spec(folder: Path) -> SetSpec | None:
    """The spec in `folder`, None if the folder has none (a folder not exported from here)."""
    path = folder / SPEC_FILE
    if not path.is_file():
        return None
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SPEC_BYTES + 1)
        if len(raw) > MAX_SPEC_BYTES:
            raise InputRejected(f"{path}: larger than {MAX_SPEC_BYTES:,} bytes: not a set's description")
        data = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputRejected(f"{path}: cannot be read as JSON ({type(exc).__name__})") from None
    return SetSpec.from_dict(data, str(path))
