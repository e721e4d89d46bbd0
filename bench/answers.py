"""The answers of the query kinds the speed work touched, as JSON, to diff two checkouts.

    python bench/answers.py --data-dir DIR --out after.json --text
    python bench/answers.py --data-dir DIR --out before.json --text --code OLD_CHECKOUT
    python bench/answers.py --compare before.json after.json

On the graph in DIR (opened as ``citegraph serve`` opens it, through api.services): related
papers of 50 random papers (ids, scores, similarities, reasons, paths), one with positive
and negative papers, three related(text:) queries with ``--text``, shortest paths between
40 random pairs at max_hops 2, 3, 4 and 6, k paths (k=3, 3 hops), name lookups of 60
concepts and of 300 papers' short names, and 20 depth-2 neighbourhoods. Same seed, same
queries: two checkouts on the same graph must write equal files.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def answers(data_dir: Path, text: bool, code: Path = ROOT) -> list[Any]:
    sys.path.insert(0, str(code))
    from api.services import Services
    from graph.model import NodeKind
    from graph.settings import Settings

    svc = Services(Settings(data_dir=data_dir))
    svc.open()
    store, service = svc.store(), svc.service()
    ids = [n.id for n in store.list_nodes(NodeKind.PAPER, limit=100_000)[0]]
    rng = random.Random(11)
    out: list[Any] = []
    for pid in rng.sample(ids, min(50, len(ids))):
        _, rel = service.related(paper=pid, first=10)
        out.append(["related", pid, [
            [r.paper.id, r.score, r.similarity,
             [[x.kind, x.text, x.weight, x.node_id] for x in r.reasons],
             [n.id for n in r.path.nodes] if r.path else None] for r in rel]])
    a, b = rng.sample(ids, 2)
    _, rel = service.related(paper=a, positive=[b], negative=[rng.choice(ids)], first=10)
    out.append(["related+-", a, [[r.paper.id, r.score] for r in rel]])
    if text:
        for q in ["diffusion models for image generation", "graph neural networks",
                  "reinforcement learning exploration"]:
            _, rel = service.related(text=q, first=10)
            out.append(["related-text", q, [[r.paper.id, r.score, [[x.kind, x.text]
                                                                   for x in r.reasons]]
                                            for r in rel]])
    for _ in range(40):
        a, b = rng.sample(ids, 2)
        p = store.shortest_path(a, b, None, 4)
        out.append(["sp", a, b, [n.id for n in p.nodes] if p else None,
                    [(e.source, e.target, e.type.value) for e in p.edges] if p else None])
        for hops in (2, 3, 4, 6):
            p = store.shortest_path(a, b, None, hops)
            out.append(["sp", hops, [n.id for n in p.nodes] if p else None])
        out.append(["kp", a, b, [[n.id for n in p.nodes] for p in store.k_paths(a, b, 3, None, 3)]])
    concepts = store.list_nodes(NodeKind.CONCEPT, limit=200)[0]
    for c in concepts[:60]:
        out.append(["match", c.label, [n.id for n in service.matches(c.label)]])
    for paper in store.list_nodes(NodeKind.PAPER, limit=300)[0]:
        short = paper.label.split(":")[0]
        out.append(["match", short, [n.id for n in service.matches(short)]])
    for c in concepts[:20]:
        sg = store.neighborhood([c.id], 2, None, None, 100)
        out.append(["nb", c.id, [n.id for n in sg.nodes], len(sg.edges), sg.truncated])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--text", action="store_true", help="also related(text:) (loads the model)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout to import (this one)")
    args = ap.parse_args()
    if args.compare:
        a, b = (json.loads(p.read_text()) for p in args.compare)
        differ = [i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y]
        print(f"{len(a)} / {len(b)} answers, {len(differ)} differ" + (
            f" (first: {a[differ[0]][:2]})" if differ else ""))
        return 1 if differ or len(a) != len(b) else 0
    if not args.data_dir or not args.out:
        ap.error("--data-dir and --out (or --compare A B)")
    args.out.write_text(json.dumps(answers(args.data_dir, args.text, args.code.resolve())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
