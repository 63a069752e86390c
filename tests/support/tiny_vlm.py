"""Offline builders for tiny, randomly initialised VLMs of the catalogue's architectures.

``build_tiny_llava`` (below), ``build_tiny_idefics3`` (SmolVLM-256M/500M are Idefics3 models) and
``build_tiny_qwen2_5_vl`` (Qwen2.5-VL); ``BUILDERS`` names them all. Each is made from configs,
saved with ``save_pretrained`` beside its processor (a ``tokenizers`` WordLevel tokenizer, the
architecture's own image processor and processor class, a chat template in the model family's
format) and loads back through ``AutoProcessor`` + ``AutoModelForImageTextToText`` (Qwen2.5-VL's
processor also wants a video processor, which needs torchvision: without it, through
``models.hf_backend.load_processor``, the same processor class for images and text). Sizes: hidden
size 32, 1-2 layers, 32-pixel vision tiles; a few hundred KB each, built and run in seconds on a CPU.

The LLaVA build, constructed from configs (no Hugging Face Hub access):

* vision tower: 2-layer CLIP vision model, 32x32 images, 8x8 patches
  (16 patches + CLS; ``vision_feature_select_strategy="default"`` drops CLS,
  so every image expands to 16 ``<image>`` tokens);
* language model: 2-layer Llama, hidden size 32, ~200-word vocabulary;
* tokenizer: ``tokenizers`` WordLevel model (lower-casing, whitespace/punctuation
  pre-tokenizer) wrapped in ``PreTrainedTokenizerFast``; ``<image>`` is a
  registered special token;
* image processor: CLIP image processor (PIL backend, no torchvision needed);
* ``LlavaProcessor`` with a jinja chat template supporting multi-turn,
  multi-image conversations.

Usage::

    path = build_tiny_llava(tmp_path / "tiny-llava")
    processor = AutoProcessor.from_pretrained(path)
    model = AutoModelForImageTextToText.from_pretrained(path)

The weights are deterministic (fixed torch seed), and the saved folder is a few
hundred KB.
"""

from __future__ import annotations

import pathlib

__all__ = [
    "BUILDERS",
    "build_tiny_idefics3",
    "build_tiny_llava",
    "build_tiny_qwen2_5_vl",
    "CHAT_TEMPLATE",
    "VOCAB_WORDS",
    "SPECIAL_TOKENS",
]

SEED = 1234
IMAGE_SIZE = 32
PATCH_SIZE = 8
HIDDEN = 32

# Only these five are special; everything else in the vocab decodes to text.
PAD, UNK, BOS, EOS, IMAGE = "<pad>", "<unk>", "<s>", "</s>", "<image>"
SPECIAL_TOKENS = [PAD, UNK, BOS, EOS, IMAGE]

VOCAB_WORDS = (
    # chat roles / punctuation used by the template
    ["user", "assistant", "system", ":", "?", ".", ",", "!", "'", "-", "(", ")"]
    + [str(d) for d in range(10)]
    + ["yes", "no", "maybe", "true", "false", "none", "zero", "one", "two", "three", "four", "five"]
    + """
    a an the is are was were be been am do does did have has had can could will would should
    i you he she it we they me him her us them my your its our their this that these those
    there here what which who whom whose when where why how many much more most less few some any all
    each every both either neither not and or but if then than so because of in on at to from by with
    without into onto over under above below between behind front left right top bottom middle center
    near far next inside outside up down same different other another
    image picture photo figure scene object objects shape shapes circle circles square squares
    triangle triangles rectangle rectangles line lines dot dots point points star stars
    red green blue yellow black white gray orange purple pink brown color colors colour
    big small large tiny bigger smaller larger size count number total answer question
    touching touch touches overlap overlapping overlaps intersect intersecting apart separate
    closer close distance first second third last
    see look show shows contain contains containing find count
    q1 q2 q3
    """.split()
)


CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% if message['role'] == 'system' %}SYSTEM: "
    "{% elif message['role'] == 'user' %}USER: "
    "{% else %}ASSISTANT: {% endif %}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}"
    "{% set ns = namespace(prev='') %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<image>{{ '\\n' }}"
    "{% elif part['type'] == 'text' %}"
    "{% if ns.prev == 'text' %} {% endif %}{{ part['text'] }}"
    "{% endif %}"
    "{% set ns.prev = part['type'] %}"
    "{% endfor %}"
    "{% endif %}"
    "{% if message['role'] == 'assistant' %}{{ eos_token }}{% endif %}"
    "{{ '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)


def _dedup(seq):
    seen = set()
    out = []
    for item in seq:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _build_tokenizer():
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    words = [w for w in _dedup(VOCAB_WORDS) if w not in SPECIAL_TOKENS]
    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS + words)}

    raw = Tokenizer(WordLevel(vocab=vocab, unk_token=UNK))
    raw.normalizer = normalizers.Lowercase()
    # splits on whitespace and separates punctuation: "Q1?" -> ["q1", "?"]
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    raw.decoder = decoders.WordPiece(prefix="##", cleanup=True)  # joins with spaces, tidies " ?" -> "?"
    raw.add_special_tokens(SPECIAL_TOKENS)  # matched on raw text, never normalised/split
    raw.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A",
        pair=f"{BOS} $A {BOS} $B",
        special_tokens=[(BOS, vocab[BOS])],
    )

    tok = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        bos_token=BOS,
        eos_token=EOS,
        unk_token=UNK,
        pad_token=PAD,
        extra_special_tokens={"image_token": IMAGE},
        padding_side="left",
        model_max_length=512,
        clean_up_tokenization_spaces=False,
    )
    return tok


def _build_image_processor():
    try:  # PIL backend: available without torchvision and avoids a fallback warning
        from transformers import CLIPImageProcessorPil as ImageProcessor
    except ImportError:  # pragma: no cover - older transformers
        from transformers import CLIPImageProcessor as ImageProcessor

    return ImageProcessor(
        size={"shortest_edge": IMAGE_SIZE},
        crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
    )


def build_tiny_llava(path: pathlib.Path) -> pathlib.Path:
    """Build a tiny random LLaVA model + processor and ``save_pretrained`` them to ``path``."""
    import torch
    from transformers import (
        CLIPVisionConfig,
        GenerationConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    path = pathlib.Path(path)
    path.mkdir(parents=True, exist_ok=True)

    tokenizer = _build_tokenizer()
    image_processor = _build_image_processor()
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=PATCH_SIZE,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,  # CLIP CLS token (dropped again by "default")
        image_token=IMAGE,
        chat_template=CHAT_TEMPLATE,
    )

    vocab_size = len(tokenizer)
    pad_id = tokenizer.pad_token_id
    bos_id = tokenizer.bos_token_id
    eos_id = tokenizer.eos_token_id
    image_id = tokenizer.convert_tokens_to_ids(IMAGE)
    n_image_tokens = (IMAGE_SIZE // PATCH_SIZE) ** 2

    vision_config = CLIPVisionConfig(
        hidden_size=HIDDEN,
        intermediate_size=2 * HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=IMAGE_SIZE,
        patch_size=PATCH_SIZE,
        num_channels=3,
        projection_dim=HIDDEN,
    )
    text_config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=HIDDEN,
        intermediate_size=2 * HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        pad_token_id=pad_id,
        bos_token_id=bos_id,
        eos_token_id=eos_id,
        tie_word_embeddings=False,
        # much larger than the usual 0.02 so that (random) generations actually
        # depend on the image/text input instead of collapsing to one sequence
        initializer_range=0.5,
    )
    config = LlavaConfig(
        vision_config=vision_config,
        text_config=text_config,
        image_token_index=image_id,
        image_seq_length=n_image_tokens,
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
        projector_hidden_act="gelu",
    )

    torch.manual_seed(SEED)
    model = LlavaForConditionalGeneration(config).eval()
    # Random init gives near-uniform logits; a larger LM head makes greedy
    # decoding pick a varied, input-dependent mix of word tokens.
    with torch.no_grad():
        lm_head = model.get_output_embeddings()
        lm_head.weight.normal_(0.0, 1.0)
        # never emit the placeholder / pad / bos / unk tokens
        lm_head.weight[[pad_id, bos_id, image_id, tokenizer.unk_token_id]] = 0.0
        if getattr(lm_head, "bias", None) is not None:
            lm_head.bias.zero_()

    model.generation_config = GenerationConfig(
        bos_token_id=bos_id,
        eos_token_id=eos_id,
        pad_token_id=pad_id,
        do_sample=False,
        max_new_tokens=8,
    )

    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path


# --------------------------------------------------------------------------- #
# Idefics3 (SmolVLM-256M/500M-Instruct) and Qwen2.5-VL
# --------------------------------------------------------------------------- #

# The format of SmolVLM's template, as transformers ships it (models/smolvlm/processing_smolvlm.py,
# DEFAULT_CHAT_TEMPLATE), less its video branch: "User:<image>text<end_of_utterance>\nAssistant:".
IDEFICS3_CHAT_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}"
    "{% if message['content'][0]['type'] == 'image' %}{{ ':' }}{% else %}{{ ': ' }}{% endif %}"
    "{% for line in message['content'] %}"
    "{% if line['type'] == 'text' %}{{ line['text'] }}{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}"
    "{% endfor %}<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)

# Qwen2.5-VL's format: ChatML turns, a default system turn, each image as
# <|vision_start|><|image_pad|><|vision_end|> (the processor widens <|image_pad|> to the image's tokens).
QWEN2_5_VL_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _word_level_tokenizer(special: list[str], *, eos: str, pad: str, unk: str, bos: str | None = None, extra=None):
    """VOCAB_WORDS (plus `special`, matched whole) as a WordLevel tokenizer; adds no tokens itself:
    the chat templates write every special token."""
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    words = [w for w in _dedup([*VOCAB_WORDS, "helpful"]) if w not in special]
    vocab = {tok: i for i, tok in enumerate(special + words)}
    raw = Tokenizer(WordLevel(vocab=vocab, unk_token=unk))
    raw.normalizer = normalizers.Lowercase()
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    raw.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    raw.add_special_tokens(special)
    return PreTrainedTokenizerFast(
        tokenizer_object=raw,
        bos_token=bos,
        eos_token=eos,
        unk_token=unk,
        pad_token=pad,
        extra_special_tokens=extra or {},
        padding_side="left",
        model_max_length=4096,
        clean_up_tokenization_spaces=False,
    )


def _sharpen_and_save(model, tokenizer, path: pathlib.Path, never: list[str], **generation) -> None:
    """As for LLaVA: a large LM head so greedy replies vary with the input; never emit `never`."""
    import torch
    from transformers import GenerationConfig

    ids = [tokenizer.convert_tokens_to_ids(token) for token in never]
    with torch.no_grad():
        lm_head = model.get_output_embeddings()
        lm_head.weight.normal_(0.0, 1.0)
        lm_head.weight[ids] = 0.0
        if getattr(lm_head, "bias", None) is not None:
            lm_head.bias.zero_()
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        do_sample=False,
        max_new_tokens=8,
        **generation,
    )
    model.save_pretrained(path)


IDEFICS3_TILE = 32  # pixels of one vision tile
IDEFICS3_SPLIT_EDGE = 64  # images are resized to this longest edge and split in up to 2x2 tiles + a global one


def build_tiny_idefics3(path: pathlib.Path) -> pathlib.Path:
    """A tiny Idefics3 (the SmolVLM-256M/500M architecture): SigLIP-style vision tower of one
    layer on 32-pixel tiles (8-pixel patches, pixel shuffle 2: 4 tokens a tile), images split
    into up to 2x2 tiles plus a global view as SmolVLM does, a 2-layer Llama text model."""
    import torch
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3Processor, LlamaConfig
    from transformers.models.idefics3.configuration_idefics3 import Idefics3VisionConfig

    try:
        from transformers import Idefics3ImageProcessorPil as ImageProcessor
    except ImportError:  # pragma: no cover - another transformers layout
        from transformers import Idefics3ImageProcessor as ImageProcessor

    path = pathlib.Path(path)
    path.mkdir(parents=True, exist_ok=True)
    rows = [f"<row_{i + 1}_col_{j + 1}>" for i in range(6) for j in range(6)]
    special = ["<|endoftext|>", "<unk>", "<|im_start|>", "<end_of_utterance>", "<fake_token_around_image>",
               "<image>", "<global-img>", *rows]  # fmt: skip
    tokenizer = _word_level_tokenizer(
        special, bos="<|im_start|>", eos="<end_of_utterance>", pad="<|endoftext|>", unk="<unk>"
    )
    patch, scale = 8, 2
    image_seq_len = (IDEFICS3_TILE // patch) ** 2 // scale**2
    processor = Idefics3Processor(
        image_processor=ImageProcessor(
            size={"longest_edge": IDEFICS3_SPLIT_EDGE},
            max_image_size={"longest_edge": IDEFICS3_TILE},
            do_image_splitting=True,
        ),
        tokenizer=tokenizer,
        image_seq_len=image_seq_len,
        chat_template=IDEFICS3_CHAT_TEMPLATE,
    )
    vision = Idefics3VisionConfig(
        hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_hidden_layers=1, num_attention_heads=2,
        image_size=IDEFICS3_TILE, patch_size=patch,
    )  # fmt: skip
    text = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False, initializer_range=0.5,
    )  # fmt: skip
    config = Idefics3Config(
        vision_config=vision,
        text_config=text,
        scale_factor=scale,
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(SEED)
    model = Idefics3ForConditionalGeneration(config).eval()
    never = [t for t in special if t not in ("<end_of_utterance>",)]
    _sharpen_and_save(model, tokenizer, path, never, bos_token_id=tokenizer.bos_token_id)
    processor.save_pretrained(path)
    return path


QWEN_PATCH = 4  # pixels of a vision patch; 2x2 patches merge into one token
QWEN_MAX_PIXELS = 32 * 32  # images are resized to at most this many pixels: at most 16 tokens an image


def build_tiny_qwen2_5_vl(path: pathlib.Path) -> pathlib.Path:
    """A tiny Qwen2.5-VL: a 2-layer window-attention vision tower (4-pixel patches, 2x2 merge,
    one full-attention layer), a 2-layer Qwen2 text model with multimodal rotary positions
    (mrope sections 2+3+3 of the 16-dim heads), images resized to 16-32 pixels a side."""
    import json

    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2_5_VLProcessor

    try:
        from transformers import Qwen2VLImageProcessorPil as ImageProcessor
    except ImportError:  # pragma: no cover - another transformers layout
        from transformers import Qwen2VLImageProcessor as ImageProcessor

    path = pathlib.Path(path)
    path.mkdir(parents=True, exist_ok=True)
    special = ["<|endoftext|>", "<unk>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
               "<|image_pad|>", "<|video_pad|>"]  # fmt: skip
    tokenizer = _word_level_tokenizer(
        special, eos="<|im_end|>", pad="<|endoftext|>", unk="<unk>",
        extra={"image_token": "<|image_pad|>", "video_token": "<|video_pad|>"},
    )  # fmt: skip
    image_processor = ImageProcessor(
        patch_size=QWEN_PATCH, merge_size=2, temporal_patch_size=2,
        size={"shortest_edge": 16 * 16, "longest_edge": QWEN_MAX_PIXELS},
    )  # fmt: skip
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in special}
    vision = {
        "depth": 2, "hidden_size": HIDDEN, "intermediate_size": 2 * HIDDEN, "num_heads": 2,
        "patch_size": QWEN_PATCH, "spatial_merge_size": 2, "temporal_patch_size": 2,
        "window_size": 4 * QWEN_PATCH, "fullatt_block_indexes": [1], "out_hidden_size": HIDDEN,
        "initializer_range": 0.5,
    }  # fmt: skip
    text = {
        "vocab_size": len(tokenizer), "hidden_size": HIDDEN, "intermediate_size": 2 * HIDDEN,
        "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
        "max_position_embeddings": 4096, "initializer_range": 0.5,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
        "bos_token_id": None, "eos_token_id": ids["<|im_end|>"], "pad_token_id": ids["<|endoftext|>"],
    }  # fmt: skip
    config = Qwen2_5_VLConfig(
        vision_config=vision,
        text_config=text,
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(SEED)
    model = Qwen2_5_VLForConditionalGeneration(config).eval()
    _sharpen_and_save(model, tokenizer, path, [t for t in special if t != "<|im_end|>"])

    # The processor as the Hub's Qwen2.5-VL repos hold it. Building Qwen2_5_VLProcessor needs a
    # video processor (torchvision); without one, the same class minus its video part saves
    # the same image processor, tokenizer and template, named as the real class.
    try:
        from transformers import Qwen2VLVideoProcessor

        parts = {"video_processor": Qwen2VLVideoProcessor(patch_size=QWEN_PATCH, merge_size=2, temporal_patch_size=2)}
        processor_class = Qwen2_5_VLProcessor
    except (ImportError, AttributeError):
        parts, processor_class = {}, _without_video(Qwen2_5_VLProcessor)
    processor = processor_class(
        image_processor=image_processor, tokenizer=tokenizer, chat_template=QWEN2_5_VL_CHAT_TEMPLATE, **parts
    )
    processor.save_pretrained(path)
    saved = path / "processor_config.json"
    settings = json.loads(saved.read_text())
    settings["processor_class"] = "Qwen2_5_VLProcessor"
    saved.write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")
    return path


def _without_video(base):
    def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
        base.__init__(self, image_processor, tokenizer, None, chat_template=chat_template, **kwargs)

    return type(base.__name__, (base,), {"__init__": __init__})


BUILDERS = {
    "llava": build_tiny_llava,
    "idefics3": build_tiny_idefics3,
    "qwen2_5_vl": build_tiny_qwen2_5_vl,
}
