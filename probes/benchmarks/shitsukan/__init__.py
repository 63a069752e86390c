"""Texture perception ("shitsukan", 質感), from Matsuda, Shiono, Brassard and Suzuki,
大規模視覚言語モデルの質感知覚能力の分析 (seed 001; SPEC.md section 3).

Texture here covers material properties (gloss, transparency), states (dry, frozen) and
impressions (beautiful, ugly). Two tasks read the same folder of {image, object, texture words}:
`shitsukan/classification` (pick the fitting word among N) and `shitsukan/generation` (write three
words; match rate against the people's words). The paper's data set is not public: both read a
user's folder (`--data PATH`, format in `folder.py`) and, without one, our own small sample in
`assets/samples/shitsukan/`.
"""

SOURCE = "Matsuda et al., 大規模視覚言語モデルの質感知覚能力の分析 (texture perception of LVLMs; Tohoku University, RIKEN, NII)"
