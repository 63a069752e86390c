"""illusion/*: the default designs, labels from the pixels drawn, controls, counterbalanced
options with `positive_answer`, sweeps, equal items and few-shot examples."""

from __future__ import annotations

import io
import json
import math
from collections import Counter, defaultdict

import numpy as np
import pytest

from probes.core.errors import BenchmarkError, LimitExceeded
from probes.core.registry import benchmark_ids, get_benchmark
from probes.core.types import Parsed, Status
from probes.stimuli.illusions import FAMILIES

IDS = [f"illusion/{family}" for family in FAMILIES]
# Images in each default set (8 differences x 3 canvases x 2 seeds x the strengths and controls:
# 4 strengths "with", 3 non-zero "flipped", 1 "none"; vertical-horizontal's "none" is strength 0;
# Poggendorff keeps a control for each of its 7 tilts).
IMAGES = {family: 8 * 3 * 2 * 8 for family in FAMILIES} | {
    "vertical-horizontal": 8 * 3 * 2 * 7,
    "poggendorff": 8 * 3 * 2 * 14,
}
POSITIVE = {"mueller-lyer": "Top", "ponzo": "Top", "ebbinghaus": "Left", "delboeuf": "Left"}
POSITIVE |= {"vertical-horizontal": "Left", "zoellner": "Left", "poggendorff": "Above"}


@pytest.fixture(scope="module")
def default_sets():
    return {family: get_benchmark(f"illusion/{family}") for family in FAMILIES}


def test_every_family_is_listed_with_the_documented_size(default_sets):
    assert set(IDS) <= set(benchmark_ids())
    for family, benchmark in default_sets.items():
        items = benchmark.items()
        images = {item.images[0].ref for item in items}
        assert len(images) == IMAGES[family], family
        assert len(items) == 2 * IMAGES[family]
        assert benchmark.size_note() == f"{2 * IMAGES[family]} items ({IMAGES[family]} images x 2 prompts)"
        assert len({item.question for item in items}) == 2
        assert all(len(item.options) == 2 for item in items)


def test_default_design_is_the_illusion_games_series_one(default_sets):
    for family, benchmark in default_sets.items():
        items = benchmark.items()
        differences = sorted({item.params["difference"] for item in items})
        assert len(differences) == 8 and differences[:4] == [-d for d in differences[:3:-1]], family
        drawn = {item.params["illusion_strength"] for item in items if item.params["inducers"] != "none"}
        assert len(drawn) == 7 and 0.0 in drawn and sorted(drawn) == sorted(-s + 0.0 for s in drawn), family
    mueller_lyer = default_sets["mueller-lyer"].items()
    assert sorted({i.params["illusion_strength"] for i in mueller_lyer}) == [-42, -28, -14, 0, 14, 28, 42]
    assert max(i.params["difference"] for i in mueller_lyer) == pytest.approx(0.46)


def test_same_seed_same_bytes():
    for family in FAMILIES:
        first = get_benchmark(f"illusion/{family}").items()
        second = get_benchmark(f"illusion/{family}").items()
        assert [i.id for i in first] == [i.id for i in second]
        assert [dict(i.params) for i in first] == [dict(i.params) for i in second]
        for index in (0, len(first) // 3, len(first) - 1):
            a, b = io.BytesIO(), io.BytesIO()
            first[index].images[0].load().save(a, "PNG")
            second[index].images[0].load.args[0].render().save(b, "PNG")  # drawn anew, not from a cache
            assert a.getvalue() == b.getvalue(), family


def test_seeds_jitter_position_and_size_but_not_the_level(default_sets):
    items = default_sets["ebbinghaus"].items()
    by_level = defaultdict(set)
    for item in items:
        key = (item.params["difference"], item.params["illusion_strength"], item.params["inducers"])
        by_level[key].add(
            (item.params["canvas"], item.params["seed"], item.params["offset_x"], item.params["size_min"])
        )
    assert all(len(copies) == 6 for copies in by_level.values())  # 3 canvases x 2 seeds, all distinct
    assert len({item.params["size_min"] for item in items}) > 20
    assert all(0.8 <= item.params["size_min"] / 0.25 <= 1.1 for item in items)


def _nominal_px(family: str, stimulus) -> float:
    """The difference pyllusion's geometry asks for, in the unit each figure is measured in."""
    p, scale = stimulus.pyllusion_parameters(), stimulus.canvas / 2
    if family in ("mueller-lyer", "ponzo"):
        return (p["Size_Top"] - p["Size_Bottom"]) * scale
    if family in ("ebbinghaus", "delboeuf"):
        return (
            math.pi / 4 * (p["Size_Inner_Left"] ** 2 - p["Size_Inner_Right"] ** 2) * scale**2
        )  # diameter: size x scale
    if family == "vertical-horizontal":
        return (p["Size_Left"] - p["Size_Right"]) * scale
    if family == "zoellner":
        return 2 * (stimulus.canvas - 1) * math.tan(math.radians(stimulus.difference))
    return stimulus.difference * scale


def test_labels_follow_the_measured_pixels_and_agree_with_pyllusion(default_sets):
    for family, benchmark in default_sets.items():
        for item in benchmark.items():
            params = item.params
            favours = params["measured_favours"]
            stimulus = item.images[0].load.args[0]
            nominal = _nominal_px(family, stimulus)
            # Every difference of the default design survives rendering, on the side pyllusion draws.
            assert favours == ("positive" if nominal > 0 else "negative"), (family, item.id, nominal)
            measured = params["measured_difference"]
            if family in ("ebbinghaus", "delboeuf"):
                assert measured == pytest.approx(nominal, rel=0.06, abs=60)
            else:
                assert abs(measured - nominal) <= 2.0, (family, item.id, measured, nominal)
            # The label is the measured side, as the options are shown.
            assert item.options[params["positive_answer"]] == POSITIVE[family]
            expected = params["positive_answer"] if favours == "positive" else 1 - params["positive_answer"]
            assert item.target == expected


def test_red_pixels_are_exactly_the_measured_targets(default_sets):
    for family, benchmark in default_sets.items():
        stimuli = list({item.images[0].ref: item.images[0].load.args[0] for item in benchmark.items()}.values())
        for stimulus in stimuli[::37]:
            picture = np.asarray(stimulus.render())
            red = np.all(picture == (255, 0, 0), axis=-1)
            drawn = np.zeros_like(red)
            for rows, cols in stimulus.target_pixels().values():
                drawn[rows, cols] = True
            assert np.array_equal(red, drawn), (family, stimulus.ref)
            colours = {tuple(c) for c in picture.reshape(-1, 3)[:: max(1, picture.size // 30000)]}
            assert colours <= {(255, 255, 255), (0, 0, 0), (255, 0, 0), (128, 128, 128)}  # no blended edges


def test_controls_show_the_same_targets_without_inducers(default_sets):
    for family, benchmark in default_sets.items():
        items = benchmark.items()
        kinds = Counter(item.groups["inducers"] for item in items)
        expected = {"with", "flipped"} | ({"none"} if family != "vertical-horizontal" else set())
        assert set(kinds) == expected, family
        strengths = Counter(item.groups["illusion_strength"] for item in items)
        assert all(strengths[s] == strengths[s.replace("+", "-")] for s in strengths if s.startswith("+"))
        if family == "vertical-horizontal":
            continue
        # Poggendorff's controls keep their tilt: take one of a tilted line.
        control = (
            next(i for i in items if i.params["inducers"] == "none" and i.params["illusion_strength"] != 0)
            if (family == "poggendorff")
            else next(i for i in items if i.params["inducers"] == "none")
        )
        same_level = [
            i
            for i in items
            if i.params["inducers"] != "none"
            and (i.params["difference"], i.params["canvas"], i.params["seed"])
            == (control.params["difference"], control.params["canvas"], control.params["seed"])
            and (family != "poggendorff" or i.params["illusion_strength"] == control.params["illusion_strength"])
        ]
        assert same_level, family
        plain = np.asarray(control.images[0].load())
        assert not np.any(np.all(plain == (0, 0, 0), axis=-1)) and not np.any(np.all(plain == (128, 128, 128), axis=-1))
        for other in same_level:
            shown = np.asarray(other.images[0].load())
            assert np.array_equal(np.all(plain == (255, 0, 0), -1), np.all(shown == (255, 0, 0), -1)), family
            assert np.any(np.all(shown == (0, 0, 0), -1)) or np.any(np.all(shown == (128, 128, 128), -1))


def test_options_are_counterbalanced_within_every_level(default_sets):
    for family, benchmark in default_sets.items():
        orders = defaultdict(Counter)
        for item in benchmark.items():
            level = (item.params["difference"], item.groups["illusion_strength"], item.params["inducers"])
            orders[level][item.params["positive_answer"]] += 1
        assert all(counts[0] == counts[1] for counts in orders.values()), family
        by_image = defaultdict(set)
        for item in benchmark.items():
            by_image[item.images[0].ref].add(item.options)
        assert all(len(shown) == 2 for shown in by_image.values())  # each image asked both ways round


def test_polarity_and_congruence_follow_the_inducers_as_drawn(default_sets):
    for family, benchmark in default_sets.items():
        for item in benchmark.items():
            params, strength = item.params, item.params["illusion_strength"]
            if params["inducers"] == "none" or strength == 0:
                assert params["polarity"] == 0
            else:
                assert params["polarity"] == (1 if strength > 0 else -1)
                assert params["pyllusion_strength"] == (strength if params["difference"] > 0 else -strength)
                # pyllusion's label flips with the difference's side: same inducers, other target.
                twin = "incongruent" if (strength > 0) == (params["difference"] > 0) else "congruent"
                if family == "zoellner":  # pyllusion calls a positive Zoellner strength congruent
                    twin = {"congruent": "incongruent", "incongruent": "congruent"}[twin]
                assert params["congruence"] == twin, (family, item.id)


def test_equal_items_are_asked_but_not_graded():
    # A 0.2 % difference between two ~96 px lines does not survive: both lines measure the same.
    benchmark = get_benchmark(
        "illusion/mueller-lyer",
        params={"difference": ["-0.002", "0", "0.002", "0.05"], "canvas": ["384"], "jitter": ["off"], "seed": ["0"]},
    )
    items = benchmark.items()
    for item in items:
        top, bottom = item.params["measured_top_px"], item.params["measured_bottom_px"]
        assert (item.params["measured_favours"] == "equal") == (top == bottom)
        if top == bottom:
            assert item.target is None and item.target_text() == "equal"
            assert benchmark.grade(item, Parsed(0, Status.ANSWERED)) == (None, None)
            assert item.params["positive_answer"] in (0, 1)  # still on the psychometric curve
        else:
            assert benchmark.grade(item, Parsed(item.target, Status.ANSWERED)) == (True, 1.0)
    vanished = {i.params["difference"] for i in items if i.target is None}
    assert {-0.002, 0.0, 0.002} <= vanished and 0.05 not in vanished


def test_parameters_can_be_fixed_or_swept():
    swept = get_benchmark(
        "illusion/ponzo",
        params={"difference": ["-0.1", "0", "0.1"], "illusion_strength": ["10"], "canvas": ["384"], "seed": ["0"]},
    )
    items = swept.items()
    assert len(items) == 3 * 3 * 2  # 3 differences x (with, flipped, none) x 2 prompts
    assert {i.groups["difference"] for i in items} == {"-0.1", "0", "+0.1"}
    assert {i.groups["illusion_strength"] for i in items} == {"+10", "-10", "none"}
    fixed = get_benchmark("illusion/zoellner", params={"distractors_n": ["4"], "difference": ["2"], "seed": ["0"]})
    assert {i.params["distractors_n"] for i in fixed.items()} == {4}
    with pytest.raises(BenchmarkError, match="no parameter thickness"):
        get_benchmark("illusion/ponzo", params={"thickness": ["2"]})
    with pytest.raises(BenchmarkError, match="inducers"):
        get_benchmark("illusion/ponzo", params={"inducers": ["sometimes"]})
    with pytest.raises(BenchmarkError, match="design"):
        get_benchmark("illusion/delboeuf", params={"design": ["vlmbias"]})  # VLMBias has no Delboeuf figure
    with pytest.raises(BenchmarkError, match="jitter takes one value"):
        get_benchmark("illusion/ponzo", params={"jitter": ["on", "off"]})
    with pytest.raises(LimitExceeded, match="illusion_strength is from -60 to 60"):
        get_benchmark("illusion/poggendorff", params={"illusion_strength": ["80"]})


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_size_and_angle_is_bounded_and_the_bounds_draw(family):
    """A value past a bound is refused by name before anything is drawn (a visitor's
    size_min=1e4 would have Pillow fill a shape millions of pixels wide); at the bounds the
    figure draws, or is refused with a reason, quickly."""
    benchmark_id = f"illusion/{family}"
    spec = get_benchmark(benchmark_id).params
    bounded = [name for name, p in spec.items() if p.choices is None and not p.pixels and name != "seed"]
    assert bounded and all(spec[n].minimum is not None and spec[n].maximum is not None for n in bounded)
    for name in bounded:
        for value in (spec[name].maximum * 10 + 1, spec[name].minimum - 1, 1e5):
            with pytest.raises(LimitExceeded, match=f"{name} is from"):
                get_benchmark(benchmark_id, params={name: [f"{value:g}"]})
        for value in (spec[name].minimum, spec[name].maximum):
            fixed = {name: [f"{value:g}"], "canvas": ["1152"], "seed": ["0"], "jitter": ["off"]}
            try:
                items = get_benchmark(benchmark_id, params=fixed).items()
            except BenchmarkError as exc:  # a figure that degenerates there says why
                assert "pixels" in str(exc) or "cannot" in str(exc), exc
                continue
            assert items[0].images[0].load().size == (1152, 1152)


def test_vlmbias_design_draws_its_parameter_set():
    benchmark = get_benchmark("illusion/mueller-lyer", params={"design": ["vlmbias"], "jitter": ["off"], "seed": ["0"]})
    items = benchmark.items()
    # Equal lines at 6 strengths x both polarities (+ 1 control), unequal at +/-0.3/0.4/0.5 x 2
    # strengths x (with, flipped, none), at 3 canvases.
    assert len({i.images[0].ref for i in items}) == (6 * 2 + 1 + 6 * (2 + 2 + 1)) * 3
    vlmbias = {
        (i.params["pyllusion_strength"], i.params["difference"]) for i in items if i.params["inducers"] == "with"
    }
    assert {(30.0, 0.3), (-30.0, -0.3), (50.0, 0.5), (-50.0, -0.5), (55.0, 0.0)} <= vlmbias
    assert {i.params["design"] for i in items} == {"vlmbias"}
    assert sum(1 for i in items if i.target is None) == (6 * 2 + 1) * 3 * 2  # every equal item ungraded
    vh = get_benchmark("illusion/vertical-horizontal", params={"design": ["vlmbias"], "seed": ["0"]})
    assert len({i.images[0].ref for i in vh.items()}) == (6 + 3 * 2) * 3


def test_item_params_are_plain_json(default_sets):
    for benchmark in default_sets.values():
        for item in benchmark.items()[::50]:
            assert json.loads(json.dumps(dict(item.params))) == dict(item.params)


def test_few_shot_examples_are_off_the_design_and_balanced(default_sets):
    for family, benchmark in default_sets.items():
        refs = {item.images[0].ref for item in benchmark.items()}
        examples = benchmark.examples()
        assert examples and not any(e.images[0].ref in refs for e in examples)
        item = benchmark.items()[5]
        chosen = benchmark.select_examples(item, 4)
        assert [e.question for e in chosen] == [item.question] * 4
        picked_positive = [e.target == e.params["positive_answer"] for e in chosen]
        assert sorted(picked_positive) == [False, False, True, True], family
        for example in chosen:
            assert "So the answer is" in example.reasoning
            assert benchmark.render_answer(example, cot=False) == "ab"[example.target]
            assert benchmark.render_answer(example, cot=True).endswith(f"Answer: {'ab'[example.target]}")


def test_vlmbias_numbers_are_published_rows_of_its_six_figures():
    from probes.analysis.scoring import published_rows

    rows = published_rows(IDS)
    figures = {row.benchmark for row in rows if row.paper and "Vision Language Models are Biased" in row.paper}
    assert figures == set(IDS) - {"illusion/delboeuf"}
    ponzo = {row.model: row.accuracy for row in rows if row.benchmark == "illusion/ponzo"}
    assert ponzo == {"Gemini-2.5 Pro": 49.81, "Sonnet-3.7": 54.29, "GPT-4.1": 48.61, "o3": 50.38, "o4-mini": 51.26}
