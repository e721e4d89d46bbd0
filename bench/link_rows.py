# ruff: noqa: E501 - long table rows
"""SHARES_TERM / RELATED_TO rows one add rewrites, under each term weight (no model, no store writes).

    python bench/link_rows.py --data-dir DIR --prefix meas-

DIR holds a built graph whose papers with ids starting with ``--prefix`` are "the add"
(e.g. the batch of a ``citegraph add``); the graph without them is "before". Both edge
sets are computed whole from the stored paper -> term edges, so the counts are what a
full recompute would write, for:

* ``ln(N / df)``: the old IDF (every weight moves with N);
* ``ln(C / df)``: C = e x 1000 fixed, exact df;
* ``ln(C / g(df))``: the same, df on a grid of 2^(k/s), for s = 8, 4 (shipped), 2.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import graph.link as link
from bench.common import Report, table
from graph.model import Edge, NodeKind, RelType
from graph.store.embedded import EmbeddedStore


def _grid(steps: int) -> Callable[[int], float]:
    def weight(df: int) -> float:
        k = (df**steps).bit_length() - 1
        return math.log(link.TERM_WEIGHT_REFERENCE) - k * math.log(2) / steps
    return weight


def _rows(old: dict[tuple[str, str, RelType], Edge], new: dict[tuple[str, str, RelType], Edge]) -> tuple[int, int, int]:
    upserted = sum(1 for k, e in new.items() if k not in old or old[k] != e)
    return upserted, sum(1 for k in old if k not in new), sum(1 for k in new if k not in old)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--prefix", required=True, help="ids of the added papers start with this")
    ap.add_argument("--no-report", action="store_true")
    args = ap.parse_args()
    store = EmbeddedStore(args.data_dir / "graph.db")
    g = store.snapshot()
    store.close()
    papers = {pid: set() for pid, n in g.nodes.items() if n.kind is NodeKind.PAPER}
    papers.update(link.paper_terms_of(g.edges.values()))
    after = {p: dict.fromkeys(ts, 1.0) for p, ts in papers.items()}
    added = sorted(p for p in after if p.startswith(args.prefix))
    if not added:
        raise SystemExit(f"no paper id starts with {args.prefix!r}")
    before = {p: v for p, v in after.items() if p not in added}
    names = {n.id: n.label for n in g.nodes.values()}
    concepts = [c for c, n in g.nodes.items() if n.kind is NodeKind.CONCEPT]

    shipped = link.term_weight
    variants: list[tuple[str, Callable[[int], float] | None]] = [
        ("ln(N / df), the old IDF", None),
        ("ln(C / df), exact df", lambda df: math.log(link.TERM_WEIGHT_REFERENCE / df)),
        ("ln(C / g(df)), 8 steps per octave", _grid(8)),
        ("ln(C / g(df)), 4 steps per octave (shipped)", shipped),
        ("ln(C / g(df)), 2 steps per octave", _grid(2)),
    ]
    def edges(terms: dict[str, dict[str, float]], weight: Callable[[int], float] | None) -> dict[tuple[str, str, RelType], Edge]:
        if weight is None:  # the old IDF: C is the corpus size
            n = len(terms)
            link.term_weight = lambda df: math.log(n / df)  # type: ignore[assignment]
        else:
            link.term_weight = weight  # type: ignore[assignment]
        return {e.key: e for e in link.shared_term_edges(terms, names)}

    out = []
    for name, weight in variants:
        t0 = time.perf_counter()
        old, new = edges(before, weight), edges(after, weight)
        seconds = (time.perf_counter() - t0) / 2
        up, deleted, fresh = _rows(old, new)
        out.append((name, len(new), up, fresh, deleted, f"{seconds:.2f}"))
    link.term_weight = shipped  # type: ignore[assignment]
    rel_old = {e.key: e for e in link.cooccurrence_edges(before, concepts)}
    rel_new = {e.key: e for e in link.cooccurrence_edges(after, concepts)}
    r_up, r_del, r_fresh = _rows(rel_old, rel_new)

    rep = Report("SHARES_TERM rows one add rewrites, by term weight (bench/link_rows.py)")
    rep.add(f"Graph: {len(after)} papers ({args.data_dir}); the add: {len(added)} papers ({args.prefix}*).")
    rep.add(table(["term weight", "SHARES_TERM edges after", "rows upserted", "of which new pairs", "rows deleted", "s per full compute"], out))
    rep.add(f"RELATED_TO (count only, ties by the partner's df): {len(rel_new)} edges after, {r_up} upserted ({r_fresh} new pairs), {r_del} deleted.")
    if not args.no_report:
        rep.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
