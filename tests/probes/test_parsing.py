"""Answer extraction on replies that look like what real models write. The larger corpus, with
each item's context, is tests/probes/replies/."""

import pytest

from probes.core.types import AnswerKind, Status
from probes.reading.parsing import parse

YES_NO = [
    ("Yes", "yes"),
    ("No", "no"),
    ("Yes.", "yes"),
    ("No.", "no"),
    ("**Yes**", "yes"),
    ("**No**", "no"),
    ("Yes, they touch.", "yes"),
    ("Yes, the two circles are touching each other.", "yes"),
    ("No, the circles do not overlap.", "no"),
    ("no", "no"),
    ("YES", "yes"),
    ("Sí? No.", "no"),
    ("Answer: Yes", "yes"),
    ("Answer: No", "no"),
    ("The circles are separated by a small gap, so the answer is No.", "no"),
    ("Looking closely, there is no gap between the circles. Yes.", "yes"),
    ("There is no gap between them, so yes.", "yes"),
    ("The blue circle and the pink circle overlap slightly.\nAnswer: Yes", "yes"),
    ("Let me think. The edges appear to meet at a single point... Final answer: yes", "yes"),
    ('"No"', "no"),
    ("No, there is a clear space between them.", "no"),
    ("Nope.", "no"),
    ("Yeah, they're touching.", "yes"),
    ("- No", "no"),
    ("{Yes}", "yes"),
    ("<think>They might touch. Actually no, there's a gap.</think>\nNo", "no"),
    ("It's hard to say, but no.", "no"),
    ("Yes\n\nThe two circles are in contact at their edges.", "yes"),
    ("The circles touch at one point.\n\n**Answer: Yes**", "yes"),
    ("Based on the image, no.", "no"),
    ("Ｙｅｓ", "yes"),
    ("no.", "no"),
]
YES_NO_UNPARSED = [
    "I can't tell from this image",
    "The circles are close together.",
    "I have no idea.",
    "Maybe",
    "It depends on the resolution.",
    "",
    "   ",
]
REFUSED = [
    "I'm sorry, I can't help with that.",
    "I cannot assist with this request.",
    "I'm sorry, but I won't be able to help with that.",
    "Sorry, I must decline to answer.",
]


@pytest.mark.parametrize(("reply", "expected"), YES_NO)
def test_yes_no_replies(reply, expected):
    parsed = parse(reply, AnswerKind.YES_NO)
    assert parsed.status is Status.ANSWERED, reply
    assert parsed.value == expected


@pytest.mark.parametrize("reply", YES_NO_UNPARSED)
def test_yes_no_unreadable_replies_are_unparsed_not_guessed(reply):
    parsed = parse(reply, AnswerKind.YES_NO)
    assert parsed.status is Status.UNPARSED
    assert parsed.value is None


@pytest.mark.parametrize("reply", REFUSED)
@pytest.mark.parametrize("kind", [AnswerKind.YES_NO, AnswerKind.NUMBER, AnswerKind.CHOICE, AnswerKind.LETTER])
def test_refusals(reply, kind):
    parsed = parse(reply, kind, options=("left", "right"), labels=("a", "b"))
    assert parsed.status is Status.REFUSED


NUMBERS = [
    ("5", 5),
    ("{5}", 5),
    ("{ 7 }", 7),
    ("There are 6 circles in the image.", 6),
    ("There are five circles.", 5),
    ("I count 7 circles.", 7),
    ("Answer: 3", 3),
    ("The answer is {2}.", 2),
    ("**4**", 4),
    ("9.", 9),
    ("Two", 2),
    ("zero", 0),
    ("{0}", 0),
    ("The blue and red lines intersect {1} time.", 1),
    ("The lines cross twice, at x=2 and x=5. So the answer is {2}.", 2),
    ("Counting from left: 1, 2, 3, 4, 5. There are 5 circles in total.", 5),
    ("The top row has 3 circles and the bottom row has 2, so 5 in total.", 5),
    ("Let me count the squares.\n1. outer square\n2. second\n3. third\nAnswer: {3}", 3),
    ("Answer with a number in curly brackets, e.g., {3}. {2}", 2),
    ("As requested (e.g., {5}), my answer is {1}", 1),
    ("The image shows 4 nested squares.", 4),
    ("I see 8 pentagons arranged in two rows.", 8),
    ("There appear to be 6 circles.", 6),
    ("Number of circles: 7", 7),
    ("There are 3 paths from A to C.", 3),
    ("The total is 6.", 6),
    ("{4}\n\nThe squares are nested inside each other.", 4),
    ("<think>maybe 3 or 4</think>{4}", 4),
    ("{３}", 3),
    ("I think there are 2 intersections.\n\nFinal answer: 2", 2),
    ("Total: 5", 5),
    ("It has exactly 3 intersections", 3),
    ("The lines cross twice.", 2),
    ("The lines intersect once.", 1),
    ("There are no intersections.", 0),
    ("They never touch.", 0),
    ("The blue and red lines touch each other 3 times.", 3),
    ("There is no gap at the first crossing, and there are 2 intersections in all.", 2),
    ("Zero paths go from A to C.", 0),
    ("No paths go from A to C.", 0),
    ("One path goes from A to C.", 1),
    ("The image shows seven circles.", 7),
    ("Seven circles.", 7),
]
NUMBERS_UNPARSED = [
    "The lines cross at x=2 and then again at x=5.",
    "Several circles overlap.",
    "I cannot determine the number from this image.",
    "Between 3 and 5",
    "It is hard to count.",
    "e.g., {3}",
]


@pytest.mark.parametrize(("reply", "expected"), NUMBERS)
def test_numbers(reply, expected):
    parsed = parse(reply, AnswerKind.NUMBER)
    assert parsed.status is Status.ANSWERED, reply
    assert parsed.value == expected


@pytest.mark.parametrize("reply", NUMBERS_UNPARSED)
def test_numbers_unparsed(reply):
    assert parse(reply, AnswerKind.NUMBER).status is Status.UNPARSED


OPTIONS = ("The left object", "The right object", "Both objects", "Neither object")
LABELS = ("a", "b", "c", "d")
CHOICES = [
    ("a", 0),
    ("b.", 1),
    ("C", 2),
    ("(d)", 3),
    ("a. The left object", 0),
    ("b) The right object", 1),
    ("Answer: c", 2),
    ("Answer: d. Neither object", 3),
    ("The answer is b.", 1),
    ("The right object", 1),
    ("Both objects", 2),
    ("Neither object.", 3),
    ("Option (c)", 2),
    ("I choose option b because the right object cannot exist.", 1),
    ("The left object is a possible cube. The right object is an impossible triangle.\nAnswer: b", 1),
    ("'Answer': c", 2),
    ("**b**", 1),
    ("b - the right object", 1),
    ("Neither object is impossible, so (d).", 3),
    ("A.", 0),
    ("D: Neither object", 3),
    ("{c}", 2),
    ("The correct answer is (a).", 0),
    ("Both objects are geometrically impossible.", 2),
    ("c\n\nBoth drawings contain contradictions.", 2),
    ("Final answer: a", 0),
    ("answer: B", 1),
    ("the right object", 1),
    ("Option D", 3),
    ("(b) The right object", 1),
    ("ａ", 0),
]
CHOICES_UNPARSED = [
    "A difficult question.",
    "Both the left object and the right object look fine to me, but it is hard to say.",
    "The drawing shows impossible geometry.",
    "e",
    "I am not sure which one.",
]


@pytest.mark.parametrize(("reply", "expected"), CHOICES)
def test_choices(reply, expected):
    parsed = parse(reply, AnswerKind.CHOICE, options=OPTIONS, labels=LABELS)
    assert parsed.status is Status.ANSWERED, reply
    assert parsed.value == expected


@pytest.mark.parametrize("reply", CHOICES_UNPARSED)
def test_choices_unparsed(reply):
    assert parse(reply, AnswerKind.CHOICE, options=OPTIONS, labels=LABELS).status is Status.UNPARSED


def test_choice_option_text_for_illusionvqa_style_options():
    options = ("Yes", "No", "Cannot be determined")
    # Label a is "Yes": a reply whose label and text name different options is no answer.
    assert parse("a. No.", AnswerKind.CHOICE, options=options, labels=("a", "b", "c")).status is Status.UNPARSED
    assert parse("b. No.", AnswerKind.CHOICE, options=options, labels=("a", "b", "c")).value == 1
    assert parse("No", AnswerKind.CHOICE, options=options, labels=("a", "b", "c")).value == 1
    assert parse("Cannot be determined.", AnswerKind.CHOICE, options=options, labels=("a", "b", "c")).value == 2


def test_choice_digit_labels():
    options = ("光沢感", "ざらざら", "透明感")
    labels = ("0", "1", "2")
    assert parse("1", AnswerKind.CHOICE, options=options, labels=labels).value == 1
    assert parse("２", AnswerKind.CHOICE, options=options, labels=labels).value == 2
    assert parse("回答：0", AnswerKind.CHOICE, options=options, labels=labels).value == 0
    assert parse("透明感", AnswerKind.CHOICE, options=options, labels=labels).value == 2
    assert parse("7", AnswerKind.CHOICE, options=options, labels=labels).status is Status.UNPARSED


LETTERS = [
    ("e", "e"),
    ("E", "E"),
    ("The circled letter is 'e'.", "e"),
    ('The letter being circled is "k".', "k"),
    ("The letter circled is K.", "K"),
    ("**g**", "g"),
    ("Answer: m", "m"),
    ("The red oval highlights the letter 'd' in 'Subdermatoglyphic'.", "d"),
    ("It is the letter G.", "G"),
    ("The character highlighted with a red oval is 'W'.", "W"),
    ("'n'", "n"),
    ('"o"', "o"),
    ("{h}", "h"),
    ('The letter inside the red oval is "c".', "c"),
    ("Looking at the word 'Acknowledgement', the oval surrounds the letter 'w'.", "w"),
    ("t.", "t"),
    ("Letter: p", "p"),
    ("The highlighted character is `Z`.", "Z"),
    ('The circled letter is the letter "y".', "y"),
    ("The oval is around the 'q'.", "q"),
    ("I believe the circled letter is 'a'.", "a"),
    ("Answer: 'l'", "l"),
    ("The letter circled in red is 'r'", "r"),
    ("The circled character is: x", "x"),
    ("**Answer:** v", "v"),
    ('The letter "i" is circled.', "i"),
    ("Circled: 'b'", "b"),
    ("The red oval encloses the letter 'N' in the string.", "N"),
    ("It's 'u'", "u"),
    ("s", "s"),
]
LETTERS_UNPARSED = [
    "The word is Acknowledgement.",
    "I cannot see any circle.",
    "The oval is around the middle of the word.",
]


@pytest.mark.parametrize(("reply", "expected"), LETTERS)
def test_letters(reply, expected):
    parsed = parse(reply, AnswerKind.LETTER)
    assert parsed.status is Status.ANSWERED, reply
    assert parsed.value == expected


@pytest.mark.parametrize("reply", LETTERS_UNPARSED)
def test_letters_unparsed(reply):
    assert parse(reply, AnswerKind.LETTER).status is Status.UNPARSED


PAIRS = [
    ("(5,6)", (5, 6)),
    ("(5, 6)", (5, 6)),
    ("rows={5} columns={6}", (5, 6)),
    ("rows={4} columns={4}", (4, 4)),
    ("Rows: 7, Columns: 8", (7, 8)),
    ("The table has 3 rows and 4 columns.", (3, 4)),
    ("There are 6 columns and 5 rows.", (5, 6)),
    ("5x6", (5, 6)),
    ("5 × 6", (5, 6)),
    ("Answer: (9, 10)", (9, 10)),
    ("rows = 4, columns = 5", (4, 5)),
    ("The grid is 4 by 4.", (4, 4)),
    ("**(3, 3)**", (3, 3)),
    ("I count 5 rows and 5 columns, so (5,5).", (5, 5)),
    ("Count the number of rows and columns, for example, rows={5} columns={6}. rows={3} columns={4}", (3, 4)),
    ("e.g., (5,6). My answer: (7,7)", (7, 7)),
    ("rows={ 8 } columns={ 9 }", (8, 9)),
    ("The table contains four rows and five columns.", (4, 5)),
    ("Rows: 6\nColumns: 7", (6, 7)),
    ("(10,9)", (10, 9)),
    ("It is a 6 x 7 grid.", (6, 7)),
    ("Number of rows: 3; number of columns: 4", (3, 4)),
    ("There are 8 rows and 8 columns in the table.", (8, 8)),
    ("rows={5}, columns={6}", (5, 6)),
    ("Answer: rows={4} columns={5}", (4, 5)),
    ("(5, 6)\n\nThe table has five rows and six columns.", (5, 6)),
    ("The table is 7 rows by 6 columns.", (7, 6)),
    ("3 rows, 5 columns", (3, 5)),
    ("Rows=9 Columns=9", (9, 9)),
    ("After counting the lines: (4, 6)", (4, 6)),
]
PAIRS_UNPARSED = ["The table has many cells.", "I see a grid.", "There are 5 rows."]


@pytest.mark.parametrize(("reply", "expected"), PAIRS)
def test_pairs(reply, expected):
    parsed = parse(reply, AnswerKind.PAIR)
    assert parsed.status is Status.ANSWERED, reply
    assert tuple(parsed.value) == expected


@pytest.mark.parametrize("reply", PAIRS_UNPARSED)
def test_pairs_unparsed(reply):
    assert parse(reply, AnswerKind.PAIR).status is Status.UNPARSED


WORDS = [
    ("光沢感、なめらか、冷たい", ["光沢感", "なめらか", "冷たい"]),
    ("ふわふわ、柔らかい、温かい。", ["ふわふわ", "柔らかい", "温かい"]),
    ("glossy, smooth, cold", ["glossy", "smooth", "cold"]),
    ("1. glossy\n2. smooth\n3. cold", ["glossy", "smooth", "cold"]),
    ("- rough\n- dry\n- warm", ["rough", "dry", "warm"]),
    ("透明感，つるつる，硬い", ["透明感", "つるつる", "硬い"]),
    ("Answer: shiny, hard, heavy", ["shiny", "hard", "heavy"]),
    ("「ざらざら」、「乾燥」、「古い」", ["ざらざら", "乾燥", "古い"]),
    ("smooth", ["smooth"]),
    ("wet, slippery", ["wet", "slippery"]),
    ("soft; fluffy; warm", ["soft", "fluffy", "warm"]),
    ("金属的、冷たい、重い", ["金属的", "冷たい", "重い"]),
    ("Glossy, Metallic, Cold.", ["Glossy", "Metallic", "Cold"]),
    ("つやつや、なめらか、美しい", ["つやつや", "なめらか", "美しい"]),
    ("1) rough 2) dry", ["rough 2) dry"]),
    ("べたべた、湿った、汚い", ["べたべた", "湿った", "汚い"]),
    ("crisp, fresh, bright", ["crisp", "fresh", "bright"]),
    ("* smooth\n* glossy\n* hard", ["smooth", "glossy", "hard"]),
    ("ふんわり、軽い、やわらかい", ["ふんわり", "軽い", "やわらかい"]),
    ("硬い、冷たい、滑らか", ["硬い", "冷たい", "滑らか"]),
    ("velvety, soft, warm", ["velvety", "soft", "warm"]),
    ("きらきら、透明、涼しげ", ["きらきら", "透明", "涼しげ"]),
    ("rusty, rough, old", ["rusty", "rough", "old"]),
    ("ぬるぬる、光沢、湿潤", ["ぬるぬる", "光沢", "湿潤"]),
    ("fuzzy,warm,cozy", ["fuzzy", "warm", "cozy"]),
    ('"matte", "dry", "dusty"', ["matte", "dry", "dusty"]),
    ("カリカリ、香ばしい、温かい", ["カリカリ", "香ばしい", "温かい"]),
    ("transparent, fragile, cool", ["transparent", "fragile", "cool"]),
    ("もちもち、柔らかい、白い", ["もちもち", "柔らかい", "白い"]),
    ("polished, reflective, smooth", ["polished", "reflective", "smooth"]),
]


@pytest.mark.parametrize(("reply", "expected"), WORDS)
def test_word_lists(reply, expected):
    parsed = parse(reply, AnswerKind.WORDS)
    assert parsed.status is Status.ANSWERED, reply
    assert parsed.value == expected


def test_word_list_empty_is_unparsed():
    assert parse("、、", AnswerKind.WORDS).status is Status.UNPARSED


TEXTS = [
    ("cat", "cat"),
    ("Cat.", "Cat"),
    ("Answer: a red apple", "a red apple"),
    ('"Tokyo"', "Tokyo"),
    ("Paris\nIt is the capital of France.", "Paris"),
]


@pytest.mark.parametrize(("reply", "expected"), TEXTS)
def test_short_text(reply, expected):
    parsed = parse(reply, AnswerKind.TEXT)
    assert parsed.status is Status.ANSWERED
    assert parsed.value == expected


def test_the_question_lets_a_reply_answer_in_its_own_words():
    touching = "Are the two circles touching each other? Answer with Yes/No."
    overlapping = "Are the two circles overlapping? Answer with Yes/No."
    reply = "They touch but do not overlap."
    assert parse(reply, AnswerKind.YES_NO, question=touching).value == "yes"
    assert parse(reply, AnswerKind.YES_NO, question=overlapping).value == "no"
    # Without the question, a description answers nothing.
    assert parse(reply, AnswerKind.YES_NO).status is Status.UNPARSED


def test_a_reply_full_of_markers_is_read():
    reply = "Answer: " * 25_000 + "Answer: 7"
    assert parse(reply, AnswerKind.NUMBER).value == 7
    assert parse("Answer: " * 25_000, AnswerKind.NUMBER).status is Status.UNPARSED


# Long replies that are no answer, built to hit every reader's patterns at once: each must come
# back unparsed, and a parser that is quadratic in the reply's length would not come back at all
# (at 50 KB, quadratic work is billions of steps). "either" and digits go to 200 KB.
PATHOLOGICAL = {
    "either": "either ",
    "digits": "9",
    "number words": "one two ",
    "sums": "1 + ",
    "markers": "Answer: ",
    "braces": "{",
    "alternatives": "{1} or {2} or ",
    "parentheses": "(",
    "corrections": "wait, ",
    "yes or no": "yes or no ",
    "quoted letters": "'a' or 'b' ",
    "hyphens": "a-",
    "rows": "rows={",
    "japanese": "答えは",
    "japanese alternatives": "0か1か",
    "parts": "4 in the top row and ",
    "option texts": "The left object or the right object ",
    "corrections and options": "The left object, no wait, ",
    "equations": "so 2 1 + 1 = 3 ",
    "named letters": "the letter a or the letter b ",
    "descriptions": "they might touch, ",
}
PATHOLOGICAL_SIZE = {"either": 200_000, "digits": 200_000}


@pytest.mark.parametrize("name", list(PATHOLOGICAL))
@pytest.mark.parametrize(
    ("kind", "question"),
    [
        (AnswerKind.YES_NO, "Are the two circles touching each other? Answer with Yes/No."),
        (AnswerKind.NUMBER, "How many circles are in the image? Answer with only the number in numerical format."),
        (AnswerKind.PAIR, "How many rows and columns are in the table? Answer with only the numbers in a pair (row, column), e.g., (5,6)"),
        (AnswerKind.LETTER, "Which letter is being circled?"),
        (AnswerKind.CHOICE, "Which object is geometrically impossible?"),
    ],
)  # fmt: skip
def test_pathological_replies_come_back_unparsed(name, kind, question):
    unit = PATHOLOGICAL[name]
    reply = unit * (PATHOLOGICAL_SIZE.get(name, 50_000) // len(unit))
    parsed = parse(reply, kind, options=OPTIONS, labels=LABELS, question=question)
    assert parsed.status is Status.UNPARSED, (name, kind, parsed)
