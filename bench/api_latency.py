"""p50 latency per GraphQL query kind on the seed graph, against the store call behind it.

    python bench/api_latency.py [--data-dir DIR] [--runs 30]

Builds the seed graph into DIR (default: a temp folder) unless a graph is there,
then times, in-process, ``await schema.execute(query)`` (parse + validate +
execute + the store call) and the library call the query makes, side by side
(median of --runs after a warm-up), and prints a table with their ratio: wall
time, and this process's CPU time (all its threads: the resolver's worker thread
too), which a busy machine inflates far less. The depth-2 neighborhood is also run
with strawberry's stock execution context (no fast path) to show what the flat-row
fast path saves.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from api.graphql.context import Context  # noqa: E402
from api.graphql.schema import build_schema  # noqa: E402
from api.services import Services  # noqa: E402
from graph.model import NodeKind, Paper  # noqa: E402
from graph.related import related  # noqa: E402
from graph.settings import Settings  # noqa: E402
from graph.store.embedded import EmbeddedStore  # noqa: E402
from graph.store.memory import NetworkxStore  # noqa: E402


def median_ms(fn: Callable[[], Any], runs: int) -> tuple[float, float]:
    """Median (wall, CPU) milliseconds of ``fn()``."""
    fn()
    times, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(times) * 1000, statistics.median(cpu) * 1000


async def amedian_ms(fn: Callable[[], Awaitable[Any]], runs: int) -> tuple[float, float]:
    """Median (wall, CPU) milliseconds of ``await fn()``."""
    await fn()
    times, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        await fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(times) * 1000, statistics.median(cpu) * 1000


SEM_QUERY = "diffusion models for image generation"
NEIGHBORHOOD = """query($id: ID!) { neighborhood(id: $id, depth: 2, limit: 200) {
  truncated nodes { id label kind } edges { source target type weight } } }"""


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    data_dir = args.data_dir or Path(tempfile.gettempdir()) / "citegraph-bench-api"
    settings = Settings(data_dir=data_dir, seeds_dir=ROOT / "seeds")
    if not settings.graph_db.exists():
        from tests.support.seeds import build_seed_graph

        print(f"building the seed graph into {data_dir} …", file=sys.stderr)
        build_seed_graph(data_dir)
    store = EmbeddedStore(settings.graph_db)
    services = Services(settings, opener=lambda _s: store)
    services.open()
    schema = build_schema(settings)
    stock = build_schema(settings)
    from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

    stock.execution_context_class = StrawberryGraphQLCoreExecutionContext

    papers, _ = store.list_nodes(NodeKind.PAPER, limit=1000)
    # the paper whose depth-2 neighborhood (all edge types, 200-node cap) has the most edges
    start = max(papers, key=lambda p: len(store.neighborhood([p.id], 2, limit=200).edges)).id
    sub = store.neighborhood([start], 2, limit=200)
    a, b = papers[0].id, papers[-1].id
    sem_vec = services.embed("diffusion models for image generation")  # loads the model once

    async def gql(query: str, on: Any = schema, **variables: Any) -> Callable[[], Awaitable[Any]]:
        async def run() -> Any:
            r = await on.execute(query, variable_values=variables, context_value=Context(services))
            assert not r.errors, r.errors
            return r

        return run

    cases: list[tuple[str, Callable[[], Awaitable[Any]], Callable[[], Any]]] = [
        (
            f"neighborhood d=2 ({len(sub.nodes)} nodes, {len(sub.edges)} edges)",
            await gql(NEIGHBORHOOD, id=start),
            lambda: store.neighborhood([start], 2, limit=200),
        ),
        (
            "  same, stock strawberry (no fast path)",
            await gql(NEIGHBORHOOD, on=stock, id=start),
            lambda: store.neighborhood([start], 2, limit=200),
        ),
        (
            "neighborhood d=1",
            await gql(NEIGHBORHOOD.replace("depth: 2", "depth: 1"), id=start),
            lambda: store.neighborhood([start], 1, limit=200),
        ),
        (
            "shortestPath",
            await gql("""query($a: ID!, $b: ID!) { shortestPath(from: $a, to: $b) {
              length nodes { id label kind } hops { from to type weight reason } } }""", a=a, b=b),
            lambda: store.shortest_path(a, b, None, 4),
        ),
        (
            "paths k=3",
            await gql("""query($a: ID!, $b: ID!) { paths(from: $a, to: $b, k: 3) {
              length hops { from to reason } } }""", a=a, b=b),
            lambda: store.k_paths(a, b, 3, None, 4),
        ),
        (
            "search KEYWORD",
            await gql("""{ search(query: "diffusion", first: 10) { score
              node { id ... on Paper { label } ... on Concept { name } } } }"""),
            lambda: store.keyword_search("diffusion", None, 10),
        ),
        (
            "search SEMANTIC (incl. embedding)",
            await gql("""{ search(query: "diffusion models for image generation",
              mode: SEMANTIC, first: 10) { score node { id ... on Paper { label } } } }"""),
            lambda: store.vector_search(services.embed(SEM_QUERY), 10),
        ),
        (
            "related (paper)",
            await gql("""query($a: ID!) { related(paper: $a, first: 10) { score
              paper { key label } reasons { kind text weight } path { hops { reason } } } }""",
                      a=a),
            lambda: related(store, paper=a, first=10, lexical=services.lexical),
        ),
        (
            "papers(first: 50) + concepts",
            await gql("""{ papers(first: 50) { totalCount edges { node { key label
              concepts { weight concept { name } } } } } }"""),
            lambda: _papers_with_concepts(store),
        ),
        (
            "node(id)",
            await gql("query($a: ID!) { node(id: $a) { id ... on Paper { label venue } } }", a=a),
            lambda: store.get_nodes([a]),
        ),
        (
            "stats",
            await gql("{ stats { nodes { kind count } edges { kind count } "
                      "centralConcepts { concept { name } degree pagerank } } }"),
            store.stats,
        ),
    ]
    _ = sem_vec
    print(f"seed graph: {sum(store.stats().nodes.values())} nodes, "
          f"{sum(store.stats().edges.values())} edges; median of {args.runs} runs\n")
    print(f"{'query kind':<48} {'GraphQL p50':>12} {'store p50':>10} {'ratio':>6}"
          f"   {'GraphQL CPU':>11} {'store CPU':>10} {'ratio':>6}")
    print("-" * 112)
    for name, q, direct in cases:
        g, gc = await amedian_ms(q, args.runs)
        d, dc = median_ms(direct, args.runs)
        print(f"{name:<48} {g:>9.2f} ms {d:>7.2f} ms {g / d:>5.1f}×"
              f"   {gc:>8.2f} ms {dc:>7.2f} ms {gc / max(dc, 1e-3):>5.1f}×")


def _papers_with_concepts(store: NetworkxStore) -> Any:
    from graph.model import RelType

    nodes, _ = store.list_nodes(NodeKind.PAPER, limit=50)
    ids = [n.id for n in nodes if isinstance(n, Paper)]
    edges = store.edges_of(ids, [RelType.MENTIONS])
    return store.get_nodes(sorted({e.target for e in edges}))


if __name__ == "__main__":
    asyncio.run(main())
