"""Find look-alike quadruples: four images that CLIP finds alike and DINOv2 does not.

Source: DiscriBench (Muraoka & Okazaki, NLP2025; seed 003, section 2.2), after MMVP's "erroneous
agreement" (Tong et al., CVPR 2024). A set S of four images qualifies when
  (i) every pair in S has CLIP cosine similarity >= clip_min (0.95 in the paper), and
  (ii) at least one pair in S has DINOv2 cosine similarity < dino_max (0.6 in the paper).

How, without an n x n matrix (10,000 images would need 400 MB of float32 for one):
1. CLIP neighbour lists in blocks of rows: each block's similarities to all images (block x n),
   keeping only pairs at or above clip_min (with a 1e-4 slack for float32 rounding; every kept
   quadruple is judged again exactly, see 3). A list longer than `max_neighbours` keeps its most
   similar entries, and an edge stays only when both ends kept it; this bounds the work inside a
   big cluster of near-duplicates (some quadruples there may be missed; none is wrong).
2. Cliques of four in that sparse graph: each edge points from the lower-ranked end (fewer
   neighbours first) to the higher, and cliques are listed from each root through its out-lists
   (the usual way to list small cliques in time bounded by the graph's arboricity). At most
   `per_root` candidates from one root and `max_candidates` in all: past those the result says
   `truncated`.
3. Each candidate's six CLIP and six DINOv2 similarities are computed in float64 from the two
   vectors (DINOv2 only for these pairs, cached), and the candidate kept only if both conditions
   hold on those float64 values, which are the ones written and printed.

Ranking: by the margin of erroneous agreement, the lowest CLIP pair minus the lowest DINOv2 pair,
largest first (CLIP most sure that all four are alike while DINOv2 is most sure that two differ);
ties by the mean CLIP similarity, then by the images' order. Without `reuse`, quadruples are taken
greedily in that order, skipping any that shares an image with one already taken.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
SLACK = 1e-4


@dataclass(frozen=True)
class Quadruple:
    """Four image indices (ascending) and their six pairwise similarities, in `PAIRS` order."""

    members: tuple[int, int, int, int]
    clip: tuple[float, ...]
    dino: tuple[float, ...]

    @property
    def min_clip(self) -> float:
        return min(self.clip)

    @property
    def mean_clip(self) -> float:
        return math.fsum(self.clip) / len(self.clip)

    @property
    def min_dino(self) -> float:
        return min(self.dino)

    @property
    def score(self) -> float:
        return self.min_clip - self.min_dino

    def matrix(self, which: str) -> list[list[float]]:
        """The 4 x 4 similarity matrix of "clip" or "dino" (1.0 on the diagonal)."""
        values = self.clip if which == "clip" else self.dino
        grid = [[1.0] * 4 for _ in range(4)]
        for (a, b), value in zip(PAIRS, values, strict=True):
            grid[a][b] = grid[b][a] = value
        return grid

    def meets(self, clip_min: float, dino_max: float) -> bool:
        return meets(self.clip, self.dino, clip_min, dino_max)


def meets(clip: tuple[float, ...], dino: tuple[float, ...], clip_min: float, dino_max: float) -> bool:
    """The paper's two conditions on a quadruple's six pairs."""
    return min(clip) >= clip_min and min(dino) < dino_max


@dataclass
class SearchResult:
    quadruples: list[Quadruple] = field(default_factory=list)
    images: int = 0
    edges: int = 0  # CLIP pairs kept in the neighbour graph
    capped_images: int = 0  # images whose neighbour list was cut to max_neighbours
    candidates: int = 0  # four-cliques examined
    qualified: int = 0  # of those, how many met both conditions
    truncated: bool = False  # a work cap stopped the listing early

    def as_dict(self) -> dict[str, int | bool]:
        return {
            "images": self.images,
            "clip_edges": self.edges,
            "capped_images": self.capped_images,
            "candidates": self.candidates,
            "qualified": self.qualified,
            "truncated": self.truncated,
            "quadruples": len(self.quadruples),
        }


def find_quadruples(
    clip: np.ndarray,
    dino: np.ndarray,
    clip_min: float = 0.95,
    dino_max: float = 0.6,
    reuse: bool = False,
    limit: int | None = None,
    *,
    block: int = 512,
    max_neighbours: int = 64,
    per_root: int = 200,
    max_candidates: int = 500_000,
) -> SearchResult:
    """Quadruples meeting both conditions, ranked (see the module docstring). `clip` and `dino`
    hold one row per image, in the same order; rows need not be normalised."""
    clip = np.asarray(clip, dtype=np.float32)
    dino = np.asarray(dino, dtype=np.float32)
    if clip.ndim != 2 or dino.ndim != 2 or len(clip) != len(dino):
        raise ValueError("clip and dino must be 2-D arrays with one row per image, the same images in both")
    result = SearchResult(images=len(clip))
    if len(clip) < 4:
        return result
    clip_sims = _PairCosines(clip)
    dino_sims = _PairCosines(dino)
    neighbours, result.capped_images = _neighbour_lists(clip_sims, clip_min - SLACK, block, max_neighbours)
    result.edges = sum(len(n) for n in neighbours) // 2
    found: list[Quadruple] = []
    for members in _four_cliques(neighbours, per_root, max_candidates, result):
        pairs = [(members[a], members[b]) for a, b in PAIRS]
        clip_values = tuple(clip_sims.get(i, j) for i, j in pairs)
        if min(clip_values) < clip_min:
            continue
        dino_values = tuple(dino_sims.get(i, j) for i, j in pairs)
        if min(dino_values) < dino_max:
            found.append(Quadruple(members, clip_values, dino_values))
    result.qualified = len(found)
    found.sort(key=lambda q: (-q.score, -q.mean_clip, q.members))
    used: set[int] = set()
    for quadruple in found:
        if limit is not None and len(result.quadruples) >= limit:
            break
        if not reuse and used.intersection(quadruple.members):
            continue
        used.update(quadruple.members)
        result.quadruples.append(quadruple)
    return result


class _PairCosines:
    """Exact (float64) cosine similarities of chosen pairs, cached. The rows are not copied: a
    normalised or float64 copy of 10,000 x 1024 floats would cost more than the search."""

    def __init__(self, vectors: np.ndarray):
        self.vectors = vectors
        self.norms = np.concatenate(
            [np.linalg.norm(vectors[i : i + 512].astype(np.float64), axis=1) for i in range(0, len(vectors), 512)]
            or [np.zeros(0)]
        )
        self._cache: dict[tuple[int, int], float] = {}

    def get(self, i: int, j: int) -> float:
        key = (i, j) if i < j else (j, i)
        value = self._cache.get(key)
        if value is None:
            a, b = self.vectors[i].astype(np.float64), self.vectors[j].astype(np.float64)
            denominator = max(self.norms[i] * self.norms[j], 1e-300)
            value = float(np.clip(np.dot(a, b) / denominator, -1.0, 1.0))
            self._cache[key] = value
        return value


def _neighbour_lists(sims: _PairCosines, threshold: float, block: int, cap: int) -> tuple[list[set[int]], int]:
    """Each image's CLIP neighbours at or above `threshold` (at most `cap` of them), computed a
    block of rows at a time; an edge is kept only when both ends kept it."""
    vectors = sims.vectors
    norms = np.maximum(sims.norms, 1e-12).astype(np.float32)
    count = len(vectors)
    kept: list[np.ndarray] = []
    capped = 0
    for start in range(0, count, max(block, 1)):
        rows = vectors[start : start + block] @ vectors.T  # block x n, the only dense piece
        rows /= norms[start : start + block, None]
        rows /= norms[None, :]
        for offset, row in enumerate(rows):
            row[start + offset] = -np.inf  # not its own neighbour
            above = np.flatnonzero(row >= threshold)
            if len(above) > cap:
                capped += 1
                above = above[np.argpartition(row[above], -cap)[-cap:]]
            kept.append(above)
        del rows, row  # `row` is a view: it would keep this block alive through the next product
    chosen = [set(a.tolist()) for a in kept]
    neighbours = [{j for j in chosen[i] if i in chosen[j]} for i in range(count)]
    return neighbours, capped


def _four_cliques(neighbours: list[set[int]], per_root: int, max_candidates: int, result: SearchResult):
    """Sets of four mutual neighbours, each listed once, as ascending index tuples."""
    order = sorted(range(len(neighbours)), key=lambda n: (len(neighbours[n]), n))
    rank = {node: position for position, node in enumerate(order)}
    out = [{v for v in nbrs if rank[v] > rank[u]} for u, nbrs in enumerate(neighbours)]
    for u in order:
        if len(out[u]) < 3:
            continue
        from_root = 0
        full = False  # this root gave per_root candidates and has more: go to the next root
        for v in sorted(out[u], key=rank.__getitem__):
            common = out[u] & out[v]
            for w in sorted(common, key=rank.__getitem__):
                for x in sorted(common & out[w], key=rank.__getitem__):
                    if result.candidates >= max_candidates:
                        result.truncated = True
                        return
                    if from_root >= per_root:
                        result.truncated = full = True
                        break
                    result.candidates += 1
                    from_root += 1
                    yield tuple(sorted((u, v, w, x)))
                if full:
                    break
            if full:
                break
