"""The fast query encoder (onnxruntime) against the stock model, on real texts.

The stored paper vectors come from the stock SentenceTransformer; a query vector from
the fast path is compared with them, so it must be the stock vector to within
QUERY_TOLERANCE for every text a user may send: titles, abstracts past the window,
batches with padding.
"""

from __future__ import annotations

import csv
import logging
from pathlib import Path

import numpy as np
import pytest

from graph.embed import PROBE_TEXTS, QUERY_TOLERANCE, SentenceTransformerEmbedder
from graph.ingest.corpus import read_corpus
from tests.support.profile import LONG
from tests.support.seeds import SEEDS

ICLR2021 = Path(__file__).resolve().parents[3] / "shared" / "data" / "iclr2021" / "paperlist.tsv"


#: seed abstracts, ICLR 2021 titles and ICLR 2021 abstracts in the sample: the long
#: profile's ~370 texts, or ~130 (an abstract costs the stock model ~10 titles)
SEED_ABSTRACTS, TITLES, ABSTRACTS = (76, 250, 40) if LONG else (24, 90, 12)


def _need_iclr() -> None:
    """Skip where the shared data is not beside the clone, as the other ICLR tests do."""
    if not ICLR2021.exists():
        pytest.skip("shared ICLR 2021 data not present")


def _real_texts() -> list[str]:
    """Seed titles and abstracts, then ICLR 2021 titles and a few abstracts."""
    papers = read_corpus([SEEDS]).papers
    texts = [p.title for p in papers if p.title]
    texts += [p.abstract for p in papers if p.abstract][:SEED_ABSTRACTS]
    _need_iclr()
    with ICLR2021.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    texts += [r["title"] for r in rows[:TITLES]]
    # most run past the 256-piece window
    texts += [r["abstract"] for r in rows[250 : 250 + ABSTRACTS]]
    return [t for t in texts if t.strip()]


@pytest.fixture(scope="module")
def real_texts() -> list[str]:
    return _real_texts()


@pytest.fixture(scope="module")
def pair() -> tuple[SentenceTransformerEmbedder, SentenceTransformerEmbedder]:
    """A stock embedder and one whose query path is onnxruntime."""
    stock = SentenceTransformerEmbedder()
    fast = SentenceTransformerEmbedder()
    assert fast.enable_fast_queries() is not None
    return stock, fast


def test_fast_query_vectors_agree_with_the_stock_model_on_real_texts(
    pair: tuple[SentenceTransformerEmbedder, SentenceTransformerEmbedder], real_texts: list[str],
) -> None:
    stock, fast = pair
    assert fast.query_path == "onnxruntime" and stock.query_path == "stock"
    texts = real_texts
    assert len(texts) >= (300 if LONG else 120)
    want = stock.encode(texts)
    one_by_one = np.vstack([fast.encode_queries([t]) for t in texts])
    batched = np.vstack([fast.encode_queries(texts[i : i + 16]) for i in range(0, len(texts), 16)])
    for got in (one_by_one, batched):
        assert got.dtype == np.float32 and got.shape == want.shape
        assert float(np.abs(got - want).max()) <= QUERY_TOLERANCE
        # not a copy of the stock path: the kernels differ, so some bits do too
    assert not np.array_equal(one_by_one, want)
    norms = np.linalg.norm(one_by_one.astype(np.float64), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-6)


def test_cosines_with_stored_vectors_agree_to_six_decimals(
    pair: tuple[SentenceTransformerEmbedder, SentenceTransformerEmbedder], real_texts: list[str],
) -> None:
    stock, fast = pair
    texts = real_texts
    stored = stock.encode(texts[:80]).astype(np.float64)
    queries = texts[80:120]
    want = stock.encode(queries).astype(np.float64) @ stored.T
    got = fast.encode_queries(queries).astype(np.float64) @ stored.T
    assert float(np.abs(got - want).max()) < 1e-6


def test_chunked_long_texts_take_the_stock_path_short_ones_the_fast_one() -> None:
    stock = SentenceTransformerEmbedder(long_text="chunks")
    fast = SentenceTransformerEmbedder(long_text="chunks")
    assert fast.enable_fast_queries() is not None
    _need_iclr()
    with ICLR2021.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))[:200]
    abstracts = [r["abstract"] for r in rows]
    long = [a for a, n in zip(abstracts, stock._n_tokens(abstracts), strict=True)
            if n > stock.max_tokens][:4]
    assert len(long) == 4
    texts = [rows[0]["title"], long[0], rows[1]["title"], *long[1:]]
    got = fast.encode_queries(texts)
    want = stock.encode(texts)
    # the windows of a long text are averaged by the stock code itself: bit for bit
    for i in (1, 3, 4, 5):
        assert np.array_equal(got[i], want[i])
    assert float(np.abs(got - want).max()) <= QUERY_TOLERANCE


def test_a_fast_path_that_disagrees_is_not_used(caplog: pytest.LogCaptureFixture) -> None:
    emb = SentenceTransformerEmbedder()
    with caplog.at_level(logging.WARNING, logger="graph.embed"):
        # no float32 kernel swap is bit-exact on every probe: a zero tolerance refuses it
        assert emb.enable_fast_queries(tolerance=0.0) is None
    assert emb.query_path == "stock"
    assert "differs from the model" in caplog.text
    text = "graph neural networks for molecules"
    assert np.array_equal(emb.encode_queries([text]), emb.encode([text]))


def test_bfloat16_weights_keep_the_stock_path() -> None:
    emb = SentenceTransformerEmbedder(dtype="bfloat16")
    assert emb.enable_fast_queries() is None
    assert emb.query_path == "stock"


def test_a_server_warm_up_turns_the_fast_path_on_and_the_setting_keeps_it_off(
    tmp_path: Path,
) -> None:
    from api.services import Services
    from graph.settings import Settings

    paths = {}
    for choice in ("onnxruntime", "stock"):
        settings = Settings(data_dir=tmp_path / choice, query_encoder=choice)  # type: ignore[call-arg]
        services = Services(settings)
        try:
            services.warm_up()  # an empty data dir: the model step runs, the store's fails
            paths[choice] = services.embedder().query_path
            vec = services.embed("graph neural networks")
        finally:
            services.close()
        assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-6
    assert paths == {"onnxruntime": "onnxruntime", "stock": "stock"}


def test_fast_encodes_from_many_threads_at_once_equal_the_serial_ones(
    pair: tuple[SentenceTransformerEmbedder, SentenceTransformerEmbedder], real_texts: list[str],
) -> None:
    """A server encodes queries from its worker threads at once: one session, one tokenizer."""
    from concurrent.futures import ThreadPoolExecutor

    _, fast = pair
    texts = real_texts[:16] + real_texts[-44:]  # abstracts and titles: lengths, truncation
    serial = [fast.encode_queries([t]) for t in texts]
    batches = [texts[i : i + 5] for i in range(0, len(texts), 5)]
    serial_batches = [fast.encode_queries(b) for b in batches]
    with ThreadPoolExecutor(max_workers=8) as pool:
        one = list(pool.map(lambda t: fast.encode_queries([t]), texts))
        many = list(pool.map(fast.encode_queries, batches))
    assert all(np.array_equal(a, b) for a, b in zip(one, serial, strict=True))
    assert all(np.array_equal(a, b) for a, b in zip(many, serial_batches, strict=True))


def test_the_export_is_kept_and_read_back_by_the_next_process(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    """A server worker keeps its export in the model cache; the next one reads it, checks
    it against the stock model as it would a new export, and answers the same vectors.
    A truncated file is exported again; a cache that cannot be written costs the keeping,
    not the fast path."""
    cache = tmp_path / "models"
    texts = ["graph neural networks", PROBE_TEXTS[6], "contrastive learning"]
    first = SentenceTransformerEmbedder()
    assert first.enable_fast_queries(cache=cache) is not None
    (kept,) = cache.glob("query-*.onnx")
    assert not [p for p in cache.iterdir() if p != kept]  # no temporary file left behind
    stat = kept.stat()
    second = SentenceTransformerEmbedder()
    assert second.enable_fast_queries(cache=cache) is not None
    assert kept.stat().st_mtime_ns == stat.st_mtime_ns and kept.stat().st_ino == stat.st_ino
    assert np.array_equal(second.encode_queries(texts), first.encode_queries(texts))
    assert float(np.abs(second.encode_queries(texts) - second.encode(texts)).max()) <= (
        QUERY_TOLERANCE
    )

    kept.write_bytes(kept.read_bytes()[: stat.st_size // 3])  # a write cut short
    third = SentenceTransformerEmbedder()
    with caplog.at_level(logging.WARNING, logger="graph.embed"):
        assert third.enable_fast_queries(cache=cache) is not None
    assert "cannot be read" in caplog.text
    assert kept.stat().st_size == stat.st_size
    assert np.array_equal(third.encode_queries(texts), first.encode_queries(texts))

    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    fourth = SentenceTransformerEmbedder()
    with caplog.at_level(logging.INFO, logger="graph.embed"):
        assert fourth.enable_fast_queries(cache=blocked / "models") is not None
    assert "not kept in" in caplog.text
    assert fourth.query_path == "onnxruntime"
