"""Build the seed graph once per test session (real model, real pipeline)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from graph.build import BuildReport, Pipeline
from graph.settings import Settings
from graph.store.embedded import EmbeddedStore

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "seeds"
# Embeddings depend only on (model, text): one cache for the whole session, all tests.
EMBED_CACHE = Path(tempfile.gettempdir()) / "citegraph-test-cache"


def seed_settings(data_dir: Path, **overrides: object) -> Settings:
    """Settings for a graph in ``data_dir`` built from the project's seeds."""
    return Settings(data_dir=data_dir, seeds_dir=SEEDS, **overrides)  # type: ignore[arg-type]


def build_seed_graph(data_dir: Path) -> tuple[EmbeddedStore, BuildReport]:
    """Build seeds/ into the embedded database in ``data_dir`` and return the store."""
    settings = seed_settings(data_dir)
    store = EmbeddedStore(settings.graph_db)
    pipeline = Pipeline(settings, cache_dir=EMBED_CACHE)
    try:
        report = pipeline.run(store, add_paths=[SEEDS], replace=True)
    finally:
        pipeline.close()
    return store, report


def copy_seed_graph(template: Path, data_dir: Path) -> EmbeddedStore:
    """A copy of a built seed graph (``seed_graph_template``) in ``data_dir``, opened.

    The same graph :func:`build_seed_graph` makes there: nothing stored names the data
    folder. Copying the closed database is ~100x cheaper than building it again."""
    import shutil

    shutil.copytree(template, data_dir, dirs_exist_ok=True)
    return EmbeddedStore(seed_settings(data_dir).graph_db)
