"""A synthetic corpus for the scale benchmarks: seeded, deterministic, no model needed.

* vectors: ``N / 100`` topic centroids (unit Gaussian directions pulled 0.5 toward one
  shared "corpus" direction, as real abstract embeddings share one: the mean pairwise
  cosine of ICLR 2021's MiniLM vectors is ~0.1-0.2, not 0); each paper is ``w *
  centroid(a) + (1 - w) * centroid(b) + noise``, w ~ U(0.6, 1), then L2-normalised;
* terms: each paper mentions Poisson(15)+1 terms (ICLR 2021: a median of 16 concepts a
  paper); half from a global Zipf(1.1) vocabulary of N terms, half from its topic's own
  Zipf(1.1) list of 200, so frequent terms are frequent everywhere and topic terms cluster.

:func:`synthetic_corpus` makes those papers into texts the pipeline reads, with each
paper's extraction and vector already in the caches, so a build or an add runs its
linking and storing without loading the model or extracting text.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

DIM = 384
NOISE = 0.9
TERMS_PER_PAPER = 15


def generate(n: int, seed: int = 0) -> tuple[np.ndarray, list[dict[str, float]], np.ndarray]:
    """(unit vectors n x 384 float32, terms per paper {term: weight}, topic per paper)."""
    rng = np.random.default_rng(seed)
    n_topics = max(20, n // 100)
    common_dir = rng.normal(size=DIM)
    common_dir /= np.linalg.norm(common_dir)
    cent = rng.normal(size=(n_topics, DIM))
    cent /= np.linalg.norm(cent, axis=1, keepdims=True)
    cent = cent + 0.5 * common_dir
    cent /= np.linalg.norm(cent, axis=1, keepdims=True)
    a = rng.integers(0, n_topics, n)
    b = rng.integers(0, n_topics, n)
    w = rng.uniform(0.6, 1.0, n)[:, None]
    out = np.empty((n, DIM), dtype=np.float32)
    for s in range(0, n, 10000):
        e = min(n, s + 10000)
        noise = rng.normal(size=(e - s, DIM)) * (NOISE / math.sqrt(DIM))
        v = w[s:e] * cent[a[s:e]] + (1 - w[s:e]) * cent[b[s:e]] + noise
        out[s:e] = v / np.linalg.norm(v, axis=1, keepdims=True)
    counts = rng.poisson(TERMS_PER_PAPER, n) + 1
    terms: list[dict[str, float]] = []
    for i in range(n):
        mine: dict[str, float] = {}
        k = int(counts[i])
        g = rng.zipf(1.1, size=k * 2)
        t = rng.zipf(1.1, size=k * 2)
        for j in range(k):
            if j % 2 == 0:
                mine[f"concept:g{int(g[j]) % n}"] = 1.0
            else:
                mine[f"concept:t{a[i]}-{int(t[j]) % 200}"] = 1.0
        terms.append(mine)
    return out, terms, a


def synthetic_corpus(total: int, data_dir: Path) -> list[Any]:
    """The ``total`` papers of :func:`generate` (seed 0) as papers the pipeline reads,
    with their extractions and vectors put in ``data_dir/cache`` (the CLI's caches)."""
    from graph.build import ExtractionCache, abstract_key, embedding_text
    from graph.embed import EmbeddingCache, SentenceTransformerEmbedder, text_key
    from graph.extract import Extraction, RuleExtractor, TermMention
    from graph.ingest import paper_from_record
    from graph.settings import Settings

    vecs, terms, topics = generate(total, seed=0)
    papers = []
    extractions = {}
    for i in range(total):
        names = [f"{t.split(':', 1)[1].replace('-', 'q')}x model" for t in sorted(terms[i])]
        title = f"Synthetic paper {i} on topic {int(topics[i])}"
        lead = f"We study {', '.join(names)}."
        p = paper_from_record({"id": f"s{i:06d}", "title": title, "abstract": lead},
                              source=f"synthetic:{i}")
        papers.append(p)
        extractions[abstract_key(p)] = Extraction(
            concepts=tuple(TermMention(nm, nm, 1, lead, "model") for nm in names),
            datasets=(), acronyms=(), label=title,
        )
    settings = Settings(data_dir=data_dir)
    cache = settings.cache_dir
    cache.mkdir(parents=True, exist_ok=True)
    ExtractionCache(cache / "extractions.sqlite", RuleExtractor().version).put_many(extractions)
    key = SentenceTransformerEmbedder(settings.model, dtype=settings.embed_dtype,
                                      long_text=settings.long_text).key
    ec = EmbeddingCache(cache / "embeddings.sqlite")
    ec.put_many(key, {text_key(embedding_text(p)): vecs[i] for i, p in enumerate(papers)})
    ec.close()
    return papers


def graph_parts(m: np.ndarray, terms: list[dict[str, float]], topic: np.ndarray,
                n: int) -> Any:
    """``part(rows)``: the GraphChange of those papers (SIMILAR_TO to 10 papers of the same
    topic among the first ``n``, with their real cosines; MENTIONS of their terms), with
    their vectors. The store's own cost, without the pipeline's linking."""
    from graph.model import Concept, Edge, GraphChange, Paper, RelType

    ids = [f"p{i:06d}" for i in range(len(topic))]
    rng = np.random.default_rng(5)
    by_topic: dict[int, list[int]] = {}
    for i, t in enumerate(topic.tolist()):
        by_topic.setdefault(int(t), []).append(i)

    def part(rows: range) -> GraphChange:
        papers = [Paper(ids[i], f"Paper {i}", f"synthetic abstract {i}", f"h{i}") for i in rows]
        edges: list[Edge] = []
        concepts: set[str] = set()
        for i in rows:
            pool = [j for j in by_topic[int(topic[i])] if j != i and j < n]
            picked = rng.choice(pool, size=min(10, len(pool)), replace=False).tolist()
            for rank, j in enumerate(picked, 1):
                s = round(float(m[i] @ m[j]), 6)
                edges.append(Edge(ids[i], ids[j], RelType.SIMILAR_TO, s,
                                  {"score": s, "rank": rank}))
            for c in terms[i]:
                concepts.add(c)
                edges.append(Edge(ids[i], c, RelType.MENTIONS, 1.0, {"count": 1, "evidence": ""}))
        nodes: list[Paper | Concept] = [*papers]
        nodes += [Concept(c, c.split(":", 1)[1].replace("-", " ")) for c in sorted(concepts)]
        sel = list(rows)
        return GraphChange(upsert_nodes=tuple(nodes), upsert_edges=tuple(edges),
                           embedding_ids=tuple(ids[i] for i in sel), embeddings=m[sel],
                           embedding_model="synthetic")

    return part
