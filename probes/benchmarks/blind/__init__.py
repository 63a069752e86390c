"""BlindTest, from "Vision language models are blind" (Rahmanzadehgervi et al., 2024; seed 002):
generated geometry tasks that are trivial for people. One module per task; every stimulus is
drawn here from its parameters, so ground truth is exact and nothing needs downloading."""

from probes.core import truth
from probes.core.types import AnswerKind, Item

SOURCE = "Rahmanzadehgervi et al., Vision language models are blind (2024)"


class BlindTruth:
    """How a BlindTest answer follows a transformed picture: counts (meetings, circles,
    squares, rows and columns, paths between lettered stations) and whether two circles touch
    are the same upside down, mirrored, grey or smaller; a circled letter stays itself unless
    its reflection reads as another letter (a mirrored 'b' is a 'd'), where the truth is unknown.
    In grayscale a question that names a colour keeps its truth only where the task declares
    how what it names is still told apart in grey (`told_apart_in_grey`, for the pictures we
    draw; the paper's release declares nothing, so such questions about its pictures are
    ungraded there)."""

    def truth_under(self, item: Item, transform: str) -> Item:
        if transform == "grayscale":
            return truth.in_grey(item, self.told_apart_in_grey)
        return truth.letter_under(item, transform) if item.kind is AnswerKind.LETTER else item
