"""Where one query encode's CPU goes, and the onnxruntime path against the stock model.

    python bench/query_encode.py [--rounds 9] [--per-round 40]

One process, one torch thread (as a server runs): the stages of a stock encode of a
short query (the model's tokenizer, the transformer's forward, pooling and normalising,
sentence-transformers' encode around them, this project's encode around that), then the
stock encode and the fast one interleaved round by round (CPU time, median over rounds),
then the largest difference between their vectors on the real texts of
tests/unit/test_query_encoder.py (seeds and ICLR 2021 titles and abstracts).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUERIES = [
    "graph neural networks for molecule property prediction",
    "large language models for code generation",
    "contrastive self-supervised learning",
    "image generation with diffusion models",
]


def cpu_ms(f: Callable[[], Any], n: int) -> float:
    """CPU ms per call of ``f`` over ``n`` calls."""
    c0 = time.process_time()
    for _ in range(n):
        f()
    return 1000 * (time.process_time() - c0) / n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--per-round", type=int, default=40)
    args = ap.parse_args()
    if not 1 <= args.rounds <= 50 or not 1 <= args.per_round <= 500:
        ap.error("bounded: 1-50 rounds of 1-500 encodes")
    warnings.filterwarnings("ignore")
    import numpy as np
    import torch

    from graph.embed import SentenceTransformerEmbedder
    from tests.unit.test_query_encoder import _real_texts

    torch.set_num_threads(1)
    stock = SentenceTransformerEmbedder()
    fast = SentenceTransformerEmbedder()
    model = stock._load()
    c0, t0 = time.process_time(), time.perf_counter()
    diff = fast.enable_fast_queries()
    print(f"export + check: {time.perf_counter() - t0:.1f} s wall, "
          f"{time.process_time() - c0:.1f} s CPU; probe difference {diff}")
    text = QUERIES[0]
    feats = model.preprocess([text])
    transformer = model[0].auto_model
    inputs = {k: v for k, v in feats.items() if k in ("input_ids", "attention_mask",
                                                      "token_type_ids")}
    with torch.inference_mode():
        hidden = transformer(**inputs).last_hidden_state

    def pool() -> Any:
        with torch.inference_mode():
            out = model[1]({"token_embeddings": hidden, "attention_mask": inputs["attention_mask"]})
            return model[2](out)

    def forward() -> Any:
        with torch.inference_mode():
            return transformer(**inputs)

    stages: dict[str, Callable[[], Any]] = {
        "tokenizer (preprocess)": lambda: model.preprocess([text]),
        "transformer forward": forward,
        "pooling + normalise": pool,
        "SentenceTransformer.encode": lambda: model.encode(
            [text], convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False),
        "embedder.encode (stock)": lambda: stock.encode([text]),
        "embedder.encode_queries (onnxruntime)": lambda: fast.encode_queries([text]),
    }
    for f in stages.values():
        cpu_ms(f, 5)
    print(f"\nstages of one encode of {text!r} ({len(inputs['input_ids'][0])} word pieces), "
          f"median CPU ms over {args.rounds} rounds of {args.per_round}:")
    got = {k: statistics.median(cpu_ms(f, args.per_round) for _ in range(args.rounds))
           for k, f in stages.items()}
    for k, v in got.items():
        print(f"  {k:40} {v:7.2f}")

    sides = {"stock": stock.encode, "onnxruntime": fast.encode_queries}
    runs: dict[str, list[float]] = {s: [] for s in sides}
    for r in range(args.rounds):
        order = list(sides) if r % 2 == 0 else list(sides)[::-1]
        for side in order:
            enc = sides[side]
            runs[side].append(cpu_ms(lambda enc=enc: [enc([q]) for q in QUERIES],
                                     args.per_round // len(QUERIES) or 1) / len(QUERIES))
    b, a = (statistics.median(runs[s]) for s in sides)
    print(f"\ninterleaved, {len(QUERIES)} short queries, median CPU ms an encode: "
          f"stock {b:.2f}, onnxruntime {a:.2f} ({b / a:.2f}x)")
    batch = [*QUERIES, "a", "Deep residual learning for image recognition", "GANs"]
    runs = {s: [] for s in sides}
    for r in range(args.rounds):
        order = list(sides) if r % 2 == 0 else list(sides)[::-1]
        for side in order:
            enc = sides[side]
            runs[side].append(cpu_ms(lambda enc=enc: enc(batch), max(1, args.per_round // 8)))
    b, a = (statistics.median(runs[s]) for s in sides)
    print(f"a batch of {len(batch)} names and titles (HYBRID's): stock {b:.2f}, "
          f"onnxruntime {a:.2f} ms ({b / a:.2f}x)")

    texts = _real_texts()
    want = stock.encode(texts)
    one = np.vstack([fast.encode_queries([t]) for t in texts])
    batched = np.vstack([fast.encode_queries(texts[i : i + 16])
                         for i in range(0, len(texts), 16)])
    stored = want.astype(np.float64)
    cos_want, cos_got = stored @ stored.T, one.astype(np.float64) @ stored.T
    moved = int((np.round(cos_want, 6) != np.round(cos_got, 6)).sum())
    print(f"\n{len(texts)} real texts: max |difference| one by one "
          f"{float(np.abs(one - want).max()):.3g}, in batches of 16 "
          f"{float(np.abs(batched - want).max()):.3g}; cosines with the stock vectors: max "
          f"|difference| {float(np.abs(cos_got - cos_want).max()):.3g}, {moved} of "
          f"{cos_want.size} differ once rounded to 6 decimals")
    return 0


if __name__ == "__main__":
    sys.exit(main())
