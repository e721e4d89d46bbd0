"""A short version of bench/load.py in CI: 8 clients x 5 s, mixed queries, zero errors.

The long run (32 clients x 30 s x 3) is ``python bench/load.py``; its figures are in
docs/reliability.md.
"""

from __future__ import annotations

import httpx
import pytest

from bench.load import Server, query_mix, run_round

pytestmark = pytest.mark.slow


def test_short_load_no_errors(hard_server: Server) -> None:
    with httpx.Client(base_url=hard_server.url, timeout=30) as c:
        mix = query_mix(c)
    rounds = [run_round(hard_server, mix, clients=8, seconds=5) for _ in range(2)]
    for r in rounds:
        d = r.as_dict()
        print(f"short load: {d}")
        assert d["errors"] == 0, d["first_errors"]
        assert d["requests"] >= 20, d
        assert d["p99_ms"] < 15_000, d
    # memory steady: the second round grows the server by less than 150 MiB
    assert rounds[1].rss_after - rounds[1].rss_before < 150 * 2**20, rounds[1].as_dict()
    assert hard_server.process.poll() is None
