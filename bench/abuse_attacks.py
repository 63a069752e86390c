"""The attacks bench/abuse.py measures, each a visitor's calls to the public app's API, bounded in
count and time, traffic to 127.0.0.1 only. `ATTACKS` lists them in the order they run; each
family's calls are in a module of its own beside this one:

- bench/abuse_attacks_common.py: what they share (`Attack`, `Context`, `Outcome`, the keys,
  budgets and goals, Ask and evaluate);
- bench/abuse_attacks_forms.py: values past every bound (counts, sweeps, texts, lists, folders);
- bench/abuse_attacks_work.py: the largest work the app allows (uploads, previews, exports ...);
- bench/abuse_attacks_sessions.py: budgets and many visitors at once;
- bench/abuse_attacks_links.py: share links, people's tags, sessions during an evaluation;
- bench/abuse_attacks_replies.py: model servers that lie;
- bench/abuse_attacks_decode.py: uploads whose structure costs a decoder minutes;
- bench/abuse_attacks_class.py: a class's endpoints, forged tokens and a polling flood;
- bench/abuse_attacks_round3.py: classes hoarded and published, links flushed, exports into traps.
"""

from __future__ import annotations

from bench.abuse_attacks_class import FRESH_SESSIONS_ENV, forged_tokens, new_sessions, poll_flood
from bench.abuse_attacks_common import SERVER_KEY, VISITOR_KEY, Attack, Outcome
from bench.abuse_attacks_decode import decode_bomb
from bench.abuse_attacks_forms import (
    SWEEP_3X50,
    SWEEP_3X100,
    choice_echo,
    concurrency,
    counting,
    data_folders,
    hub_models,
    huge_lists,
    long_texts,
    numbers,
    sweep_819,
    sweep_1619,
)
from bench.abuse_attacks_links import identity_collision, links_server_folder, sessions_during_evaluation
from bench.abuse_attacks_replies import lying_servers
from bench.abuse_attacks_round3 import class_hoard, class_publish, export_traps, link_flush, student_routes
from bench.abuse_attacks_sessions import five_evaluations, fresh_sessions, spoofed_addresses, thousand_clicks
from bench.abuse_attacks_work import (
    exports,
    illusion_designs,
    largest,
    previews,
    session_stores,
    twenty_uploads,
    unbounded_illusion,
)

# The keys the bench plants, for tests/ui/test_secrets.py (the rest: bench/abuse_attacks_common.py).
__all__ = ["ATTACKS", "SERVER_KEY", "VISITOR_KEY"]


ATTACKS = [
    Attack("idle", lambda ctx: Outcome("")),
    Attack("concurrency", concurrency, shown="Evaluate, concurrency 10^9"),
    Attack("sweep-819", sweep_819, shown=f"Evaluate, sweep of {len(SWEEP_3X50):,} chars (3 params x 50 values)"),
    Attack("sweep-1619", sweep_1619, shown=f"Evaluate, sweep of {len(SWEEP_3X100):,} chars (3 params x 100 values)"),
    Attack("images", counting("blind/line-intersections", "images=100000000"), shown="line-intersections images=10^8"),
    Attack("maps", counting("blind/subway-paths", "maps=100000000"), shown="subway-paths maps=10^8"),
    Attack("repeats", counting("blind/nested-squares", "repeats=100000000"), shown="nested-squares repeats=10^8"),
    Attack("data", data_folders, shown="data folder / Hub dataset (Probe, Evaluate, Human)"),
    Attack("uploads", twenty_uploads, shown="20 uploads of 6300 x 6300 PNG, then Ask"),
    Attack("largest-uploads", largest("one"), shown="4 uploads of 4000 x 4000 (allowed), Ask 4 models (own keys)"),
    Attack("largest-all", largest("all"), repeat=False, shown="the same, Ask 4 models x every condition"),
    Attack("hf", hub_models, shown="hf/<any hub id>, hf//path, hf/<home> as models"),
    Attack("texts", long_texts, shown="20 MB text fields (3 endpoints)"),
    Attack("choice-echo", choice_echo, shown="20 MB as a list field's value (Gradio's choice check)"),
    Attack("previews-4096", previews(4096), shown="80 previews at 4096 px"),
    Attack("previews-2048", previews(2048), repeat=False, shown="80 previews at 2048 px (largest allowed)"),
    Attack("numbers", numbers, shown="counts 10^9, item index 10^18"),
    Attack("lists", huge_lists, shown="10,000-param spec, 100,000 fixed names, 100,000 scoreboard models"),
    Attack("exports", exports, repeat=False, shown="2 exports at once, 1000 items at 2048 px"),
    Attack("stores", session_stores, repeat=False, shown="4 sessions at once, 5,000 baseline results each"),
    Attack(
        "designs",
        illusion_designs,
        repeat=False,
        shown="4 sessions at once, 1 item of a new 9,800-item illusion design",
    ),
    Attack("illusion", unbounded_illusion, repeat=False, shown="4 x illusion/delboeuf size_min=1e4 (no bound)"),
    Attack("budget", fresh_sessions, repeat=False, shown="budgets: 5 fresh sessions x 4 paid models x 2"),
    Attack("clicks", thousand_clicks, repeat=False, shown="4 paid models x 1000 clicks", timeout=600),
    Attack("five-evaluations", five_evaluations, repeat=False, timeout=600,
           shown="5 visitors start a 300-item evaluation at once"),  # fmt: skip
    Attack("spoofed", spoofed_addresses, repeat=False, shown="10 sessions, spoofed X-Forwarded-For"),
    # --- issue 22, links and identities ---
    Attack(
        "links-server-folder",
        links_server_folder,
        repeat=False,
        shown="?probe= link naming custom:<server folder> (and a missing one), then Ask",
    ),
    Attack(
        "links-tag-collision",
        identity_collision,
        repeat=False,
        shown="Human tab: a session colliding with the old 4-digit tag answers as Alice",
    ),
    Attack(
        "links-300-sessions",
        sessions_during_evaluation,
        repeat=False,
        timeout=900,
        shown="300 sessions Ask during another visitor's 1,344-result evaluation",
    ),
    # --- replies: model servers that lie (issue 22) ---
    Attack("reply-shapes", lying_servers(["openai/number", "anthropic/parts", "openai/object"]),
           shown="replies: content a number / a list of parts / an object, + 1 honest model"),
    Attack("reply-bombs", lying_servers(["openai/bomb", "anthropic/bomb", "openai/bomb-nested"]),
           shown="replies: 3 gzip bombs (1 MB -> 1 GB), + 1 honest model"),
    Attack("reply-huge", lying_servers(["openai/huge-chunked", "anthropic/huge", "openai/huge-error"]),
           shown="replies: 50 MB chunked / announced / as a 500 page, + 1 honest model"),
    Attack("reply-long", lying_servers(["openai/long", "anthropic/long", "openai/values"]),
           shown="replies: 1 MB of text x 2, 1M JSON values, + 1 honest model"),
    Attack("reply-keys", lying_servers(["openai/echo", "anthropic/echo-error", "openai/echo-id"]),
           shown="replies: the key echoed in 15 forms (text, error, ids), + 1 honest model"),
    Attack("reply-drip", lying_servers(["openai/drip"]), repeat=False, timeout=400,
           shown="reply: a byte every 0.5 s (a 200 s reply), + 1 honest model"),
]  # fmt: skip


# --- issue 22, every decode bounded (part "decode"): uploads whose structure costs a decoder
# minutes, each made once in the bench's folder (tests/support/decode_bombs.py) ------------------


ATTACKS += [
    Attack("decode-tiff", decode_bomb("pages.tiff"), shown="TIFF of 20,000 chained directories that loop (1.9 MB)"),
    Attack("decode-png", decode_bomb("chunks.png"), shown="PNG of 1,000,000 empty chunks (11 MB)"),
    Attack("decode-gif", decode_bomb("frames.gif"), shown="GIF of 300,000 frames (6.6 MB)"),
    Attack("decode-jpeg", decode_bomb("scans.jpg"), shown="progressive JPEG, 4000 x 4000, 2,000 extra scans (0.1 MB)"),
]


# --- issue 24, the class's endpoints (part "class"): forged tokens and a polling flood, posted
# straight to /gradio_api/run/<name> as the phones' pages call them ------------------------------


ATTACKS += [
    Attack("class-forged-tokens", forged_tokens, repeat=False,
           shown="class: forged tokens (9 kinds, any JSON type) x 6 endpoints, with and without a class"),
    Attack("class-poll-flood", poll_flood, repeat=False,
           shown="class: 20 students x 100 polls of class_item as fast as they can (picture each time)"),
    Attack("class-fresh-sessions", new_sessions, repeat=False, timeout=300, env=FRESH_SESSIONS_ENV,
           shown="1,000 calls (a class's forged token) from one address, each under a session never seen"),
]  # fmt: skip


# --- issue 33, the third round: classes one visitor could hoard or publish, links flushed for
# free, exports that deleted what they did not write ----------------------------------------------


ATTACKS += [
    Attack("class-hoard", class_hoard, repeat=False, shown="class: one session opens 45 classes"),
    Attack("class-publish", class_publish, repeat=False, timeout=600,
           shown="class: 120 made-up students (one address) x 3 items, then Publish (a Space's default)"),
    Attack("class-publish-allowed", class_publish, repeat=False, timeout=600, env={"PROBE_CLASS_PUBLISH": "1"},
           shown="the same where the operator lets classes publish"),
    Attack("link-flush", link_flush, repeat=False, timeout=900,
           shown="links: 200 free presses + 20 own-key probes beside another visitor's link"),
    Attack("export-traps", export_traps, repeat=False, timeout=900,
           shown="generate hf / lmms-eval / png into a dataset folder and 3 planted links (12 runs)"),
    Attack("student-routes", student_routes, repeat=False, timeout=300,
           shown="the class's own page's routes: 150 made-up codes, a 100 KB body, a picture ahead, 8 streams a seat"),
]  # fmt: skip
