"""k paths and shortest paths with the store's kept adjacency lists against without them.

    python bench/paths_lists.py --data-dir DIR [--pairs 60] [--rounds 8]

One process, one store (opened as ``citegraph serve`` opens it): the same queries of
bench/load.py's shape (random paper pairs; k 3 within 3 hops, and the shortest path
within 4) through ``graph.query.traverse`` over the in-memory backend as it is, and over
a view of it without ``adjacent`` (so the adjacency lists are built per query, as
before the lists were kept). Checks the answers are equal, then prints the median CPU
ms a query over alternating rounds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


class WithoutKeptLists:
    """The backend less its kept adjacency lists: every other attribute is its own."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "adjacent":
            raise AttributeError(name)
        return getattr(self._inner, name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--pairs", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=8)
    args = ap.parse_args()
    if not 1 <= args.pairs <= 2000 or not 1 <= args.rounds <= 50:
        ap.error("bounded: 1-2000 pairs, 1-50 rounds")
    from api.services import Services
    from graph.model import NodeKind
    from graph.query import traverse
    from graph.settings import Settings

    services = Services(Settings(data_dir=args.data_dir))  # type: ignore[call-arg]
    services.open()
    store = services.store()
    kept = store.read_backend()  # type: ignore[attr-defined]
    sides = {"built per query": WithoutKeptLists(kept), "kept": kept}
    ids = [n.id for n in store.list_nodes(NodeKind.PAPER, limit=100_000)[0]]
    rng = random.Random(7)
    pairs = [tuple(rng.sample(ids, 2)) for _ in range(args.pairs)]
    queries = {
        "k paths (k 3, 3 hops)": lambda b: [traverse.k_paths(b, s, t, 3, None, 3)
                                            for s, t in pairs],
        "shortest path (4 hops)": lambda b: [traverse.shortest_path(b, s, t, None, 4)
                                             for s, t in pairs],
    }
    for name, run in queries.items():
        if run(sides["built per query"]) != run(sides["kept"]):
            print(f"{name}: the answers differ")
            return 1
    print(f"equal answers: {args.pairs} pairs, each query kind")
    cpu: dict[tuple[str, str], list[float]] = {(q, s): [] for q in queries for s in sides}
    for r in range(args.rounds):
        order = list(sides) if r % 2 == 0 else list(sides)[::-1]
        for qname, run in queries.items():
            for side in order:
                c0 = time.process_time()
                run(sides[side])
                cpu[(qname, side)].append(1000 * (time.process_time() - c0) / len(pairs))
    print(f"median CPU ms a query over {args.rounds} alternating rounds")
    for qname in queries:
        before, after = (statistics.median(cpu[(qname, s)]) for s in sides)
        print(f"{qname:24} built per query {before:6.2f}  kept {after:6.2f}  "
              f"{before / after:4.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
