"""blind/subway-paths: the design, traceable maps, and path counts read back from pixels."""

import io
from collections import Counter

import numpy as np
import pytest

from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind, Status
from probes.reading.parsing import parse
from probes.stimuli.subway_paths import GRID, PAIRS, Route, SubwayMap, check_routes, draw_map

PROMPTS = (
    "How many single-colored paths go from {a} to {b}? Answer with a number in curly brackets, e.g., {{3}}",
    "Count the one-colored routes that go from {a} to {b}. Answer with a number in curly brackets, e.g., {{3}}.",
)


@pytest.fixture(scope="module")
def subway():
    return get_benchmark("blind/subway-paths")


def _images(benchmark):
    return list({item.images[0].ref: item for item in benchmark.items()}.values())


# --- reading the image alone ------------------------------------------------------------


def _components(mask: np.ndarray) -> list[list[tuple[int, int, int]]]:
    """8-connected components of a boolean mask as lists of runs (row, start, end): union-find
    over the runs of consecutive rows, fast enough for 1024 px images."""
    parent: list[int] = []

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    runs: list[tuple[int, int, int]] = []
    previous: list[int] = []
    for row in range(mask.shape[0]):
        edges = np.flatnonzero(np.diff(np.concatenate([[0], mask[row].astype(np.int8), [0]]))).tolist()
        current = []
        for start, end in zip(edges[::2], edges[1::2], strict=True):
            parent.append(len(runs))
            current.append(len(runs))
            runs.append((row, start, end))
        i = j = 0
        while i < len(previous) and j < len(current):
            _, s0, e0 = runs[previous[i]]
            _, s1, e1 = runs[current[j]]
            if s0 <= e1 and s1 <= e0:  # overlapping or touching diagonally
                parent[find(current[j])] = find(previous[i])
            if e0 < e1:
                i += 1
            else:
                j += 1
        previous = current
    groups: dict[int, list[tuple[int, int, int]]] = {}
    for index, run in enumerate(runs):
        groups.setdefault(find(index), []).append(run)
    return list(groups.values())


def _dilate(mask: np.ndarray, radius: int) -> np.ndarray:
    out = mask.copy()
    for shift in range(1, radius + 1):
        out[shift:] |= mask[:-shift]
        out[:-shift] |= mask[shift:]
    grown = out.copy()
    for shift in range(1, radius + 1):
        grown[:, shift:] |= out[:, :-shift]
        grown[:, :-shift] |= out[:, shift:]
    return grown


def _box(component) -> tuple[float, float, float, float]:
    rows = [r for r, _, _ in component]
    return min(s for _, s, _ in component), min(rows), max(e for _, _, e in component), max(rows) + 1


def stations_from_pixels(pixels: np.ndarray) -> dict[str, tuple[float, float]]:
    """The four black letters' centres, named by where they are (top A, right B, bottom C,
    left D, as the task defines the stations)."""
    dark = pixels.max(axis=-1) < 90
    letters = [c for c in _components(dark) if sum(e - s for _, s, e in c) > 20]
    assert len(letters) == 4, f"expected 4 station letters, found {len(letters)}"
    centres = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in map(_box, letters)]
    return {
        "A": min(centres, key=lambda c: c[1]),
        "B": max(centres, key=lambda c: c[0]),
        "C": max(centres, key=lambda c: c[1]),
        "D": min(centres, key=lambda c: c[0]),
    }


def _path_colours(pixels: np.ndarray, cell: float) -> list[np.ndarray]:
    """Saturated colours covering many pixels, less those that are another such colour blended
    with white (a straight stroke's anti-aliased edge can repeat one blend along a whole run)."""
    saturated = pixels[(pixels.max(-1).astype(int) - pixels.min(-1)) > 40].astype(int)
    packed = (saturated[:, 0] << 16) | (saturated[:, 1] << 8) | saturated[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    common = [np.array([v >> 16, (v >> 8) & 255, v & 255]) for v in values[counts > 2 * cell]]
    kept: list[np.ndarray] = []
    for colour in sorted(common, key=lambda c: -int(c.max() - c.min())):
        blend = False
        for pure in kept:
            direction = pure - 255
            share = ((colour - 255) * direction).sum() / (direction * direction).sum()
            blend |= 0 < share < 1 and np.abs(colour - 255 - share * direction).sum() < 8
        if not blend:
            kept.append(colour)
    return kept


def paths_from_pixels(image) -> list[tuple[str, str]]:
    """Every single-coloured path as the two stations it touches, from the image alone.

    A path colour is any saturated colour covering many pixels. Its solid pixels, grown by a
    fifth of a grid cell to bridge the places where another path is drawn across it, must form
    one connected line that reaches the start-point strips of exactly two stations: the strip
    one cell from a letter, facing the map, where only that station's own paths end."""
    pixels = np.asarray(image)
    side = pixels.shape[0]
    cell = side / GRID
    strips = {}
    for name, (x, y) in stations_from_pixels(pixels).items():
        dx, dy = (side / 2 - x, side / 2 - y)
        ux, uy = (np.sign(dx), 0) if abs(dx) > abs(dy) else (0, np.sign(dy))
        sx, sy = x + ux * cell, y + uy * cell  # the middle start point
        hx, hy = (0.4 * cell, 1.5 * cell) if ux else (1.5 * cell, 0.4 * cell)
        strips[name] = (slice(round(sy - hy), round(sy + hy)), slice(round(sx - hx), round(sx + hx)))
    wide = pixels.astype(np.int32)
    packed = (wide[..., 0] << 16) | (wide[..., 1] << 8) | wide[..., 2]
    found = []
    for colour in _path_colours(pixels, cell):
        solid = packed == (int(colour[0]) << 16 | int(colour[1]) << 8 | int(colour[2]))
        grown = _dilate(solid, max(1, round(cell / 5)))
        pieces = len(_components(grown))
        assert pieces == 1, f"path {tuple(colour)} is broken into {pieces} pieces"
        touched = sorted(name for name, (rows, columns) in strips.items() if grown[rows, columns].any())
        assert len(touched) == 2, f"path {tuple(colour)} touches stations {touched}"
        found.append((touched[0], touched[1]))
    return found


# --- design -------------------------------------------------------------------------------


def test_size_and_design_follow_the_paper(subway):
    items = subway.items()
    assert len(items) == 360 and subway.size_note() == "360 items (180 images x 2 prompts)"
    images = _images(subway)
    assert len(images) == 180
    assert Counter((i.params["paths"], i.params["canvas"], i.params["thickness"]) for i in images) == {
        (n, c, t): 15 for n in (1, 2, 3) for c in (512, 1024) for t in (10, 20)
    }
    assert set(items[0].groups) == {"prompt", "paths", "canvas", "thickness", "pair"}
    # the four renderings of a map share its question and answer
    per_map = Counter((i.params["paths"], i.params["map"], i.question, i.target) for i in items)
    assert set(per_map.values()) == {4}


def test_prompts_are_verbatim_with_the_asked_pair(subway):
    for item in subway.items():
        a, b = item.groups["pair"].split("-")
        assert item.question in {p.format(a=a, b=b) for p in PROMPTS}
    assert "from A to C" in subway.prompts["how_many"] and "from A to C" in subway.prompts["count"]


def test_answers_cover_zero_to_three_evenly_per_n(subway):
    images = _images(subway)
    assert Counter(i.target for i in images) == {0: 68, 1: 64, 2: 36, 3: 12}
    by_n = Counter((i.params["paths"], i.target) for i in images)
    assert by_n == {
        (1, 0): 32, (1, 1): 28,
        (2, 0): 20, (2, 1): 20, (2, 2): 20,
        (3, 0): 16, (3, 1): 16, (3, 2): 16, (3, 3): 12,
    }  # fmt: skip
    assert {i.groups["pair"] for i in images} == set(PAIRS)
    assert subway.items()[0].answer_space == ("{0}", "{1}", "{2}", "{3}")


def test_truth_counts_the_drawn_paths(subway):
    for item in _images(subway)[::9]:
        spec = SubwayMap(item.params["canvas"], item.params["paths"], item.params["thickness"], 0, item.params["map"])
        routes = spec.routes()
        assert len(routes) == 2 * spec.paths
        assert item.target == sum(1 for r in routes if {r.start, r.end} == set(item.groups["pair"].split("-")))


# --- maps and pixels --------------------------------------------------------------------------


def test_every_default_map_is_traceable():
    for paths in (1, 2, 3):
        for index in range(15):
            spec = SubwayMap(512, paths, 10, 0, index)
            check_routes(spec.routes(), paths)  # raises if not
            assert spec.count() == spec.target


@pytest.mark.parametrize(
    "bad",
    [
        (
            Route(
                "A", "C", ((9, 2), (9, 3), (9, 4), (9, 5), (10, 5), (10, 4), (9, 4), *((8, y) for y in range(4, 17)))
            ),
            "twice",
        ),
        (Route("A", "A", ((8, 2), (8, 3), (9, 3), (10, 3), (10, 2))), "two stations"),
        (Route("A", "C", ((9, 2), (9, 16))), "one cell"),
    ],
)
def test_check_routes_rejects_untraceable_paths(bad):
    route, message = bad
    with pytest.raises(ValueError, match=message):
        check_routes((route,), 1)


def test_check_routes_rejects_paths_that_touch_without_crossing():
    down = Route("A", "C", tuple((9, y) for y in range(2, 17)))
    # turns on the other path's node: a T, not a crossing
    turn = Route(
        "D", "B", ((2, 9), *((x, 9) for x in range(3, 9)), (9, 9), (9, 10), (10, 10), *((x, 10) for x in range(11, 17)))
    )
    with pytest.raises(ValueError, match="right angles"):
        check_routes((down, turn), 1)
    across = Route("D", "B", tuple((x, 9) for x in range(2, 17)))
    check_routes((down, across), 1)  # a straight crossing is fine


@pytest.mark.parametrize(
    "spec",
    [
        SubwayMap(512, 1, 10, 0, 0),
        SubwayMap(512, 1, 20, 0, 1),
        SubwayMap(512, 2, 10, 0, 2),
        SubwayMap(1024, 2, 20, 0, 4),
        SubwayMap(512, 3, 20, 0, 6),
        SubwayMap(1024, 3, 10, 0, 5),
        SubwayMap(512, 3, 10, 1, 0),
    ],
    ids=lambda s: f"N{s.paths}-{s.canvas}-{s.thickness}-{s.index}",
)
def test_pixels_agree_with_the_drawn_paths(spec):
    found = paths_from_pixels(spec.render())
    assert sorted(found) == sorted(tuple(sorted((r.start, r.end))) for r in spec.routes())
    a, b = spec.asked.split("-")
    assert found.count((a, b)) == spec.count()


def test_default_items_read_back_from_pixels_on_a_sample(subway):
    images = _images(subway)
    sample = images[::30]
    assert {i.params["canvas"] for i in sample} == {512, 1024}
    for item in sample:
        found = paths_from_pixels(item.images[0].load())
        assert len(found) == 2 * item.params["paths"]
        assert found.count(tuple(item.groups["pair"].split("-"))) == item.target


def test_a_station_with_three_paths():
    """The issue's edge case: N = 3, and the asked pair joined by all three of its paths."""
    spec = SubwayMap(512, 3, 10, 0, 3)  # map 3 of a cell with N = 3: the asked pair has 3 paths
    assert spec.target == 3 and spec.count() == 3
    found = paths_from_pixels(spec.render())
    ends = Counter(station for pair in found for station in pair)
    assert ends == {"A": 3, "B": 3, "C": 3, "D": 3}
    a, b = spec.asked.split("-")
    assert found.count((a, b)) == 3
    fixed = SubwayMap(1024, 3, 20, 0, 3, pair="A-C")  # the paper's own pair
    assert fixed.count("A-C") == 3 and paths_from_pixels(fixed.render()).count(("A", "C")) == 3


def test_line_width_and_look():
    spec = SubwayMap(512, 1, 10, 0, 0)
    pixels = np.asarray(spec.render()).astype(int)
    route = spec.routes()[0]
    (x, y), (x2, y2) = route.nodes[0], route.nodes[1]
    cx, cy = (x + x2) / 2 * spec.cell, (y + y2) / 2 * spec.cell  # the middle of the first segment
    if x == x2:
        profile = pixels[int(cy), int(cx) - 8 : int(cx) + 8]
    else:
        profile = pixels[int(cy) - 8 : int(cy) + 8, int(cx)]
    ink = (255 - profile.min(-1)).sum() / 255
    assert abs(ink - 512 * 10 / 1296) < 0.8  # 10 points on the 9000 px figure: 4 px at 512
    stations = stations_from_pixels(pixels)
    assert abs(stations["A"][0] - 256) < 3 and abs(stations["A"][1] - 512 / 18) < 4


def test_rendering_is_deterministic():
    spec = SubwayMap(1024, 3, 20, 7, 2)
    first, second = io.BytesIO(), io.BytesIO()
    spec.render().save(first, "PNG")
    draw_map.cache_clear()
    SubwayMap(1024, 3, 20, 7, 2).render().save(second, "PNG")
    assert first.getvalue() == second.getvalue()


# --- few-shot, sweeps, parsing ----------------------------------------------------------------


def test_few_shot_examples_are_off_the_test_grid_and_balanced(subway):
    test_refs = {item.images[0].ref for item in subway.items()}
    examples = subway.examples()
    assert examples and not any(e.images[0].ref in test_refs for e in examples)
    for item in subway.items()[:2]:
        chosen = subway.select_examples(item, 4)
        assert {e.groups["prompt"] for e in chosen} == {item.groups["prompt"]}
        assert sorted(e.target for e in chosen) == [0, 1, 2, 3]
        assert all(e.reasoning and f"So {e.target} single-colored" in e.reasoning for e in chosen)
        assert subway.render_answer(chosen[1], cot=False) == "{1}"


def test_parameters_can_be_fixed_or_swept():
    fixed = get_benchmark("blind/subway-paths", params={"pair": ["a-c"], "canvas": ["512"], "thickness": ["10"]})
    items = fixed.items()
    assert len(items) == 3 * 15 * 2
    assert {i.groups["pair"] for i in items} == {"A-C"}
    assert all("from A to C" in i.question for i in items)
    assert {i.target for i in items if i.params["paths"] == 3} == {0, 1, 2, 3}
    more = get_benchmark("blind/subway-paths", params={"maps": ["2"], "seed": ["5"], "paths": ["3"]})
    assert len(more.items()) == 2 * 2 * 2 * 2 and {i.seed for i in more.items()} == {5}
    with pytest.raises(BenchmarkError, match="paths"):
        get_benchmark("blind/subway-paths", params={"paths": ["4"]})
    with pytest.raises(BenchmarkError, match="pair"):
        get_benchmark("blind/subway-paths", params={"pair": ["A-A"]})


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("{3}", 3),
        ("3", 3),
        ("There are 2 paths.", 2),
        ("There are 2 single-colored paths from A to C.", 2),
        ("There is 1 path.", 1),
        ("There are no paths from A to C.", 0),
        ("I see 3 one-colored routes from A to C.", 3),
        ("The blue and the green paths both go from A to C, so the answer is {2}.", 2),
        ("How many paths, e.g., {3}? Following them, two go from A to C: {2}", 2),
        ("Answer: 0", 0),
        ("Two.", 2),
    ],
)
def test_typical_replies_parse(reply, value):
    parsed = parse(reply, AnswerKind.NUMBER)
    assert parsed.status is Status.ANSWERED and parsed.value == value
