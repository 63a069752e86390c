"""Small procedural pictures of materials: the texture-perception ("shitsukan") sample folder.

The texture paper's data (COCO photographs with crowd-sourced texture words) is not public, so
`assets/samples/shitsukan/` holds pictures we draw here ourselves, each a pure function of its
seed, with texture words we wrote for them. `python -m probes.tools.texture_sample OUT` rewrites the
folder (images and items.jsonl) byte for byte; a test checks that the committed copy matches.

The pictures are deliberately simple (a glossy sphere, a rough stone, a striped cloth, ...): they
let the task run offline and give a model something to look at, not a benchmark of record.
Images are quantised to a small palette so that each PNG stays a few KB.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

SIZE = 256
PALETTE_COLOURS = 64
Array = np.ndarray


# --- building blocks --------------------------------------------------------------------


def _grid() -> tuple[Array, Array]:
    """Pixel-centre coordinates in [0, 1), y down."""
    y, x = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    return (x + 0.5) / SIZE, (y + 0.5) / SIZE


def _smooth_noise(rng: np.random.Generator, cells: int) -> Array:
    """Value noise in [0, 1]: a random grid, bicubically enlarged (PIL's resize is deterministic)."""
    grid = (rng.random((cells + 1, cells + 1)) * 255).astype(np.uint8)
    big = Image.fromarray(grid, "L").resize((SIZE, SIZE), Image.Resampling.BICUBIC)
    return np.asarray(big, dtype=np.float32) / 255


def _fractal(rng: np.random.Generator, cells: tuple[int, ...] = (4, 8, 16, 32), falloff: float = 0.5) -> Array:
    total = np.zeros((SIZE, SIZE), np.float32)
    weight, weights = 1.0, 0.0
    for count in cells:
        total += weight * _smooth_noise(rng, count)
        weights += weight
        weight *= falloff
    return total / weights


def _backdrop(top: float = 0.88, bottom: float = 0.72, tint: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> Array:
    """A plain studio backdrop, lighter at the top, as a float RGB image."""
    _, y = _grid()
    shade = top + (bottom - top) * y
    return shade[..., None] * np.asarray(tint, np.float32)


def _coverage(distance_px: Array) -> Array:
    """Anti-aliased inside-ness from a signed distance in pixels (negative inside)."""
    return np.clip(0.5 - distance_px, 0.0, 1.0)


def _mix(base: Array, over: Array | tuple[float, float, float], alpha: Array) -> Array:
    over = np.asarray(over, np.float32)
    return base + (over - base) * alpha[..., None]


def _shadow(image: Array, cx: float, cy: float, rx: float, ry: float, strength: float = 0.35) -> Array:
    x, y = _grid()
    d = ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2
    return image * (1 - strength * np.clip(1 - d, 0, 1) ** 1.5)[..., None]


def _to_png_image(rgb: Array) -> Image.Image:
    """Float RGB -> a palette image: few colours keep the PNG small; no dithering keeps it so."""
    pixels = (np.clip(rgb, 0, 1) * 255 + 0.5).astype(np.uint8)
    return Image.fromarray(pixels, "RGB").quantize(
        PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
    )


# --- the pictures -----------------------------------------------------------------------


def glossy_sphere(seed: int) -> Image.Image:
    """A red ball with a sharp specular highlight: glossy, smooth, vivid."""
    x, y = _grid()
    cx, cy, r = 0.5, 0.47, 0.3
    image = _shadow(_backdrop(), cx + 0.05, cy + r + 0.02, r * 1.1, 0.06)
    dx, dy = (x - cx) / r, (y - cy) / r
    d2 = dx**2 + dy**2
    nz = np.sqrt(np.clip(1 - d2, 0, 1))
    light = np.array([-0.45, -0.6, 0.66], np.float32)
    light /= np.linalg.norm(light)
    diffuse = np.clip(dx * light[0] + dy * light[1] + nz * light[2], 0, 1)
    half = light + np.array([0, 0, 1], np.float32)
    half /= np.linalg.norm(half)
    specular = np.clip(dx * half[0] + dy * half[1] + nz * half[2], 0, 1) ** 80
    ball = np.array([0.8, 0.05, 0.07], np.float32) * (0.3 + 0.7 * diffuse)[..., None]
    ball = ball + specular[..., None] * 0.95
    return _to_png_image(_mix(image, ball, _cover_disc(d2, r)))


def _cover_disc(d2: Array, r: float) -> Array:
    return _coverage((np.sqrt(d2) - 1) * r * SIZE)


def rough_stone(seed: int) -> Image.Image:
    """A grey-brown lumpy rock with a bumpy, lit surface: rough, rugged, hard, dry."""
    rng = np.random.default_rng(seed)
    x, y = _grid()
    cx, cy = 0.5, 0.52
    angle = np.arctan2(y - cy, x - cx)
    phases = rng.random(3) * 2 * math.pi
    radius = 0.3 * (1 + 0.1 * np.sin(3 * angle + phases[0]) + 0.06 * np.sin(5 * angle + phases[1]))
    radius = radius * (1 - 0.15 * np.clip((y - cy) / 0.15, 0, 1))  # a flatter base: it rests on something
    distance = np.hypot(x - cx, y - cy) - radius
    height = _fractal(rng, (8, 16, 32, 64), 0.6)
    gx, gy = np.gradient(height)
    shade = np.clip(0.75 - 18 * (gx + gy), 0.2, 1.2)
    base = np.stack([0.55 + 0.1 * height, 0.5 + 0.08 * height, 0.44 + 0.05 * height], -1)
    stone = base * shade[..., None] * (0.75 + 0.4 * height)[..., None]
    image = _shadow(_backdrop(tint=(1.0, 0.98, 0.94)), cx, cy + 0.27, 0.33, 0.06)
    return _to_png_image(_mix(image, stone, _coverage(distance * SIZE)))


def striped_cloth(seed: int) -> Image.Image:
    """A draped swatch of striped fabric with soft folds and a fine weave: soft, supple, colourful."""
    rng = np.random.default_rng(seed)
    x, y = _grid()
    wave = 0.025 * np.sin(2 * math.pi * (y * 1.3 + rng.random()))
    stripe = np.floor((x + wave) * 9).astype(int) % 3
    colours = np.array([[0.12, 0.2, 0.5], [0.93, 0.88, 0.76], [0.78, 0.16, 0.2]], np.float32)
    cloth = colours[stripe]
    folds = 0.82 + 0.18 * np.sin(2 * math.pi * (x * 2.2 + 0.25 * np.sin(2 * math.pi * y * 0.8)))
    weave = 1 + 0.04 * (((np.arange(SIZE)[:, None] // 2 + np.arange(SIZE)[None, :] // 2) % 2) - 0.5)
    cloth = cloth * (folds * weave)[..., None]
    hem = np.maximum(np.abs(x - 0.5) - 0.42, np.abs(y - 0.5) - 0.42)  # a square swatch
    return _to_png_image(_mix(_backdrop(), cloth, _coverage(hem * SIZE)))


def glass_tumbler(seed: int) -> Image.Image:
    """A clear drinking glass in front of a checked cloth, which shows through it, bent:
    transparent, clear, cold, fragile."""
    x, y = _grid()
    checks = ((np.floor(x * 8) + np.floor(y * 8)) % 2).astype(np.float32)
    backdrop = np.stack([0.85 - 0.35 * checks, 0.86 - 0.3 * checks, 0.9 - 0.1 * checks], -1)
    top, bottom = 0.18, 0.85
    t = np.clip((y - top) / (bottom - top), 0, 1)
    half_width = 0.22 - 0.05 * t  # a tumbler narrows towards its foot
    inside = np.maximum(np.abs(x - 0.5) - half_width, np.maximum(top - y, y - bottom))
    # Refraction: the checks seen through the glass are squeezed towards its axis.
    bent_x = 0.5 + (x - 0.5) * 0.6
    bent_checks = ((np.floor(bent_x * 8) + np.floor(y * 8)) % 2).astype(np.float32)
    seen = np.stack([0.88 - 0.25 * bent_checks, 0.9 - 0.2 * bent_checks, 0.95 - 0.05 * bent_checks], -1)
    edge = np.clip(1 - np.abs(np.abs(x - 0.5) - half_width) * SIZE / 3, 0, 1)
    glint = np.clip(1 - np.abs(x - (0.5 - half_width * 0.55)) * SIZE / 4, 0, 1) * (t < 0.9)
    glass = seen * (1 - 0.45 * edge)[..., None] + glint[..., None] * 0.6
    rim = np.abs(((x - 0.5) / 0.22) ** 2 + ((y - top) / 0.035) ** 2 - 1) < 0.12
    image = _mix(backdrop, glass, _coverage(inside * SIZE))
    return _to_png_image(_mix(image, (0.35, 0.4, 0.45), rim.astype(np.float32) * 0.8))


def fur_ball(seed: int) -> Image.Image:
    """A ball of brown fur drawn hair by hair: fluffy, fleecy, warm."""
    rng = np.random.default_rng(seed)
    canvas = Image.fromarray((np.clip(_backdrop(tint=(0.98, 0.96, 1.0)), 0, 1) * 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(canvas)
    cx, cy = SIZE * 0.5, SIZE * 0.5
    reach = SIZE * 0.3
    draw.ellipse((cx - reach * 0.9, cy - reach * 0.9, cx + reach * 0.9, cy + reach * 0.9), fill=(110, 75, 45))
    for _ in range(5000):
        radius = SIZE * 0.3 * math.sqrt(rng.random())
        angle = rng.random() * 2 * math.pi
        px, py = cx + radius * math.cos(angle), cy + radius * math.sin(angle)
        out = angle + rng.normal(0, 0.6)  # hairs point roughly outwards, not combed
        length = SIZE * (0.03 + 0.04 * rng.random())
        shade = 0.45 + 0.55 * (radius / (SIZE * 0.3)) * rng.random()
        colour = tuple(int(255 * c * shade) for c in (0.72, 0.5, 0.3))
        draw.line((px, py, px + length * math.cos(out), py + length * math.sin(out)), fill=colour, width=1)
    rgb = np.asarray(canvas, dtype=np.float32) / 255
    return _to_png_image(rgb)


def wooden_board(seed: int) -> Image.Image:
    """A plank with wavy grain: natural, warm-feeling, smooth and dry to the touch."""
    rng = np.random.default_rng(seed)
    x, y = _grid()
    warp = _fractal(rng, (3, 6, 12), 0.5)
    rings = (np.sin(2 * math.pi * (y * 14 + 2.5 * warp + 0.6 * x)) + 1) / 2
    grain = rings**3
    light, dark = np.array([0.8, 0.6, 0.38], np.float32), np.array([0.5, 0.32, 0.17], np.float32)
    wood = light + (dark - light) * grain[..., None]
    plank = np.maximum(np.abs(x - 0.5) - 0.45, np.abs(y - 0.5) - 0.3)
    return _to_png_image(_mix(_backdrop(0.6, 0.45), wood, _coverage(plank * SIZE)))


def brushed_metal(seed: int) -> Image.Image:
    """A brushed steel plate with four bolts and a broad sheen: metallic, cold, hard, shiny."""
    rng = np.random.default_rng(seed)
    x, y = _grid()
    streaks = np.asarray(
        Image.fromarray((rng.random((SIZE, 6)) * 255).astype(np.uint8), "L").resize((SIZE, SIZE), Image.BILINEAR),
        dtype=np.float32,
    )
    sheen = np.exp(-(((x + y) - 0.9) ** 2) / 0.03)
    grey = 0.55 + 0.08 * (streaks / 255 - 0.5) + 0.35 * sheen
    metal = np.stack([grey, grey * 1.01, grey * 1.05], -1)
    plate = np.maximum(np.abs(x - 0.5) - 0.4, np.abs(y - 0.5) - 0.4)
    image = _mix(_backdrop(0.35, 0.25), metal, _coverage(plate * SIZE))
    for bx in (0.16, 0.84):
        for by in (0.16, 0.84):
            bolt = np.hypot(x - bx, y - by) - 0.025
            image = _mix(image, (0.35, 0.36, 0.4), _coverage(bolt * SIZE))
    return _to_png_image(image)


def ice_cube(seed: int) -> Image.Image:
    """A pale blue block with white cracks on a dark table: cold, translucent, frozen."""
    rng = np.random.default_rng(seed)
    x, y = _grid()
    block = np.maximum(np.abs(x - 0.5) - 0.28, np.abs(y - 0.52) - 0.28) + 0.0  # square, then rounded below
    corner = np.hypot(np.maximum(np.abs(x - 0.5) - 0.22, 0), np.maximum(np.abs(y - 0.52) - 0.22, 0)) - 0.06
    frost = _fractal(rng, (4, 8, 16), 0.6)
    inner = np.clip(1 - np.maximum(np.abs(x - 0.5), np.abs(y - 0.52)) / 0.28, 0, 1)
    ice = (
        np.stack([0.65 + 0.25 * frost, 0.82 + 0.15 * frost, 0.95 + 0.05 * frost], -1) * (0.8 + 0.25 * inner)[..., None]
    )
    image = _mix(_backdrop(0.25, 0.15, (0.9, 0.95, 1.0)), ice, _coverage(np.maximum(block, corner) * SIZE))
    canvas = Image.fromarray((np.clip(image, 0, 1) * 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(canvas)
    for _ in range(4):  # cracks: short jagged white lines inside the block
        px, py = (0.3 + 0.4 * rng.random(2)) * SIZE
        points = [(px, py)]
        for _ in range(4):
            px += rng.normal(0, 10)
            py += rng.normal(0, 10)
            points.append((float(np.clip(px, 80, 176)), float(np.clip(py, 85, 180))))
        draw.line(points, fill=(250, 252, 255), width=1)
    return _to_png_image(np.asarray(canvas, dtype=np.float32) / 255)


def sponge(seed: int) -> Image.Image:
    """A yellow kitchen sponge full of holes: porous, soft, light."""
    rng = np.random.default_rng(seed)
    x, y = _grid()
    tone = _fractal(rng, (8, 16), 0.5)
    body = np.stack([0.95 + 0 * tone, 0.8 + 0.1 * tone, 0.25 + 0.1 * tone], -1)
    holes = np.zeros_like(x)
    for _ in range(90):
        hx, hy = rng.random(2)
        rx, ry = 0.008 + 0.02 * rng.random(2)
        holes = np.maximum(holes, _coverage((np.hypot((x - hx) / rx, (y - hy) / ry) - 1) * min(rx, ry) * SIZE))
    body = _mix(body, (0.6, 0.45, 0.1), holes * 0.9)
    block = np.maximum(np.abs(x - 0.5) - 0.38, np.abs(y - 0.5) - 0.25)
    return _to_png_image(_mix(_backdrop(), body, _coverage(block * SIZE)))


def rusty_plate(seed: int) -> Image.Image:
    """Grey sheet metal eaten by orange-brown rust blotches: rusty, old, dirty."""
    rng = np.random.default_rng(seed)
    x, y = _grid()
    blotch = _fractal(rng, (4, 8, 16, 32), 0.55)
    rust = np.clip((blotch - 0.45) * 6, 0, 1)
    metal = np.stack([0.55 + 0.05 * blotch] * 3, -1)
    rust_colour = np.stack([0.55 + 0.2 * blotch, 0.27 + 0.1 * blotch, 0.1 + 0.02 * blotch], -1)
    surface = metal + (rust_colour - metal) * rust[..., None]
    plate = np.maximum(np.abs(x - 0.5) - 0.42, np.abs(y - 0.5) - 0.36)
    return _to_png_image(_mix(_backdrop(), surface, _coverage(plate * SIZE)))


def jelly(seed: int) -> Image.Image:
    """A green dome of jelly on a white plate, the plate seen through it: wobbly, glossy, sweet."""
    x, y = _grid()
    plate = np.hypot((x - 0.5) / 0.42, (y - 0.72) / 0.12) - 1
    image = _mix(_backdrop(0.75, 0.6, (1.0, 0.97, 0.92)), (0.97, 0.97, 0.97), _coverage(plate * 0.12 * SIZE))
    dx, dy = (x - 0.5) / 0.3, (y - 0.72) / 0.42
    dome = np.where(y <= 0.72, np.hypot(dx, dy) - 1, np.hypot(dx, (y - 0.72) / 0.06) - 1)
    depth = np.sqrt(np.clip(1 - dx**2 - np.minimum(dy, 0) ** 2, 0, 1))
    body = image * 0.35 + np.array([0.15, 0.6, 0.2], np.float32) * (0.5 + 0.3 * depth)[..., None]
    glint = np.exp(-(((x - 0.41) / 0.035) ** 2 + ((y - 0.48) / 0.06) ** 2))
    body = body + glint[..., None] * 0.8
    return _to_png_image(_mix(image, body, _coverage(dome * 0.3 * SIZE)))


# --- the sample folder ------------------------------------------------------------------

Drawer = Callable[[int], Image.Image]

# (id, drawer, seed, object, object in English, validated words, their English glosses,
#  words that do not fit, their glosses). The words are ours, chosen for what each picture shows.
SAMPLES: tuple[tuple[str, Drawer, int, str, str, list[str], list[str], list[str], list[str]], ...] = (
    ("ball", glossy_sphere, 1, "ボール", "ball",
     ["つやつや", "つるつる", "鮮やか"], ["glossy", "slick", "vivid"],
     ["ざらざら", "ふわふわ"], ["gritty", "fluffy"]),
    ("stone", rough_stone, 2, "石", "stone",
     ["ごつごつ", "ざらざら", "硬い", "乾いた"], ["rugged", "gritty", "hard", "dry"],
     ["みずみずしい", "やわらかい"], ["juicy", "soft"]),
    ("cloth", striped_cloth, 3, "布", "cloth",
     ["やわらかい", "しなやか", "カラフル"], ["soft", "supple", "colourful"],
     ["金属的", "ぬるぬる"], ["metallic", "slimy"]),
    ("glass", glass_tumbler, 4, "グラス", "glass",
     ["透明", "透き通った", "冷たい", "割れやすい"], ["transparent", "clear", "cold", "fragile"],
     ["もこもこ", "さびた"], ["fleecy", "rusty"]),
    ("fur", fur_ball, 5, "毛皮", "fur",
     ["ふわふわ", "もこもこ", "温かい"], ["fluffy", "fleecy", "warm"],
     ["つるつる", "冷たい"], ["slick", "cold"]),
    ("board", wooden_board, 6, "板", "board",
     ["ナチュラル", "温かみのある", "さらさら"], ["natural", "homely", "smooth and dry"],
     ["透明", "ぷるぷる"], ["transparent", "wobbly"]),
    ("metal", brushed_metal, 7, "金属板", "metal plate",
     ["金属的", "冷たい", "硬い", "ピカピカ"], ["metallic", "cold", "hard", "shiny"],
     ["ふわふわ", "温かい"], ["fluffy", "warm"]),
    ("ice", ice_cube, 8, "氷", "ice",
     ["冷たい", "透明感がある", "凍った"], ["cold", "translucent", "frozen"],
     ["乾いた", "温かい"], ["dry", "warm"]),
    ("sponge", sponge, 9, "スポンジ", "sponge",
     ["穴だらけ", "やわらかい", "軽い"], ["porous", "soft", "light"],
     ["硬い", "ピカピカ"], ["hard", "shiny"]),
    ("rust", rusty_plate, 10, "鉄板", "iron plate",
     ["さびた", "古い", "汚い"], ["rusty", "old", "dirty"],
     ["新品", "つやつや"], ["brand-new", "glossy"]),
    ("jelly", jelly, 11, "ゼリー", "jelly",
     ["ぷるぷる", "つやつや", "甘そう"], ["wobbly", "glossy", "sweet-looking"],
     ["ごつごつ", "乾いた"], ["rugged", "dry"]),
)  # fmt: skip


def sample_records() -> list[dict]:
    """The sample folder's items.jsonl records, in order."""
    records = []
    for key, _, _, name, name_en, words, words_en, negatives, negatives_en in SAMPLES:
        records.append({"id": key, "image": f"{key}.png", "object": name, "words": words, "negatives": negatives,
                        "object_en": name_en, "words_en": words_en, "negatives_en": negatives_en})  # fmt: skip
    return records


def sample_images() -> dict[str, Image.Image]:
    return {f"{key}.png": drawer(seed) for key, drawer, seed, *_ in SAMPLES}


def write_sample(folder: Path) -> None:
    """Write the sample folder: one PNG per picture and items.jsonl."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, image in sample_images().items():
        image.save(folder / name, format="PNG", optimize=True)
    lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in sample_records())
    (folder / "items.jsonl").write_text(lines, encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m probes.tools.texture_sample OUT_FOLDER")
    write_sample(Path(sys.argv[1]))
