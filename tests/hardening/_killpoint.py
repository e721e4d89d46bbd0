"""Run the citegraph CLI and SIGKILL it at a chosen point of the save path.

    python tests/hardening/_killpoint.py POINT citegraph-args...

POINT is one of ``apply`` (before the store applies the diff), ``zip`` (half-way
through writing the temporary graph file), ``fsync`` (temp file written, not yet
fsynced), ``rename`` (fsynced, not yet renamed over the graph) and ``renamed`` (just
after the rename, before the folder is fsynced), or ``none``. The process kills
itself with SIGKILL, as the OOM killer or ``kill -9`` would: no handler, no cleanup.
"""

from __future__ import annotations

import os
import pathlib
import signal
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

POINTS = ("apply", "zip", "fsync", "rename", "renamed", "none")


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def install(point: str) -> None:
    """Patch the one call at which this process should die."""
    if point == "apply":
        from graph.store.memory import NetworkxStore

        NetworkxStore.apply = lambda self, change: _die()  # type: ignore[method-assign]
    elif point == "zip":
        original_writestr = zipfile.ZipFile.writestr

        def writestr(
            self: zipfile.ZipFile, name: object, data: object, *a: object, **kw: object
        ) -> None:
            if name == "edges.jsonl":  # nodes written, edges not: a torn archive
                self.fp.flush()  # type: ignore[union-attr]
                _die()
            original_writestr(self, name, data, *a, **kw)  # type: ignore[arg-type]

        zipfile.ZipFile.writestr = writestr  # type: ignore[assignment,method-assign]
    elif point == "fsync":
        os.fsync = lambda fd: _die()
    elif point in ("rename", "renamed"):
        original_replace = pathlib.Path.replace

        def replace(self: pathlib.Path, target: str | os.PathLike[str]) -> pathlib.Path:
            if not self.name.startswith(".graph.citegraph."):
                return original_replace(self, target)
            if point == "rename":
                _die()
            out = original_replace(self, target)
            _die()
            return out

        pathlib.Path.replace = replace  # type: ignore[method-assign]
    elif point != "none":
        raise SystemExit(f"unknown kill point {point!r}; choose from {', '.join(POINTS)}")


if __name__ == "__main__":
    install(sys.argv[1])
    from citegraph.cli import main

    main(sys.argv[2:])
