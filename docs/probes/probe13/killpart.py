"""Run the citegraph CLI with SIMILAR_TO in small pieces, and die at a chosen point.

    python docs/probes/probe13/killpart.py WHERE N ACTION citegraph-args...

WHERE: ``part`` (after the Nth part of the write in parts is applied: between pieces),
``piece`` (while the Nth SIMILAR_TO piece's edges are being made), ``commit`` (at the
write's commit, every part written). ACTION: kill9, term, int, raise, stop.
Env P13_PIECE: graph.build.SIMILAR_PIECE_EDGES (unset: the default).
"""
from __future__ import annotations

import os
import pathlib
import signal
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def act(action: str) -> None:
    sys.stderr.write(f"probe13: {action} now\n")
    sys.stderr.flush()
    if action == "kill9":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "term":
        os.kill(os.getpid(), signal.SIGTERM)
    elif action == "int":
        os.kill(os.getpid(), signal.SIGINT)
    elif action == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
    elif action == "raise":
        from graph.errors import CitegraphError
        raise CitegraphError("probe13: cut off")
    elif action == "oserror":
        raise OSError(28, "No space left on device (probe13)")
    elif action == "memory":
        raise MemoryError("probe13")
    else:
        raise SystemExit(f"unknown action {action}")


def main() -> None:
    where, n, action = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    import graph.build as gb
    from graph.store.embedded import _SqlParts

    if os.environ.get("P13_PIECE"):
        gb.SIMILAR_PIECE_EDGES = int(os.environ["P13_PIECE"])
    calls = []
    if where == "none":
        pass
    elif where == "part":
        apply = _SqlParts.apply

        def counted(self, change):  # type: ignore[no-untyped-def]
            apply(self, change)
            calls.append(1)
            sys.stderr.write(f"probe13: part {len(calls)} applied\n")
            if len(calls) == n:
                act(action)

        _SqlParts.apply = counted
    elif where == "piece":
        made = gb._SimilarLists.edges

        def edges(self, lo, hi, k, floor):  # type: ignore[no-untyped-def]
            calls.append(lo)
            if len(calls) == n:
                act(action)
            return made(self, lo, hi, k, floor)

        gb._SimilarLists.edges = edges
    elif where == "commit":
        commit = _SqlParts.commit

        def at_commit(self):  # type: ignore[no-untyped-def]
            act(action)
            return commit(self)

        _SqlParts.commit = at_commit
    elif where == "aftercommit":
        from graph.store.embedded import EmbeddedStore
        after = EmbeddedStore._after_commit

        def at_after(self):  # type: ignore[no-untyped-def]
            act(action)
            return after(self)

        EmbeddedStore._after_commit = at_after
    elif where == "finish":
        from graph.store.embedded import EmbeddedStore
        fin = EmbeddedStore._finish

        def at_finish(self, *a):  # type: ignore[no-untyped-def]
            out = fin(self, *a)
            act(action)
            return out

        EmbeddedStore._finish = at_finish
    from citegraph.cli import main as cli

    cli(sys.argv[4:])


if __name__ == "__main__":
    main()
