"""What names a generated set: the benchmark, its parameters, how many items and the seed, so the
same set can be drawn again anywhere (`generated_set` is a pure function of them).

Every exported folder carries it as `probe_set.json`, and the lmms-eval task written beside a set
carries it in its scorer, so replies coming back from another toolkit are matched to the very
items we drew: regenerated here and compared by id, question, options and answer.
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
from probes.core.types import Item
from probes.files.export_folder import ExportFolder

SPEC_FILE = "probe_set.json"
MAX_SPEC_BYTES = 100_000


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
            return spec
        except (KeyError, TypeError):
            raise InputRejected(f"{where}: not a generated set's description (benchmark, params, n, seed)") from None

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
        """The set again: the same items, ids, questions and answers as when it was written."""
        from probes.files.export import generated_set  # export writes specs; the spec draws sets

        return generated_set(self.benchmark, {k: list(v) for k, v in self.params.items()}, self.n, self.seed)


def spec_of(benchmark: str, params: Mapping[str, Sequence[str]], n: int, seed: int) -> SetSpec:
    return SetSpec(benchmark, {name: tuple(values) for name, values in params.items()}, n, seed)


def write_spec(spec: SetSpec, folder: ExportFolder, form: str) -> None:
    record = {**spec.as_dict(), "command": spec.command(folder.path, form)}
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
