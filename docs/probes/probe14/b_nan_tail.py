"""Probe 14, B: NaN rows (rejected by graph/store/rows.py:372 before a store write, so
only reachable by calling full_similar directly) with a short last block."""
import time
import numpy as np
import torch  # noqa: F401
from graph import halfdot
from graph.link import PaperVectors, full_similar
T0 = time.time()
for tail in (2, 3, 4, 8, 16):
    if time.time() - T0 > 120: break
    n = 384 + tail
    rng = np.random.default_rng(tail)
    m = (rng.normal(size=(n, 16)) + 0.5).astype(np.float32); m /= np.linalg.norm(m, axis=1, keepdims=True)
    m[:5] = np.nan
    ids = [f"p{i:04d}" for i in range(n)]
    vec = PaperVectors(ids, m, pool=1)
    res = []
    for mc in (0, 1 << 62):
        halfdot.MIN_CELLS = mc
        res.append(full_similar(vec, 1, 0.3, keep=[])[0])
    diff = [p for p in ids if res[0][p] != res[1][p]]
    print(f"tail={tail} rows differing: {len(diff)} e.g. {diff[:3]} bf16={res[0][diff[0]] if diff else ''} f32={res[1][diff[0]] if diff else ''}")
