"""The illusion stimuli draw pyllusion's figures: its geometry and sign conventions, its look
(checked against pyllusion's own slow renderer), inducers held still across difference 0, and
hard-edged targets whose pixels are exactly the shapes asked for."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pyllusion
import pytest

from probes.baselines.pixels.imaging import dilate
from probes.stimuli.illusions import FAMILIES
from probes.stimuli.illusions.drawing import Disc, Segment, target_pixels
from probes.stimuli.illusions.measure import width_px

# (difference, strength) pairs in each figure's units, one each side of zero.
SETTINGS = {
    "mueller-lyer": [(0.3, 30), (-0.2, -20)],
    "ponzo": [(0.3, 15), (-0.2, -10)],
    "ebbinghaus": [(0.3, 1.0), (-0.4, -0.6)],
    "delboeuf": [(0.3, 1.0), (-0.4, -0.6)],
    "vertical-horizontal": [(0.2, 30), (-0.15, -45)],
    "zoellner": [(3.0, 30), (-2.0, -40)],
    "poggendorff": [(0.2, 30), (-0.1, -20)],
}


def _masks(image) -> dict[str, np.ndarray]:
    rgb = np.asarray(image.convert("RGB")).astype(int)
    return {
        "red": (rgb[..., 0] > 150) & (rgb[..., 0] - np.maximum(rgb[..., 1], rgb[..., 2]) > 110),
        "black": rgb.max(-1) < 100,
        "grey": np.abs(rgb - 128).max(-1) < 20,
    }


def _near(a: np.ndarray, b: np.ndarray, radius: int = 1) -> float:
    """The share of a's pixels within `radius` px of one of b's."""
    return float((a & dilate(b, radius)).sum() / max(1, a.sum()))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_drawing_matches_pyllusions_own_renderer(family):
    cls = FAMILIES[family]
    for difference, strength in SETTINGS[family]:
        stimulus = cls(384, difference, strength)
        ours = _masks(stimulus.render())
        reference = getattr(pyllusion, cls.pyllusion_class)(**stimulus.pyllusion_arguments())
        theirs = _masks(reference.to_image(width=384, height=384))
        # pyllusion's anti-aliased black edges are grey too: the occluder's grey is compared
        # only where there is one (Poggendorff).
        colours = ("red", "black", "grey") if family == "poggendorff" else ("red", "black")
        for colour in colours:
            assert ours[colour].any() == theirs[colour].any(), (family, colour)
            if ours[colour].any():
                # pyllusion anti-aliases at 3x and rounds its coordinates: within a pixel is the same figure.
                assert _near(ours[colour], theirs[colour]) >= 0.97, (family, colour, difference)
                assert _near(theirs[colour], ours[colour]) >= 0.97, (family, colour, difference)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_inducers_stay_put_when_the_difference_crosses_zero(family):
    """The same strength draws the same inducers at -e, 0 and +e (pyllusion itself re-aims them:
    its own strength is the opposite on the negative side)."""
    cls = FAMILIES[family]
    strength = SETTINGS[family][0][1]
    scenes = [cls(768, d, strength).scene() for d in (-1e-7, 0.0, 1e-7)]
    for scene in scenes[1:]:
        assert len(scene.inducers) == len(scenes[0].inducers)
        for (a, _), (b, _) in zip(scene.inducers, scenes[0].inducers, strict=True):
            assert np.allclose(_points(a), _points(b), atol=0.05), family
        for name in scene.targets:
            assert np.allclose(_points(scene.targets[name]), _points(scenes[0].targets[name]), atol=0.05)
    below, above = cls(768, -0.1, strength), cls(768, 0.1, strength)
    assert below.pyllusion_strength() == -strength and above.pyllusion_strength() == strength
    # Passing the strength to pyllusion unchanged on the negative side would flip the inducers.
    naive = dataclasses.replace(below, illusion_strength=-strength)
    assert naive.pyllusion_strength() == strength
    ours, theirs = _all_points(below.scene()), _all_points(naive.scene())
    assert len(ours) != len(theirs) or not np.allclose(ours, theirs, atol=0.5)


def _points(shape) -> list[float]:
    if isinstance(shape, Segment):
        return [*shape.start, *shape.end, shape.width]
    return [*shape.centre, shape.radius]


def _all_points(scene) -> list[float]:
    shapes = [*scene.targets.values(), *(shape for shape, _ in scene.inducers)]
    return [value for shape in shapes for value in _points(shape)]


def test_positive_strength_works_against_the_positive_target():
    """pyllusion's conventions at a positive difference and a positive strength."""
    scene = FAMILIES["mueller-lyer"](384, 0.2, 30).scene()
    top = scene.targets["top"]
    left, right = sorted((top.start[0], top.end[0]))
    fins = [shape for shape, _ in scene.inducers]
    top_fins = [f for f in fins if abs(f.start[1] - top.start[1]) < 1]
    assert top_fins and all(left <= f.end[0] <= right for f in top_fins)  # inward fins: arrowheads

    ponzo = FAMILIES["ponzo"](384, 0.2, 15).scene()
    (l_top, l_bottom), (r_top, r_bottom) = (_x_at(s, ponzo.targets["top"].start[1], ponzo.targets["bottom"].start[1])
                                            for s, _ in ponzo.inducers)  # fmt: skip
    assert r_top - l_top > r_bottom - l_bottom  # the rails converge downwards: the shorter line looks longer

    ebbinghaus = FAMILIES["ebbinghaus"](384, 0.2, 1.0).scene()
    left_ring = [s.radius for s, _ in ebbinghaus.inducers if s.centre[0] < 192]
    right_ring = [s.radius for s, _ in ebbinghaus.inducers if s.centre[0] > 192]
    assert min(left_ring) > max(right_ring)  # big discs around the bigger left disc

    delboeuf = FAMILIES["delboeuf"](384, 0.2, 1.0).scene()
    (left_ring, _), (right_ring, _) = delboeuf.inducers
    assert left_ring.radius / delboeuf.targets["left"].radius > right_ring.radius / delboeuf.targets["right"].radius

    vertical = FAMILIES["vertical-horizontal"](384, 0.2, 60).scene().targets
    assert vertical["left"].start[1] == pytest.approx(vertical["left"].end[1])  # the left line horizontal
    rise = abs(vertical["right"].end[1] - vertical["right"].start[1])
    run = abs(vertical["right"].end[0] - vertical["right"].start[0])
    assert math.degrees(math.atan2(rise, run)) == pytest.approx(60)  # the right one tilted up by 60

    zoellner = FAMILIES["zoellner"](384, 2.0, 30).measure().values
    assert zoellner["gap_left_px"] < zoellner["gap_right_px"]  # converging to the left
    assert zoellner["angle_between_deg"] == pytest.approx(4.0, abs=0.05)

    poggendorff = FAMILIES["poggendorff"](384, 0.1, 30).measure()
    assert poggendorff.values["offset_px"] == pytest.approx(0.1 * 192, abs=1.0)  # the right part sits higher


def _x_at(segment: Segment, *ys: float) -> list[float]:
    (x0, y0), (x1, y1) = segment.start, segment.end
    return [x0 + (x1 - x0) * (y - y0) / (y1 - y0) for y in ys]


@pytest.mark.parametrize("canvas", [384, 768, 1152])
def test_measured_sizes_are_pyllusions_to_a_pixel(canvas):
    scale = canvas / 2
    for d in (-0.3, -0.05, 0.0, 0.04, 0.46):
        lines = FAMILIES["mueller-lyer"](canvas, d, 20, size_min=0.45)
        p, measured = lines.pyllusion_parameters(), lines.measure().values
        assert abs(measured["top_px"] - p["Size_Top"] * scale) <= 1
        assert abs(measured["bottom_px"] - p["Size_Bottom"] * scale) <= 1
        discs = FAMILIES["ebbinghaus"](canvas, d, 0.5)
        p, measured = discs.pyllusion_parameters(), discs.measure().values
        for side in ("left", "right"):
            diameter = p[f"Size_Inner_{side.title()}"] * scale
            assert abs(measured[f"{side}_diameter_px"] - diameter) <= 1
            assert measured[f"{side}_area_px"] == pytest.approx(math.pi * diameter**2 / 4, rel=0.03)
        tilted = FAMILIES["vertical-horizontal"](canvas, d, 45)
        p, measured = tilted.pyllusion_parameters(), tilted.measure().values
        assert abs(measured["left_px"] - p["Size_Left"] * scale) <= 1
        assert abs(measured["right_px"] - p["Size_Right"] * scale) <= 1
        for strength in (-55, -30, 0, 10, 45, 60):
            offset = FAMILIES["poggendorff"](canvas, d * 0.5, strength).measure().values["offset_px"]
            assert abs(offset - d * 0.5 * scale) <= 1.0


def test_targets_are_pixels_whose_centres_lie_in_the_shape():
    rng = np.random.default_rng(3)
    rows, cols = np.mgrid[0:120, 0:120] + 0.5
    for _ in range(200):
        ax, ay, bx, by = rng.uniform(-15, 135, 4)
        width = rng.choice([1.0, 20 / 3, 4.0])
        segment = Segment((ax, ay), (bx, by), width)
        length = math.hypot(bx - ax, by - ay)
        ux, uy = (bx - ax) / length, (by - ay) / length
        along = (cols - ax) * ux + (rows - ay) * uy
        across = (cols - ax) * uy - (rows - ay) * ux
        expected = (along >= 0) & (along <= length) & (np.abs(across) <= width / 2)
        drawn = np.zeros((120, 120), bool)
        drawn[target_pixels(segment, 120)] = True
        assert np.array_equal(drawn, expected)
        disc = Disc((ax, ay), rng.uniform(0.5, 40))
        expected = (cols - ax) ** 2 + (rows - ay) ** 2 <= disc.radius**2
        drawn = np.zeros((120, 120), bool)
        drawn[target_pixels(disc, 120)] = True
        assert np.array_equal(drawn, expected)


def test_mirror_images_rasterise_alike():
    """Nominally equal targets are exactly equal on screen, wherever the figure is moved."""
    for offset in range(-5, 6):
        discs = FAMILIES["delboeuf"](384, 0.0, 0.8, offset_x=offset, offset_y=-offset, size_min=0.237)
        left, right = discs.target_pixels()["left"], discs.target_pixels()["right"]
        assert len(left[0]) == len(right[0]) and width_px(left) == width_px(right)
        lines = FAMILIES["ponzo"](768, 0.0, 10, offset_x=offset, size_min=0.4321).measure()
        assert lines.favours == "equal"
