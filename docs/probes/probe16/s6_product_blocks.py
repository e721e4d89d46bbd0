"""Scenario 6: update_csls_pools' shared product (8042f8a) where a write's rows fall in
several blocks: graph.link.BLOCK_CELLS made small (for both sides and the rebuild, the
results may not depend on it), so that a big add's rows are split into blocks of which
some hold only new rows (they take rows of ``fresh_product``, not from its start) and
some mix new rows with refilled old ones (their own product); and so small that no
shared product is made at all. Primed states (SIMILAR_TO pools kept), 40 papers then
adds of up to 40 at once (at most 80 papers).

Usage: s6_product_blocks.py CELLS   (e.g. 4000: shared product, 50-row blocks; 1000:
none, 32-row blocks)"""
import random
import sys

import graph.link as gl
from atoms import ATOMS
from harness16 import COUNT, EMBED_CACHE, P, Harness, main, papers_of

from graph.build import Pipeline


def run() -> int:
    cells = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    gl.BLOCK_CELLS = cells
    rng = random.Random(cells)
    combos = [(a, b) for a in range(len(ATOMS)) for b in range(a + 1, len(ATOMS))]
    rng.shuffle(combos)
    texts = [" ".join(ATOMS[a] for a in c) for c in combos]  # 91 distinct texts
    h = Harness(f"s6-{cells}")
    first = [P(f"p{i:02d}", texts[i]) for i in range(40)]
    for store in (h.a, h.b):
        one = Pipeline(h.settings, cache_dir=EMBED_CACHE, incremental=False)
        one.run(store, add_papers=first, replace=True)
        one.close()
    h.long.prime(h.a)
    h.step += 1
    h.compare("primed build")
    h.audit("primed build")
    nxt = 40

    def reprime():
        if h.long._state is None or h.long._state.state.pools is None:
            h.long.prime(h.a)

    # a big add alone (no refill: every block is new rows), then with updates (refill rows
    # first, new rows after: mixed blocks, then new-only ones)
    h.write("add 30", add=[P(f"p{i:02d}", texts[i]) for i in range(nxt, nxt + 30)])
    nxt += 30
    reprime()
    h.write("remove 30", remove=[f"p{i:02d}" for i in range(40, 70)])
    reprime()
    h.write("add 30 + update 3 old texts",
            add=[P(f"q{i:02d}", texts[40 + i]) for i in range(30)]
            + [P(f"p{i:02d}", texts[80 + i]) for i in range(3)])
    reprime()
    live = sorted(papers_of(h.a.snapshot()))
    h.write("remove 10 + add 10", remove=live[:10],
            add=[P(f"r{i:02d}", texts[70 + i]) for i in range(10)])
    reprime()
    for k in range(4):
        live = sorted(papers_of(h.a.snapshot()))
        rm = rng.sample(live, 8)
        free = [t for t in texts if t not in {p.abstract for p in papers_of(h.a.snapshot()).values()}]
        h.write(f"churn {k}: remove 8, add 8, update 2", remove=rm,
                add=[P(f"s{k}{i}", free[i]) for i in range(8)]
                + [P(p, free[8 + i]) for i, p in enumerate(rng.sample([x for x in live if x not in rm], 2))])
        reprime()
    print(f"   shared product blocks: {COUNT['find_pools.fresh_product']} of "
          f"{COUNT['find_pools.block']}", flush=True)
    return h.close()


if __name__ == "__main__":
    main(run)
