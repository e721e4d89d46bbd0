"""Sensitivity check of the harness (not a finding): with the text holders' view never
applied (Overlay.apply a no-op for build.py's holder), scenario 1 must report failures."""
import graph.build as gb
from graph.overlay import Overlay


class NoApply(Overlay):
    def apply(self):
        pass


gb.Overlay = NoApply  # only build.py's holder view (region.py keeps the real one)
import s1_text_moves  # noqa: E402
from harness import main  # noqa: E402

main(s1_text_moves.run)
