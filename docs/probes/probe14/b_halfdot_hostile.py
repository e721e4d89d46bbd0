"""Probe 14, guarantee B: full_similar with the bfloat16 prefilter forced (MIN_CELLS=0)
vs float32 forced (MIN_CELLS huge), on hostile vectors. Bounded: fixed case list, 600 s cap."""
import pickle, sys, time
import numpy as np
import torch  # noqa: F401  (loaded first, as in a server)
from graph import halfdot
from graph.lexical import word_vectors
from graph.link import PaperVectors, SimilarPools, full_similar

T0 = time.time(); LIMIT = float(sys.argv[1]) if len(sys.argv) > 1 else 600
print("usable", halfdot.usable(), flush=True)

def build(vec, k, ms):
    keep = []
    lists, hubs = full_similar(vec, k, ms, keep=keep)
    pools = keep[0] if keep else None
    kept = [] if pools is None else [(pools.ids[i], *(a.tolist() for a in pools.row(i))) for i in range(len(pools.ids))]
    return (sorted(lists.items()), sorted(hubs.items()), kept)

def used_half(vec, k, ms):
    made = []
    real = halfdot.HalfMatrix
    def spy(m):
        made.append(1); return real(m)
    halfdot.HalfMatrix = spy
    try:
        halfdot.MIN_CELLS = 0
        a = build(vec, k, ms)
    finally:
        halfdot.HalfMatrix = real
    halfdot.MIN_CELLS = 1 << 62
    b = build(vec, k, ms)
    return bool(made), a, b

rng = np.random.default_rng(14)
vocab = [f"w{i:02d}" for i in range(25)]
def unit(m):
    n = np.linalg.norm(m, axis=1, keepdims=True); n[n == 0] = 1; return m / n

cases = []
def add(name, m, pool, k, ms, words=False):
    cases.append((name, np.asarray(m, dtype=np.float32), pool, k, ms, words))

for d in (1, 2, 3):
    add(f"dim{d} unit", unit(rng.normal(size=(200, d))), 5, 3, 0.3)
    add(f"dim{d} unnormalised [0.5,1.5]", rng.uniform(0.5, 1.5, size=(200, d)) / np.sqrt(d), 5, 3, 0.3)
    add(f"dim{d} coarse grid", unit(np.round(rng.normal(size=(150, d)) * 2) / 2 + 1e-9), 7, 4, 0.2)
base = unit(rng.normal(size=(10, 64)))
add("many exact duplicates", base[rng.integers(0, 10, size=300)], 5, 3, 0.1)
add("all rows identical", np.repeat(base[:1], 120, axis=0), 5, 3, 0.5)
add("all rows identical pool1", np.repeat(base[:1], 120, axis=0), 1, 1, 0.5)
dr = rng.normal(size=(250, 48)) * (10.0 ** rng.integers(-30, 1, size=(250, 48)))
add("huge dynamic range entries", unit(dr), 5, 3, 0.2)
nz = unit(rng.normal(size=(200, 32))) * 1e-20
nz[:100] = unit(rng.normal(size=(100, 32)))
add("half near-zero vectors (1e-20)", nz, 5, 3, 0.05)
add("near-zero norm 0.01", unit(rng.normal(size=(200, 16))) * 0.01, 5, 3, 0.03)
add("norm 100", unit(rng.normal(size=(200, 16))) * 100, 5, 3, 0.3)
add("norm 2", unit(rng.normal(size=(200, 16))) * 2, 5, 3, 0.5)
zero = unit(rng.normal(size=(200, 16))); zero[::7] = 0
add("some zero vectors", zero, 5, 3, 0.2)
for d in (1025, 2048, 4096, 4097):
    cen = rng.normal(size=(4, d))
    add(f"dim{d} clusters", unit(cen[rng.integers(0, 4, size=120)] + 0.5 * rng.normal(size=(120, d))), 5, 3, 0.3)
# entries that all round the same way in bfloat16 (mantissa 1 + 0.499*2^-7: rounds down)
for d in (384, 4096):
    e = np.full((60, d), (1 + 0.499 * 2.0**-7) / np.sqrt(d))
    e *= rng.choice([1.0, 1.0 + 2.0**-7], size=(60, d))
    add(f"dim{d} rounding-biased near-duplicates", e, 5, 3, 0.5)
# min_score near the cut: min_score = 2*bound + tiny
for d in (16, 384):
    eb = halfdot.error_bound(d, 1.0)
    for ms in (2 * eb + 1e-6 + 1e-9, 2 * eb + 2e-6, 2 * eb + 1e-3):
        add(f"dim{d} min_score {ms:.7f} (just above 2*bound)", unit(rng.normal(size=(300, d))), 10, 5, ms)
        add(f"dim{d} min_score {ms:.7f} clusters", unit(np.repeat(rng.normal(size=(20, d)), 15, axis=0) + 0.3 * rng.normal(size=(300, d))), 10, 5, ms, True)
# pool sizes 1 and > N, word vectors on/off
cl = unit(np.repeat(rng.normal(size=(10, 32)), 20, axis=0) + 0.4 * rng.normal(size=(200, 32)))
for pool in (1, 2, 199, 200, 500):
    for w in (False, True):
        add(f"pool {pool} words {w}", cl, pool, min(pool, 10), 0.2, w)
# block tails of 1 row (n = 385: the last block is one row -> a gemv)
add("n=385 one-row last block", unit(rng.normal(size=(385, 24)) + 0.5), 5, 3, 0.3)
add("n=33", unit(rng.normal(size=(33, 8)) + 0.3), 3, 2, 0.3)
add("n=2", unit(rng.normal(size=(2, 8))), 1, 1, 0.05)
# scores that tie after rounding to 6 decimals at a pool's edge
g = unit(np.round(rng.normal(size=(200, 4)) * 3) / 3)
add("rounded-tie grid dim4 pool3", g, 3, 2, 0.1, True)
# non-finite rows (hostile): a NaN row among many
nan = unit(rng.normal(size=(120, 16)) + 0.5); nan[:5] = np.nan
add("5 NaN rows pool 1", nan, 1, 1, 0.3)
add("5 NaN rows pool 3", nan, 3, 2, 0.3)
inf = unit(rng.normal(size=(120, 16)) + 0.5); inf[3, 2] = np.inf
add("one inf entry", inf, 3, 2, 0.3)

bad = 0
for name, m, pool, k, ms, words in cases:
    if time.time() - T0 > LIMIT:
        print("TIME LIMIT, stopped before", name); break
    ids = [f"p{i:04d}" for i in range(len(m))]
    wv = word_vectors([" ".join(rng.choice(vocab, size=int(rng.integers(2, 7)))) for _ in ids]) if words else None
    vec = PaperVectors(ids, m, wv, pool=pool)
    try:
        half, a, b = used_half(vec, k, ms)
    except Exception as ex:  # noqa: BLE001
        print(f"ERROR {name}: {type(ex).__name__}: {ex}", flush=True); bad += 1; continue
    same = pickle.dumps(a) == pickle.dumps(b)
    nlist = sum(len(v) for _, v in a[0])
    nlistb = sum(len(v) for _, v in b[0])
    print(f"{'SAME' if same else 'DIFF'} bf16_used={half} entries={nlist}/{nlistb} {name} (n={len(m)} d={m.shape[1]} pool={pool} k={k} ms={ms:.7g} words={words})", flush=True)
    if not same:
        bad += 1
        for (pa, la), (pb, lb) in zip(a[0], b[0]):
            if la != lb:
                print("   first differing list", pa, "\n   bf16:", la[:5], "\n   f32: ", lb[:5]); break
print("differences:", bad, "elapsed", round(time.time() - T0, 1))
