# ruff: noqa: E501 - table lines
"""Shortest paths and k paths at 3k / 30k / 100k synthetic papers, two traversal codes side by side.

    python bench/paths_scale.py [--sizes 3000,30000] [--before OLD/graph/query/traverse.py] [--rounds 3]

Builds bench/db_scale.py's synthetic graph (papers, Zipf concepts, MENTIONS, SIMILAR_TO
to 10 papers of the same topic) in an in-memory store (the server's mirror), then for 30
random paper pairs asks the shortest path (within 6 hops, the API's default) and k paths
(k 3 within 3 hops, as db_scale does) through ``graph.query.traverse`` and, with
``--before``, through an older copy of that one module loaded beside it (the rest of
``graph`` is shared, so give a file whose imports this checkout still has). Rounds
alternate the two; every answer of the two must be equal. Prints the median CPU ms a query
per size and code, and each size's figure over the first size's (issue 11's goal: within
3x of 3k).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def synthetic_store(n: int) -> Any:
    """db_scale.py's graph of ``n`` papers in a NetworkxStore (the server's mirror)."""
    from db_scale import synthetic_parts
    from scale import generate

    from graph.store.memory import NetworkxStore

    m, terms, topic = generate(n + 10)
    store = NetworkxStore()
    store.apply_trusted(synthetic_parts(m, terms, topic, n)(range(n)))
    return store


def load_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("traverse_before", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def answer(paths: Any) -> list[tuple[list[str], list[tuple[str, str, str, float]]]]:
    many = paths if isinstance(paths, list) else [paths]
    return [([x.id for x in p.nodes], [(e.source, e.target, e.type.value, e.weight) for e in p.edges])
            for p in many if p is not None]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="3000,30000")
    ap.add_argument("--before", type=Path, default=None, help="an older graph/query/traverse.py")
    ap.add_argument("--pairs", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    from graph.query import traverse

    threadpool_limits(1, user_api="blas")  # as a server runs
    codes: dict[str, ModuleType] = {"after": traverse}
    if args.before is not None:
        codes = {"before": load_module(args.before), "after": traverse}
    sizes = [int(s) for s in args.sizes.split(",")]
    kinds = {
        "shortest path": lambda t, s, a, b: t.shortest_path(s, a, b, None, 6),
        "k paths": lambda t, s, a, b: t.k_paths(s, a, b, 3, None, 3),
    }
    p50: dict[tuple[int, str, str], float] = {}
    for n in sizes:
        t0 = time.perf_counter()
        store = synthetic_store(n)
        backend = store.read_backend()
        print(f"{n} papers: built in {time.perf_counter() - t0:.0f} s", flush=True)
        qrng = random.Random(0)
        picks = [f"p{qrng.randrange(n):06d}" for _ in range(args.pairs)]
        pairs = list(zip(picks, picks[1:] + picks[:1], strict=True))
        times: dict[tuple[str, str], list[float]] = {}
        answers: dict[tuple[str, str], list[Any]] = {}
        for r in range(args.rounds):
            order = list(codes.items())[:: 1 if r % 2 == 0 else -1]
            for name, mod in order:
                for kind, fn in kinds.items():
                    got = []
                    for a, b in pairs:
                        c0 = time.process_time()
                        res = fn(mod, backend, a, b)
                        times.setdefault((name, kind), []).append(time.process_time() - c0)
                        got.append(answer(res))
                    answers.setdefault((name, kind), got)
        for kind in kinds:
            if "before" in codes:
                same = sum(x == y for x, y in zip(answers[("before", kind)], answers[("after", kind)], strict=True))
                print(f"  {kind}: {same} of {len(pairs)} answers equal", flush=True)
                assert same == len(pairs), f"{kind}: answers differ"
            for name in codes:
                p50[(n, name, kind)] = statistics.median(times[(name, kind)]) * 1000
        del store, backend
    print("\n| N | code | " + " | ".join(f"{k} CPU ms (p50)" for k in kinds) + " | "
          + " | ".join(f"{k} / {sizes[0]}" for k in kinds) + " |")
    print("|---" * (2 + 2 * len(kinds)) + "|")
    for n in sizes:
        for name in codes:
            vals = [p50[(n, name, k)] for k in kinds]
            ratios = [p50[(n, name, k)] / p50[(sizes[0], name, k)] for k in kinds]
            print(f"| {n} | {name} | " + " | ".join(f"{v:.2f}" for v in vals) + " | "
                  + " | ".join(f"{x:.1f}x" for x in ratios) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
