"""BlindTest, from "Vision language models are blind" (Rahmanzadehgervi et al., 2024; seed 002):
generated geometry tasks that are trivial for people. One module per task; every stimulus is
drawn here from its parameters, so ground truth is exact and nothing needs downloading."""

SOURCE = "Rahmanzadehgervi et al., Vision language models are blind (2024)"
