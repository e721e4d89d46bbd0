"""Count how often the lexical part (extraction resolve) runs in one CLI build/add.
usage: python probe/count_lexical.py citegraph-args..."""
import sys, pathlib
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import graph.build as b
calls = []
orig = b.Pipeline._lexical_pieces
def counted(self, *a, **k):
    calls.append(1)
    return (yield from orig(self, *a, **k))
b.Pipeline._lexical_pieces = counted
from citegraph.cli import main
try:
    main(sys.argv[1:])
finally:
    print("LEXICAL_CALLS", len(calls), file=sys.stderr)
