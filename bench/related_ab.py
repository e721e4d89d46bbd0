"""related() of another checkout's graph/related.py against this one's, in one process.

    python bench/related_ab.py --before OLD/graph/related.py --data-dir DIR [--papers 300]

Both modules run over the same store and word index (this checkout's), each with its
own TermCounts kept across calls as a server keeps one. First every paper's answer from
both is compared (dataclass equality: ids, scores, similarities, reasons, paths, exact
floats), then CPU time per call is taken over 60 papers, the sides alternating for
``--rounds`` rounds (median). Only graph/related.py may differ between the two.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True, help="another graph/related.py")
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--papers", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=8)
    args = ap.parse_args()
    if not 1 <= args.papers <= 5000 or not 1 <= args.rounds <= 50:
        ap.error("bounded: 1-5000 papers, 1-50 rounds")
    import graph.related as new
    from api.services import Services, limit_blas_threads
    from graph.model import NodeKind
    from graph.settings import Settings

    spec = importlib.util.spec_from_file_location("related_before", args.before)
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    sys.modules["related_before"] = old  # dataclasses look their module up
    spec.loader.exec_module(old)
    limit_blas_threads()
    services = Services(Settings(data_dir=args.data_dir))  # type: ignore[call-arg]
    services.open()
    store, lexical = services.store(), services.lexical
    lexical.sync(store)
    ids = [n.id for n in store.list_nodes(NodeKind.PAPER, limit=100_000)[0]]
    papers = random.Random(5).sample(ids, min(args.papers, len(ids)))
    sides = {"before": old, "after": new}
    counts = {s: m.TermCounts() for s, m in sides.items()}

    def run(side: str, pid: str) -> object:
        return sides[side].related(store, paper=pid, first=5, lexical=lexical,
                                   term_counts=counts[side])

    same = sum(run("before", p) == run("after", p) for p in papers)
    print(f"equal answers: {same} of {len(papers)}")
    cpu: dict[str, list[float]] = {s: [] for s in sides}
    for r in range(args.rounds):
        for side in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
            c0 = time.process_time()
            for p in papers[:60]:
                run(side, p)
            cpu[side].append(1000 * (time.process_time() - c0) / len(papers[:60]))
    b, a = (statistics.median(cpu[s]) for s in sides)
    print(f"median CPU ms a call over {args.rounds} rounds: before {b:.2f}, after {a:.2f}"
          f" ({b / a:.2f}x)")
    return 0 if same == len(papers) else 1


if __name__ == "__main__":
    sys.exit(main())
