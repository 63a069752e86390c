"""The Gradio playground: a folder per tab (probe, scoreboard, human, evaluate, stimuli, mining,
classroom, about), each folder's __init__ with the tab's build_<tab>() and the modules only that
tab uses beside it. What several tabs share sits here at the top: sessions and their stores, the
public gate's helpers (common), items and examples, choices, page words, identities, cleanup."""
