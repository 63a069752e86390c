"""A simplified subway map: four stations and single-coloured paths between them ("VLMs are
blind", task 7).

Looks like the paper's maps (drawn by its authors' generator, which this follows): a white
square canvas split by an invisible 18 x 18 grid; bold black station letters A (top), B (right),
C (bottom), D (left) about one cell tall; three start points per station, one cell from its
letter on the side facing the map; paths along the grid lines in matplotlib's tab10 colours, one
colour per path, 10 or 20 points wide on the generator's 9000 px figure (4 or 8 px at 512 px).

How a map is drawn (pure in its key):
1. Which stations are joined. Every station has N path ends, so the multigraph of paths is
   a x {AB, CD} + b x {AC, BD} + c x {AD, BC} with a + b + c = N (a 4-vertex graph of equal
   degrees has equal counts on opposite pairs). The asked pair's matching gets the map's
   target count; the other two share the rest at random.
2. Each path, in random order, from a random end station and a free start point: a depth-first
   search over grid nodes with moves N/S/E/W, the neighbours tried in random order, never moving
   back towards its own station's side (as the authors' generator), until it reaches a free
   start point of the other station.
3. Traceable by construction: a path never visits a node twice; it may share a node with one
   other path only by crossing it straight and at right angles; it never runs along another
   path, turns on another path, or touches the nodes next to any station's start points
   (those belong to the start point's own path).
If a search fails the whole map is redrawn, deterministically from the same seed.

Ground truth is read from the paths actually drawn: `count(a, b)` counts the drawn paths whose
two ends are stations a and b.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections import deque
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from probes.stimuli.lazy_numpy import np
from probes.stimuli.raster import Drawn, blank

# Bump when the drawing changes: image references (and so cached answers) are keyed by it.
VERSION = 1
GRID = 18  # cells per side
STATIONS = ("A", "B", "C", "D")
PAIRS = tuple(f"{a}-{b}" for a, b in itertools.combinations(STATIONS, 2))
# Station letters' centres and start points, in cells (x right, y down).
LABELS = {"A": (9.0, 1.0), "B": (17.0, 9.0), "C": (9.0, 17.0), "D": (1.0, 9.0)}
POINTS = {
    "A": ((8, 2), (9, 2), (10, 2)),
    "B": ((16, 8), (16, 9), (16, 10)),
    "C": ((8, 16), (9, 16), (10, 16)),
    "D": ((2, 8), (2, 9), (2, 10)),
}
INWARD = {"A": (0, 1), "B": (-1, 0), "C": (0, -1), "D": (1, 0)}  # from a start point into the map
INTERIOR = range(3, 16)  # nodes a path may pass through, in both axes
MOVES = ((0, -1), (0, 1), (-1, 0), (1, 0))
MATCHINGS = (("A-B", "C-D"), ("A-C", "B-D"), ("A-D", "B-C"))
# matplotlib's tab10 in order: each path of a map gets the next colour.
PALETTE = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75))
PALETTE_NAMES = ("blue", "orange", "green", "red", "purple", "brown")
# The authors' figure is 18 inches at 500 dpi (9000 px), resized to the canvas: a line width of
# w points is w * 500 / 72 * canvas / 9000 = w * canvas / 1296 px.
POINTS_PER_CANVAS = 9000 * 72 / 500
LETTER_CAP = 1.0  # station letters' cap height, in cells (fontsize 100 on that figure)
MAX_DRAWS = 200  # maps tried per key before giving up
SEARCH_BUDGET = 3_000  # steps one path's search may take before the map is redrawn
WANDER = 4.0  # how far (in cells) a path's next step may stray from the shortest way to its goal

Node = tuple[int, int]


@dataclass(frozen=True)
class Route:
    start: str  # station the path leaves from
    end: str  # station it arrives at
    nodes: tuple[Node, ...]  # grid nodes from the start point to the end point

    @property
    def pair(self) -> str:
        return "-".join(sorted((self.start, self.end)))


def _port(point: Node, station: str) -> Node:
    return (point[0] + INWARD[station][0], point[1] + INWARD[station][1])


PORTS = {_port(p, s): (s, p) for s in STATIONS for p in POINTS[s]}  # node -> (station, start point)


class _Grid:
    """Which nodes the paths drawn so far use, and how."""

    def __init__(self) -> None:
        self.used: dict[Node, str] = {}  # "h" or "v": passes straight; "x": turn, end or crossing

    def mark(self, nodes: tuple[Node, ...]) -> None:
        for before, node, after in zip(nodes, nodes[1:], nodes[2:], strict=False):
            if node in self.used:  # a crossing: nobody else may use it
                self.used[node] = "x"
            elif before[0] == after[0]:
                self.used[node] = "v"
            elif before[1] == after[1]:
                self.used[node] = "h"
            else:
                self.used[node] = "x"
        for node in (nodes[0], nodes[1], nodes[-2], nodes[-1]):
            self.used[node] = "x"

    def enterable(self, node: Node, move: Node) -> bool:
        """May a path step onto `node` with `move` (not a start point, not a port)?"""
        if node[0] not in INTERIOR or node[1] not in INTERIOR or node in PORTS:
            return False
        use = self.used.get(node)
        if use is None:
            return True
        # Only straight across a path that passes straight: vertical over "h", horizontal over "v".
        return (use == "h" and move[0] == 0) or (use == "v" and move[1] == 0)


def _search(grid: _Grid, start: str, point: Node, end: str, free: set[Node], rng: random.Random) -> Route | None:
    """Depth-first search from a start point of `start` to a free start point of `end`."""
    back = (-INWARD[start][0], -INWARD[start][1])
    moves = [m for m in MOVES if m != back]
    goals = {_port(p, end): p for p in POINTS[end] if p in free}
    reach = _reaching(grid, moves, goals)
    first = _port(point, start)
    path = [point, first]
    on_path = {point, first}
    stack = [_options(first, INWARD[start], moves, grid, goals, reach, rng)]
    for _ in range(SEARCH_BUDGET):
        if not stack:
            return None
        try:
            move, node = next(stack[-1])
        except StopIteration:
            stack.pop()
            on_path.discard(path.pop())
            continue
        if node in on_path:
            continue
        if node in goals:
            return Route(start, end, (*path, node, goals[node]))
        path.append(node)
        on_path.add(node)
        stack.append(_options(node, move, moves, grid, goals, reach, rng))
    return None  # too long a search: the caller redraws the map


def _options(node: Node, came: Node, moves: list[Node], grid: _Grid, goals, reach: set[Node], rng: random.Random):
    """The next steps from `node`, in random order; across another path only straight on."""
    if grid.used.get(node) in ("h", "v"):
        candidates = [came]  # we are crossing a path: go straight on
    else:
        # Random order, leaning towards the goal: a blind random search winds through the
        # whole grid and leaves no room for the other paths.
        def lean(move: Node) -> float:
            x, y = node[0] + move[0], node[1] + move[1]
            return min(abs(x - gx) + abs(y - gy) for gx, gy in goals) + rng.uniform(0, WANDER)

        candidates = sorted(moves, key=lean)
    for move in candidates:
        nxt = (node[0] + move[0], node[1] + move[1])
        if nxt in goals:
            if grid.used.get(node) not in ("h", "v"):  # never end right after crossing a path
                yield move, nxt
        elif nxt in reach and grid.enterable(nxt, move):
            yield move, nxt


def _reaching(grid: _Grid, moves: list[Node], goals) -> set[Node]:
    """Nodes from which some goal can be reached with these moves over nodes that are free or
    crossable (a relaxation: the search may still fail from them, never succeed elsewhere)."""
    reach: set[Node] = set()
    queue = deque(goals)
    while queue:
        here = queue.popleft()
        for dx, dy in moves:
            before = (here[0] - dx, here[1] - dy)
            if before in reach or before in PORTS or grid.used.get(before) == "x":
                continue
            if before[0] in INTERIOR and before[1] in INTERIOR:
                reach.add(before)
                queue.append(before)
    return reach


def check_routes(routes: tuple[Route, ...], paths: int) -> None:
    """Raise ValueError unless the routes make a traceable map: unit moves, simple paths
    between start points of two different stations, `paths` ends per station, each start
    point used once, and nodes shared only where two paths cross straight at right angles."""
    ends: dict[str, int] = dict.fromkeys(STATIONS, 0)
    seen_points: set[Node] = set()
    shared: dict[Node, list[str]] = {}
    for route in routes:
        nodes = route.nodes
        if route.start == route.end or nodes[0] not in POINTS[route.start] or nodes[-1] not in POINTS[route.end]:
            raise ValueError(f"a path must join start points of two stations: {route}")
        if len(set(nodes)) != len(nodes):
            raise ValueError(f"a path visits a node twice: {route}")
        if any(abs(a[0] - b[0]) + abs(a[1] - b[1]) != 1 for a, b in itertools.pairwise(nodes)):
            raise ValueError(f"a path must move one cell N, S, E or W at a time: {route}")
        for point in (nodes[0], nodes[-1]):
            if point in seen_points:
                raise ValueError(f"start point {point} is used twice")
            seen_points.add(point)
        ends[route.start] += 1
        ends[route.end] += 1
        for before, node, after in zip(nodes, nodes[1:], nodes[2:], strict=False):
            straight = "v" if before[0] == after[0] else "h" if before[1] == after[1] else "turn"
            shared.setdefault(node, []).append(straight)
        for node in (nodes[0], nodes[-1]):
            shared.setdefault(node, []).append("end")
    if set(ends.values()) != {paths}:
        raise ValueError(f"every station needs {paths} path ends; got {ends}")
    for node, uses in shared.items():
        if len(uses) > 1 and sorted(uses) != ["h", "v"]:
            raise ValueError(f"paths may share node {node} only by crossing straight at right angles: {uses}")


@functools.lru_cache(maxsize=512)
def draw_map(paths: int, pair: str, target: int, key: str) -> tuple[Route, ...]:
    """Draw the routes of one map: every station has `paths` path ends and the stations of
    `pair` are joined by `target` paths. Pure in its arguments."""
    rng = random.Random(f"subway-map:{paths}:{pair}:{target}:{key}")
    asked = next(m for m in MATCHINGS if pair in m)
    others = [m for m in MATCHINGS if m is not asked]
    for _ in range(MAX_DRAWS):
        share = rng.randint(0, paths - target)
        counts = {asked: target, others[0]: share, others[1]: paths - target - share}
        wanted = [p for matching, n in counts.items() for p in matching for _ in range(n)]
        rng.shuffle(wanted)
        grid, free = _Grid(), {p for s in STATIONS for p in POINTS[s]}
        routes = []
        for joined in wanted:
            a, b = joined.split("-")
            start, end = (a, b) if rng.random() < 0.5 else (b, a)
            points = sorted(p for p in POINTS[start] if p in free)
            route = _search(grid, start, rng.choice(points), end, free, rng)
            if route is None:
                break
            grid.mark(route.nodes)
            free -= {route.nodes[0], route.nodes[-1]}
            routes.append(route)
        else:
            check_routes(tuple(routes), paths)
            return tuple(routes)
    raise ValueError(f"no subway map with {paths} paths per station and {target} on {pair} ({key})")


@functools.lru_cache(maxsize=64)
def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


def _draw_letter(canvas: np.ndarray, letter: str, cx: float, cy: float, cell: float) -> None:
    """A bold black letter centred (by its ink) on (cx, cy), about LETTER_CAP cells tall."""
    size = max(8, round(LETTER_CAP * cell / 0.7))  # the bundled font's caps are 0.7 of its size
    stroke = max(1, round(size / 18))  # a stroke of the same black makes it bold
    font = _font(size)
    left, top, right, bottom = font.getbbox(letter, anchor="ls", stroke_width=stroke)
    mask = Image.new("L", (right - left, bottom - top), 0)
    ImageDraw.Draw(mask).text(
        (-left, -top), letter, font=font, fill=255, anchor="ls", stroke_width=stroke, stroke_fill=255
    )
    x0, y0 = round(cx - mask.width / 2), round(cy - mask.height / 2)
    coverage = np.asarray(mask, dtype=np.float32)[..., None] / 255
    region = canvas[y0 : y0 + mask.height, x0 : x0 + mask.width].astype(np.float32)
    canvas[y0 : y0 + mask.height, x0 : x0 + mask.width] = np.rint(region * (1 - coverage)).astype(np.uint8)


def _corners(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The polyline without the points where it goes straight on."""
    kept = [points[0]]
    for before, point, after in zip(points, points[1:], points[2:], strict=False):
        if (before[0] == point[0] == after[0]) or (before[1] == point[1] == after[1]):
            continue
        kept.append(point)
    return [*kept, points[-1]]


def stroke_path(canvas: np.ndarray, points: list[tuple[float, float]], width: float, colour) -> None:
    """A polyline of horizontal and vertical segments, round joins and caps, anti-aliased like
    `raster.stroke_polyline` (coverage from the distance to the nearest segment) but each
    segment measured over its own small box: a long winding path costs its length, not its
    bounding box times its number of segments."""
    height, width_px = canvas.shape[:2]
    points = _corners(points)
    reach = width / 2 + 1
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, y0 = max(0, int(min(xs) - reach - 1)), max(0, int(min(ys) - reach - 1))
    x1, y1 = min(width_px, int(max(xs) + reach + 2)), min(height, int(max(ys) + reach + 2))
    coverage = np.zeros((y1 - y0, x1 - x0), dtype=np.float32)
    for (ax, ay), (bx, by) in itertools.pairwise(points):
        sx0, sx1 = max(x0, int(min(ax, bx) - reach - 1)), min(x1, int(max(ax, bx) + reach + 2))
        sy0, sy1 = max(y0, int(min(ay, by) - reach - 1)), min(y1, int(max(ay, by) + reach + 2))
        gy, gx = np.ogrid[sy0:sy1, sx0:sx1]
        px, py = gx.astype(np.float32) + 0.5, gy.astype(np.float32) + 0.5
        # Distance to an axis-aligned segment: how far outside its x and y ranges.
        dx = np.maximum(np.maximum(min(ax, bx) - px, px - max(ax, bx)), 0)
        dy = np.maximum(np.maximum(min(ay, by) - py, py - max(ay, by)), 0)
        local = np.clip(width / 2 + 0.5 - np.hypot(dx, dy), 0.0, 1.0)
        view = coverage[sy0 - y0 : sy1 - y0, sx0 - x0 : sx1 - x0]
        np.maximum(view, local, out=view)
    rows, columns = np.nonzero(coverage)
    share = coverage[rows, columns][:, None]
    region = canvas[rows + y0, columns + x0].astype(np.float32)
    region += (np.asarray(colour, dtype=np.float32) - region) * share
    canvas[rows + y0, columns + x0] = np.rint(region).astype(np.uint8)


@dataclass(frozen=True)
class SubwayMap(Drawn):
    canvas: int  # side of the square canvas, px (512 or 1024 in the paper)
    paths: int  # N, path ends per station (1, 2 or 3)
    thickness: int  # line width in points on the authors' figure (10 or 20)
    seed: int  # the design seed
    index: int  # which map of its design cell; the asked pair gets index % (N + 1) paths
    pair: str = "auto"  # the asked stations ("A-C"), or "auto": drawn from the seed

    def __post_init__(self) -> None:
        if not 1 <= self.paths <= 3:
            raise ValueError(f"paths per station must be 1, 2 or 3 (three start points each); got {self.paths}")
        if self.pair != "auto" and self.pair not in PAIRS:
            raise ValueError(f"pair must be auto or one of {', '.join(PAIRS)}; got {self.pair!r}")
        if not 128 <= self.canvas <= 4096:
            raise ValueError(f"canvas must be 128 to 4096 px; got {self.canvas}")
        if not 0 < self.thickness <= 40:
            raise ValueError(f"thickness is a line width of 1 to 40 points; got {self.thickness}")
        if self.index < 0:
            raise ValueError(f"index must be 0 or more; got {self.index}")

    @property
    def ref(self) -> str:
        return (
            f"subway/v{VERSION}:canvas={self.canvas},paths={self.paths},thickness={self.thickness},"
            f"seed={self.seed},index={self.index},pair={self.pair}"
        )

    @property
    def asked(self) -> str:
        """The asked pair of stations, "A-C"."""
        if self.pair != "auto":
            return self.pair
        return random.Random(f"subway-pair:{self.paths}:{self.seed}:{self.index}").choice(PAIRS)

    @property
    def target(self) -> int:
        """How many paths the map was drawn to have between the asked stations."""
        return self.index % (self.paths + 1)

    def routes(self) -> tuple[Route, ...]:
        """The drawn paths, in drawing order (their colours follow the same order)."""
        return draw_map(self.paths, self.asked, self.target, f"{self.seed}:{self.index}")

    def count(self, pair: str | None = None) -> int:
        """How many drawn paths join the two stations of `pair` (the asked pair by default)."""
        pair = pair or self.asked
        return sum(1 for route in self.routes() if route.pair == pair)

    @property
    def cell(self) -> float:
        return self.canvas / GRID

    @property
    def width_px(self) -> float:
        return self.thickness * self.canvas / POINTS_PER_CANVAS

    def colours(self) -> list[tuple[int, int, int]]:
        return [PALETTE[i % len(PALETTE)] for i in range(len(self.routes()))]

    def draw(self) -> np.ndarray:
        canvas = blank(self.canvas, self.canvas)
        for letter, (x, y) in LABELS.items():
            _draw_letter(canvas, letter, x * self.cell, y * self.cell, self.cell)
        for route, colour in zip(self.routes(), self.colours(), strict=True):
            points = [(x * self.cell, y * self.cell) for x, y in route.nodes]
            stroke_path(canvas, points, self.width_px, colour)
        return canvas
