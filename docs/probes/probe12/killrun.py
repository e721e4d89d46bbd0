"""Run the citegraph CLI with a fault injected inside a one-shot write in parts.

python probe/killrun.py MODE citegraph-args...

MODE:
  count                 print how many parts / progress-handler ticks the write had
  part:N:SIG            after the N-th part is written (1-based), send SIG to self
                        (KILL, INT, TERM, or EXC = raise RuntimeError, SQLERR = StoreWriteError-like sqlite3.OperationalError)
  before:N:SIG          the same, before the N-th part is applied (piece made, not written)
  tick:K:SIG            at the K-th SQLite progress-handler tick (every 500 VM steps) inside
                        the write's transaction: SIG as above, or ABORT (handler returns 1:
                        SQLite interrupts the statement)
  commit:SIG            in _finish, between the commits row and COMMIT
  aftercommit:SIG       just after COMMIT (before the store's in-memory bookkeeping)
"""
import os, signal, sqlite3, sys, pathlib
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from graph.store import embedded as E

mode = sys.argv[1]
args = sys.argv[2:]
stats = {"parts": 0, "ticks": 0}


def fire(sig):
    if sig == "EXC":
        raise RuntimeError("probe: injected failure")
    if sig == "SQLERR":
        raise sqlite3.OperationalError("probe: injected disk I/O error")
    os.kill(os.getpid(), getattr(signal, "SIG" + sig))


kind, *rest = mode.split(":")
orig_apply = E._SqlParts.apply


def apply(self, change):
    stats["parts"] += 1
    n = stats["parts"]
    if kind == "before" and n == int(rest[0]):
        fire(rest[1])
    orig_apply(self, change)
    if kind == "part" and n == int(rest[0]):
        fire(rest[1])


E._SqlParts.apply = apply

orig_wip = E.EmbeddedStore.write_in_parts


def wip(self):
    cm = orig_wip.__wrapped__(self) if hasattr(orig_wip, "__wrapped__") else None
    return _wip(self)


import contextlib


@contextlib.contextmanager
def _wip(self):
    with orig_wip(self) as w:
        if kind in ("tick", "count"):
            target = int(rest[0]) if kind == "tick" else -1
            sig = rest[1] if kind == "tick" else None

            def handler():
                stats["ticks"] += 1
                if stats["ticks"] == target:
                    if sig == "ABORT":
                        return 1
                    if sig in ("EXC", "SQLERR"):
                        return 1
                    os.kill(os.getpid(), getattr(signal, "SIG" + sig))
                return 0
            self._db.set_progress_handler(handler, 500)
        try:
            yield w
        finally:
            with contextlib.suppress(Exception):
                self._db.set_progress_handler(None, 0)


E.EmbeddedStore.write_in_parts = _wip

if kind in ("commit", "aftercommit"):
    hook = "_before_commit" if kind == "commit" else "_after_commit"
    setattr(E.EmbeddedStore, hook, lambda self: fire(rest[0]))

from citegraph.cli import main
try:
    main(args)
finally:
    print(f"PROBE parts={stats['parts']} ticks={stats['ticks']}", file=sys.stderr)
