"""The Gradio playground: one module per tab, each with a build_<tab>() function."""
