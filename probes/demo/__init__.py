"""A demo a Space serves: the Probe tab's Examples and conditions, what one generated stimulus is,
and `prepare-demo`, which asks every Example under every condition into the store a Space will
serve, so that its visitors see the answers at once and for nothing.

No Gradio here: the Probe tab (ui/probe*.py) shows these Examples and conditions, and the command
line prepares them, from the same definitions, so the requests are the same and their answers
are found."""
