"""The registry loads what an id needs: a run of one family does not import the others first,
and every id (whichever module registers it) is still found, in a fresh process each time."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from tests.conftest import run_python_json as fresh

LOADED = "sorted(m for m in sys.modules if m.startswith('probes.benchmarks.'))"


def test_a_generated_family_loads_alone_and_the_rest_load_when_listed():
    seen = fresh(
        "import json, sys\n"
        "from probes.core.registry import get_benchmark, benchmark_ids\n"
        "benchmark = get_benchmark('blind/touching-circles')\n"
        f"alone = {LOADED}\n"
        "ids = benchmark_ids()\n"
        "print(json.dumps({'id': benchmark.id, 'items': len(benchmark.items()), 'alone': alone, 'ids': ids}))"
    )
    assert seen["id"] == "blind/touching-circles" and seen["items"] == 1344
    assert not any(
        name.startswith(("probes.benchmarks.illusion", "probes.benchmarks.shitsukan")) for name in seen["alone"]
    )
    assert "probes.benchmarks.discribench" not in seen["alone"]
    assert {"illusion/ponzo", "discribench", "blind/olympic-pentagons", "blind/touching-circles"} <= set(seen["ids"])


@pytest.mark.parametrize("benchmark_id", ["blind/olympic-pentagons", "blind/olympic-circles", "illusion/ebbinghaus"])
def test_an_id_registered_in_a_module_named_otherwise_is_still_found(benchmark_id):
    seen = fresh(
        "import json\n"
        "from probes.core.registry import get_benchmark\n"
        f"print(json.dumps({{'id': get_benchmark({benchmark_id!r}).id}}))"
    )
    assert seen["id"] == benchmark_id


def test_a_custom_folder_loads_only_the_custom_module(tmp_path):
    Image.new("RGB", (8, 8), "white").save(tmp_path / "a.png")
    record = {"id": "1", "image": "a.png", "question": "Two?", "answer": "2"}
    (tmp_path / "items.jsonl").write_text(json.dumps(record) + "\n")
    seen = fresh(
        "import json, sys\n"
        "from probes.core.registry import get_benchmark\n"
        f"benchmark = get_benchmark('custom:{tmp_path}')\n"
        f"print(json.dumps({{'items': len(benchmark.items()), 'loaded': {LOADED}}}))"
    )
    assert seen["items"] == 1
    assert seen["loaded"] == ["probes.benchmarks.custom"]


@pytest.mark.parametrize(
    "benchmark_id", ["nope", "blind/nope", "os", "blind/../custom", "blind", "Blind/Touching-Circles", ""]
)
def test_an_unknown_id_names_every_known_benchmark(benchmark_id):
    seen = fresh(
        "import json\n"
        "from probes.core.registry import get_benchmark\n"
        "from probes.core.errors import UnknownBenchmark\n"
        "try:\n"
        f"    get_benchmark({benchmark_id!r})\n"
        "    print(json.dumps({'error': None}))\n"
        "except UnknownBenchmark as exc:\n"
        "    print(json.dumps({'error': str(exc)}))"
    )
    assert seen["error"] is not None
    for known in ("illusion/ponzo", "discribench", "blind/touching-circles", "custom:PATH"):
        assert known in seen["error"]
