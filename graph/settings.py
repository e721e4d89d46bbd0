"""One Settings class, read from the environment (prefix ``CITEGRAPH_``).

Built once at an entry point (CLI, app factory) and passed down; nothing reads
the environment anywhere else.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

#: Bigger input files are refused unread (a symlink to a huge or endless file included).
DEFAULT_MAX_INPUT_FILE_BYTES = 256 * 1024 * 1024


class Settings(BaseSettings):
    """Every knob citegraph has. Environment variables win over defaults."""

    model_config = SettingsConfigDict(env_prefix="CITEGRAPH_", extra="ignore")

    # ---- storage
    store: Literal["embedded", "neo4j"] = "embedded"
    data_dir: Path = Path(".citegraph")
    seeds_dir: Path = Path("seeds")
    # how long a writer waits for another process's write to finish before giving up
    write_lock_timeout_s: float = Field(600.0, ge=0)

    # ---- input
    max_input_file_bytes: int = Field(default=DEFAULT_MAX_INPUT_FILE_BYTES, gt=0)

    neo4j_uri: str = Field(
        "bolt://localhost:7687", validation_alias=AliasChoices("NEO4J_URI", "CITEGRAPH_NEO4J_URI")
    )
    neo4j_user: str = Field(
        "neo4j", validation_alias=AliasChoices("NEO4J_USER", "CITEGRAPH_NEO4J_USER")
    )
    neo4j_password: SecretStr = Field(
        SecretStr("neo4j"),
        validation_alias=AliasChoices("NEO4J_PASSWORD", "CITEGRAPH_NEO4J_PASSWORD"),
    )
    neo4j_database: str = Field(
        "neo4j", validation_alias=AliasChoices("NEO4J_DATABASE", "CITEGRAPH_NEO4J_DATABASE")
    )
    neo4j_batch_size: int = Field(1000, ge=1)
    # changes with more rows commit batch by batch: 25,000 rows of papers with 384-d
    # embeddings overran 256 MiB of transaction memory, 10,000 fit (docs/neo4j.md)
    neo4j_max_tx_rows: int = Field(10_000, ge=1)
    neo4j_max_retry_s: float = Field(3.0, ge=0)  # how long the driver retries a failed transaction

    # ---- embeddings
    model: str = "all-MiniLM-L6-v2"  # name, path, or the packaged default
    embed_dtype: Literal["float32", "bfloat16"] = "float32"
    embed_batch_size: int = Field(32, ge=1)
    # How abstracts longer than the model's window are embedded: see docs/embeddings.md.
    long_text: Literal["truncate", "chunks", "head_tail"] = "truncate"
    # What encodes a query's text in a server: the stock model's transformer exported to
    # onnxruntime at warm-up (a third of the CPU; used only if its vectors agree with the
    # stock model's within graph.embed.QUERY_TOLERANCE), or the stock model. Stored
    # embeddings always come from the stock model; one-shot CLI commands use it for all.
    query_encoder: Literal["onnxruntime", "stock"] = "onnxruntime"
    # Where a server keeps that export (about 90 MB; named by a digest of the weights and
    # the exporter's versions), so the next worker reads it instead of exporting again
    # (~3.5 s of CPU). Unset: $XDG_CACHE_HOME/citegraph/models, else ~/.cache/citegraph/models.
    model_cache: Path | None = None
    # A write whose model is not loaded yet (a CLI add or build) embeds in a second
    # process while it reads and resolves the graph (graph.embed.EncodeProcess).
    embed_in_process_ahead: bool = True

    # ---- edges
    similar_k: int = Field(10, ge=1, le=100)  # at most the pool it ranks (graph.link)
    similar_min_score: float = Field(0.3, ge=-1.0, le=1.0)
    # a SHARES_TERM partner needs shared terms weighing this much; a linking term weighs
    # ln(e x 1000 / df) >= 1 (graph.link.term_weight, no N in it): 1 = any one shared
    # linking term, 2 = two, or one in at most 430 papers
    shared_term_min_weight: float = Field(1.0, gt=0)
    # terms in more than this share of papers link nothing
    shared_term_max_df: float = Field(0.2, gt=0, le=1.0)
    shared_term_top_k: int = Field(20, ge=1)

    # ---- topics (graph.topics; docs/benchmarks.md, topics: how the resolution was chosen)
    # Leiden's resolution (RBConfiguration: 1 = modularity); higher, smaller topics
    topic_resolution: float = Field(1.0, gt=0)
    topic_seed: int = 42
    # an add or remove re-clusters once the papers changed since the last computation
    # reach this share of the corpus; below it, new papers join their neighbours' topic
    topic_recompute_fraction: float = Field(0.1, gt=0, le=1.0)
    # topics this big are split into subtopics (Leiden again on the topic's subgraph)
    topic_subtopic_min: int = Field(40, ge=4)
    # Leiden's resolution inside a topic (higher than topic_resolution: a topic is one
    # community at that one)
    topic_subtopic_resolution: float = Field(1.0, gt=0)
    # weights of the paper-paper edges besides SIMILAR_TO's cosine
    topic_cites_weight: float = Field(0.5, ge=0)
    topic_coupling_weight: float = Field(1.0, ge=0)

    # ---- API
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    # server processes (`citegraph serve --workers`); each holds the model and the graph
    workers: int = Field(1, ge=1, le=32)
    # torch threads per server process for encoding queries; numpy's BLAS gets one. A
    # query's work is small, and a pool's threads spin and wait on each other on the cores
    # the other requests need: on a busy 2-core machine a query's encode took 35 ms with
    # one thread and 273 ms with two, and related() twice the CPU with two BLAS threads.
    # Concurrency comes from requests and workers instead.
    compute_threads: int = Field(1, ge=1, le=64)
    api_key: SecretStr | None = None
    cors_origins: list[str] = []
    max_depth: int = Field(3, ge=1)
    max_page_size: int = Field(100, ge=1)
    max_neighborhood_nodes: int = Field(500, ge=1)
    max_hops: int = Field(6, ge=1)
    max_paths: int = Field(10, ge=1)
    max_query_depth: int = Field(12, ge=1)
    # estimated fan-out x depth of one query (api/limits.py). The tests', README's and
    # explorer's queries cost at most ~3,300, GraphiQL's introspection ~52,000 (it depends
    # on the query's shape, not on the schema's size); 3 hops of similar(first: 100): 2 million.
    max_query_cost: int = Field(60_000, ge=1)
    max_aliases: int = Field(30, ge=1)
    max_tokens: int = Field(2000, ge=1)
    max_body_bytes: int = Field(100_000, ge=1)
    request_timeout_s: float = Field(10.0, gt=0)
    # expensive queries (related, semantic/hybrid search, paths, neighborhoods) running
    # at once in one server process; one more waits up to expensive_wait_s for a slot,
    # then answers BUSY (HTTP 503, Retry-After) instead of slowing every other one down
    max_expensive_queries: int = Field(4, ge=1)
    expensive_wait_s: float = Field(2.0, ge=0)
    # /export/...: a request's time limit instead of REQUEST_TIMEOUT_S (a whole-graph export
    # streams the graph as it reads it: ICLR 2021 takes seconds, 100k papers minutes); one
    # that runs past it is cut off, its file incomplete
    export_timeout_s: float = Field(600.0, gt=0)
    # whole-graph exports running at once in one server process; more answer 503 with
    # Retry-After at once (each reads the whole graph: they would share the CPU and the store)
    max_concurrent_exports: int = Field(2, ge=1)

    @property
    def graph_db(self) -> Path:
        """The embedded store's database (SQLite, WAL; docs/format.md)."""
        return self.data_dir / "graph.db"

    @property
    def legacy_graph_file(self) -> Path:
        """The old single-file graph (a ZIP), migrated into ``graph_db`` on first open."""
        return self.data_dir / "graph.citegraph"

    @property
    def cache_dir(self) -> Path:
        return self.data_dir / "cache"

    @property
    def model_cache_dir(self) -> Path:
        """Where exported query models are kept: shared by every graph of this user."""
        if self.model_cache is not None:
            return self.model_cache
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "citegraph" / "models"
