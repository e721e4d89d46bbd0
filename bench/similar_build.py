# ruff: noqa: E501 - long table rows
"""The build's SIMILAR_TO pass (``graph.link.full_similar``) at 10k / 30k synthetic papers.

    python bench/similar_build.py [--sizes 10000,30000] [--code TREE ...] [--rounds 1] [--torch]

What the build runs for SIMILAR_TO when it recomputes every row (graph/build.py): the
plain top-k of each paper among its pool, the hubs, then the CSLS lists (k = 10,
min_score 0.3, pool 100: the default settings). The vectors are bench/scale.py's
generator (topic-mixture unit vectors); the word vectors are
``graph.lexical.word_vectors`` of texts made as bench/add_scale.py makes them (a title
and one sentence listing the paper's synthetic terms), made before the clock starts.

Each (size, checkout) runs in a subprocess of its own, so its peak RSS (``ru_maxrss``)
is that run's; "input MiB" is the RSS once the vectors are made, so peak - input is what
``full_similar`` itself needed. ``--code`` (repeatable) runs the same on other
checkouts (PYTHONPATH), e.g. an export of main; with several, the checkouts alternate
within each size and round. The lists and hubs of each run are hashed: the same hash
means the same answer to the bit.

``--torch``: each run is made twice, without and with torch imported before the clock
starts, as in a server (whose model runs in its process): graph.halfdot's bfloat16
prefilter is taken there where the CPU multiplies bfloat16 natively. "torch" says which;
the input RSS then holds torch's import.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, table

K, MIN_SCORE = 10, 0.3


def _child(n: int, with_torch: bool) -> dict[str, Any]:
    # the checkout under test first: common.py put this one's root on the path
    sys.path.insert(0, os.environ.get("PYTHONPATH", str(ROOT)))
    from scale import _rss_mib, generate

    from graph import halfdot
    from graph.lexical import word_vectors
    from graph.link import PaperVectors, full_similar

    if with_torch:
        import torch  # noqa: F401 - loaded as a server's model loads it

    vecs, terms, topics = generate(n, seed=0)
    texts = []
    for i in range(n):
        names = [f"{t.split(':', 1)[1].replace('-', 'q')}x model" for t in sorted(terms[i])]
        texts.append(f"Synthetic paper {i} on topic {int(topics[i])}. We study {', '.join(names)}.")
    vec = PaperVectors([f"s{i:06d}" for i in range(n)], vecs, word_vectors(texts))
    del terms, texts
    start_mib = _rss_mib()
    t0 = time.perf_counter()
    lists, hubs = full_similar(vec, K, MIN_SCORE)
    took = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    digest = hashlib.sha256(pickle.dumps((
        [(p, [tuple(x) for x in v]) for p, v in lists.items()],
        [(p, tuple(h)) for p, h in hubs.items()]))).hexdigest()[:12]
    import graph.link

    assert Path(graph.link.__file__).resolve().is_relative_to(Path(os.environ.get("PYTHONPATH", str(ROOT))).resolve())
    return {"n": n, "seconds": took, "input_mib": start_mib, "peak_mib": peak, "hash": digest,
            "bf16": halfdot.usable()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="10000,30000")
    ap.add_argument("--code", type=Path, action="append", help="checkouts to run (default: this one)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--torch", action="store_true", help="also run each with torch loaded first")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--child-torch", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(_child(args.child, args.child_torch)))
        return 0
    trees = [c.resolve() for c in (args.code or [ROOT])]
    rows: list[tuple[object, ...]] = []
    for n in [int(s) for s in args.sizes.split(",")]:
        for _ in range(args.rounds):
            for tree, with_torch in [(t, w) for t in trees for w in ((False, True) if args.torch else (False,))]:
                proc = subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), "--child", str(n),
                     *(["--child-torch"] if with_torch else [])],
                    cwd=tree, env=dict(os.environ, PYTHONPATH=str(tree)),
                    capture_output=True, text=True, check=False,
                )
                if proc.returncode != 0:
                    print(f"{tree.name} N={n}: failed\n{proc.stderr[-3000:]}", file=sys.stderr)
                    continue
                got = json.loads(proc.stdout.strip().splitlines()[-1])
                print(json.dumps({"code": tree.name, "torch": with_torch, **got}), flush=True)
                took = "yes, bfloat16 product" if got.get("bf16") else ("yes" if with_torch else "no")
                rows.append((tree.name, took, f"{n:,}", f"{got['seconds']:.1f}", round(got["input_mib"]),
                             round(got["peak_mib"]), round(got["peak_mib"] - got["input_mib"]), got["hash"]))
    print(table(["code", "torch", "N", "full_similar s", "input MiB", "peak RSS MiB", "peak - input", "lists+hubs hash"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
