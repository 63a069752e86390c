"""Offline builder for a tiny, randomly initialised LLaVA-style VLM.

Everything is constructed from configs (no Hugging Face Hub access):

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

__all__ = ["build_tiny_llava", "CHAT_TEMPLATE", "VOCAB_WORDS", "SPECIAL_TOKENS"]

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
