"""Probe 14, B: bounded random fuzz of full_similar bf16-forced vs float32-forced
(argv: seconds, seed). Hostile generators: duplicates, quantised grids, clusters, mixed
norms (0.01..3), biased-rounding entries, sparse one-hot-ish rows."""
import pickle, sys, time
import numpy as np
import torch  # noqa: F401
from graph import halfdot
from graph.lexical import word_vectors
from graph.link import PaperVectors, full_similar

LIMIT = float(sys.argv[1]); rng = np.random.default_rng(int(sys.argv[2]))
T0 = time.time(); vocab = [f"w{i:02d}" for i in range(30)]
def unit(m):
    n = np.linalg.norm(m, axis=1, keepdims=True); n[n == 0] = 1; return m / n
def gen(n, d):
    kind = rng.integers(0, 7)
    if kind == 0:
        return "dups", unit(rng.normal(size=(max(2, n // 10), d)))[rng.integers(0, max(2, n // 10), size=n)]
    if kind == 1:
        return "grid", unit(np.round(rng.normal(size=(n, d)) * rng.choice([1, 2, 3])) + 1e-3)
    if kind == 2:
        c = rng.normal(size=(max(2, n // 30), d))
        return "clusters", unit(c[rng.integers(0, len(c), size=n)] + rng.choice([0.05, 0.2, 0.5]) * rng.normal(size=(n, d)))
    if kind == 3:
        return "mixed norms", unit(rng.normal(size=(n, d)) + 0.7) * rng.choice([0.01, 0.5, 1.0, 1.5, 3.0], size=(n, 1))
    if kind == 4:
        e = (1 + rng.choice([0.499, 0.501, 0.999], size=(n, d)) * 2.0 ** -7) * 2.0 ** rng.integers(-6, 0, size=(n, d))
        e[:, 0] = 1.0
        return "biased rounding", e * rng.choice([1, -1], size=(n, d), p=[0.9, 0.1])
    if kind == 5:
        m = np.zeros((n, d)); m[np.arange(n), rng.integers(0, d, size=n)] = 1; m += 0.3 * (rng.random((n, d)) < 0.2)
        return "sparse", unit(m)
    return "dyn range", unit(rng.normal(size=(n, d)) * 10.0 ** rng.integers(-12, 1, size=(n, d)))
runs = diffs = 0
while time.time() - T0 < LIMIT and runs < 2000:
    n = int(rng.choice([2, 3, 5, 33, 100, 250, 400])); d = int(rng.choice([1, 2, 3, 5, 17, 64, 384, 1100]))
    name, m = gen(n, d); m = m.astype(np.float32)
    pool = int(rng.choice([1, 2, 5, 20, n - 1, n, n + 7])); pool = max(pool, 1)
    k = int(rng.integers(1, max(2, min(pool, 12)) + 1))
    eb = halfdot.error_bound(d, float(np.linalg.norm(m.astype(np.float64), axis=1).max()))
    ms = float(rng.choice([2 * eb + 1e-6 + rng.random() * 1e-5, 0.1, 0.3, 0.5, 0.8, 0.95, 2 * eb + rng.random() * 0.05]))
    words = bool(rng.integers(0, 2))
    ids = [f"p{i:04d}" for i in range(n)]
    wv = word_vectors([" ".join(rng.choice(vocab, size=int(rng.integers(1, 6)))) for _ in ids]) if words else None
    vec = PaperVectors(ids, m, wv, pool=pool)
    out = []
    for mc in (0, 1 << 62):
        halfdot.MIN_CELLS = mc; keep = []
        l, h = full_similar(vec, k, ms, keep=keep)
        kept = [(keep[0].ids[i], *(a.tolist() for a in keep[0].row(i))) for i in range(len(keep[0].ids))] if keep else []
        out.append(pickle.dumps((sorted(l.items()), sorted(h.items()), kept)))
    runs += 1
    if out[0] != out[1]:
        diffs += 1
        np.save(f"tmp/b_fuzz_diff_{sys.argv[2]}_{runs}.npy", m)
        print(f"DIFF run {runs}: {name} n={n} d={d} pool={pool} k={k} ms={ms!r} words={words}", flush=True)
print(f"runs={runs} diffs={diffs} elapsed={time.time() - T0:.0f}s", flush=True)
