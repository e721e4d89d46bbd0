"""Probe 14, A: a writer process. argv: db path, prefix, batches, batch size, keep bytes.
Each commit upserts one batch of papers (~4 KB abstracts); WAL_KEEP_BYTES shrunk so each
commit is 'big' and runs the TRUNCATE checkpoint. Prints 'ckpt <i>' as the checkpoint
starts and 'done <i> <seconds>' once apply() returned."""
import sys, time
import graph.store.embedded as embedded
from graph.model import GraphChange, Paper
from graph.store.embedded import EmbeddedStore

path_s, prefix, batches, size, keep = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
from pathlib import Path
path = Path(path_s)
embedded.WAL_KEEP_BYTES = keep
real = embedded._shrink_wal
state = {"i": -1}
def spy(db, p):
    print(f"ckpt {state['i']}", flush=True)
    t = time.monotonic(); real(db, p)
    print(f"ckptdone {state['i']} {time.monotonic() - t:.3f}", flush=True)
embedded._shrink_wal = spy
words = " ".join(f"word{i}" for i in range(600))
store = EmbeddedStore(path, reads="sql")
print("open", flush=True)
for b in range(batches):
    state["i"] = b
    ch = GraphChange(upsert_nodes=tuple(
        Paper(id=f"{prefix}{b:04d}_{j:04d}", label=f"P {b} {j}", abstract=f"{words} {b} {j}", text_hash=f"h{b}_{j}")
        for j in range(size)))
    t = time.monotonic()
    store.apply(ch)
    print(f"done {b} {time.monotonic() - t:.3f}", flush=True)
store.close()
print("closed", flush=True)
