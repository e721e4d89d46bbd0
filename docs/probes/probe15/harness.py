"""Probe 15 harness: one long-lived (incremental) pipeline vs a one-shot reference and a
fresh full rebuild, after every write of a hostile sequence.

Run: HF_HUB_OFFLINE=1 PYTHONPATH=/work/probe15 /work/main/.venv/bin/python \
     docs/probes/probe15/<scenario>.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from graph.build import Pipeline, graphs_equal  # noqa: E402
from graph.ingest import paper_from_record, read_corpus  # noqa: E402
from graph.model import GraphData, Paper  # noqa: E402
from graph.store.embedded import EmbeddedStore  # noqa: E402
from graph.store.memory import NetworkxStore  # noqa: E402
from tests.support.seeds import EMBED_CACHE, SEEDS, seed_settings  # noqa: E402

SEED_PAPERS: list[Paper] = read_corpus([SEEDS]).papers


def P(pid: str, text: str, title: str | None = None) -> Paper:
    return paper_from_record(
        {"id": pid, "title": title if title is not None else f"Paper {pid}", "abstract": text},
        source=f"probe:{pid}")


def S(i: int, pid: str | None = None, title: str | None = None) -> Paper:
    """Seed abstract i, optionally under another id / title."""
    s = SEED_PAPERS[i]
    return P(pid or s.id, s.abstract, title if title is not None else (s.title or "t"))


class FailingStore(EmbeddedStore):
    """An embedded store whose apply raises the next ``fail`` times (before writing)."""

    fail = 0

    def apply(self, change):  # type: ignore[override]
        if self.fail:
            self.fail -= 1
            raise OSError("probe: injected store failure")
        return super().apply(change)


def papers_of(data: GraphData) -> dict[str, Paper]:
    return {n.id: n for n in data.nodes.values() if isinstance(n, Paper)}


class Harness:
    def __init__(self, name: str, rebuild_every: int = 1) -> None:
        self.name = name
        self.dir = Path(tempfile.mkdtemp(prefix=f"probe15-{name}-"))
        # PROBE15_OVERRIDES='{"shared_term_top_k": 2, ...}': settings for both sides
        import json
        over = json.loads(os.environ.get("PROBE15_OVERRIDES", "{}"))
        self.settings = seed_settings(self.dir, **over)
        self.long = Pipeline(self.settings, cache_dir=EMBED_CACHE)  # incremental=True
        self.a = FailingStore(self.dir / "long.db")
        self.b = EmbeddedStore(self.dir / "ref.db")
        self.step = 0
        self.failures: list[str] = []
        self.rebuild_every = rebuild_every
        self.region_writes = 0
        inner = self.long._region_update

        def counted(*a, **k):
            self.region_writes += 1
            return inner(*a, **k)

        self.long._region_update = counted  # type: ignore[method-assign]

    def _one_shot(self) -> Pipeline:
        return Pipeline(self.settings, cache_dir=EMBED_CACHE, incremental=False)

    def write(self, label: str, add: list[Paper] = (), remove: list[str] = (),
              replace: bool = False, fail_store: int = 0, check: bool = True,
              expect_error: bool = False) -> None:
        self.step += 1
        t0 = time.perf_counter()
        before_region = self.region_writes
        self.a.fail = fail_store
        err_a = err_b = None
        rep_a = rep_b = None
        try:
            rep_a = self.long.run(self.a, add_papers=list(add), remove=list(remove),
                                  replace=replace)
        except Exception as exc:  # noqa: BLE001
            err_a = exc
        self.a.fail = 0
        if fail_store or expect_error:
            # the reference does not get a write that failed on the long-lived side
            wrote = rep_a is not None and (rep_a.nodes_written + rep_a.edges_written
                                           + rep_a.nodes_deleted + rep_a.edges_deleted)
            if err_a is None and (expect_error or wrote):
                self.bad(label, f"expected the write to fail, it did not ({rep_a})")
        if err_a is None or not (fail_store or expect_error):
            one = self._one_shot()
            try:
                rep_b = one.run(self.b, add_papers=list(add), remove=list(remove),
                                replace=replace)
            except Exception as exc:  # noqa: BLE001
                err_b = exc
            finally:
                one.close()
            if (err_a is None) != (err_b is None) or (
                    err_a is not None and type(err_a) is not type(err_b)):
                self.bad(label, f"errors differ: long={err_a!r} ref={err_b!r}")
            if rep_a is not None and rep_b is not None:
                ka = self._rep(rep_a)
                kb = self._rep(rep_b)
                if ka != kb:
                    self.bad(label, f"reports differ:\n  long={ka}\n  ref ={kb}")
        if check:
            self.compare(label)
        dt = time.perf_counter() - t0
        print(f"[{self.name} #{self.step}] {label}: "
              f"{'ERR ' + type(err_a).__name__ + ': ' + str(err_a)[:80] if err_a else 'ok'}"
              f" [{'region' if self.region_writes > before_region else 'whole'}]"
              f" ({dt:.1f}s)", flush=True)

    @staticmethod
    def _rep(r) -> tuple:
        return (sorted(r.added), sorted(r.removed), r.updated, r.duplicates,
                sorted(p.reason for p in r.problems))

    def compare(self, label: str) -> None:
        got = self.a.snapshot()
        if not self.a.fail:
            ref = self.b.snapshot()
            d = graphs_equal(ref, got)
            if d or ref.edges != got.edges:
                self.bad(label, f"long vs one-shot reference: {d[:5]} edges_equal="
                                f"{ref.edges == got.edges}")
        if self.step % self.rebuild_every == 0:
            papers = papers_of(got)
            fresh = self._one_shot()
            try:
                store = NetworkxStore()
                fresh.run(store, add_papers=list(papers.values()), replace=True)
                full = store.snapshot()
            finally:
                fresh.close()
            d = graphs_equal(full, got)
            if d or full.edges != got.edges:
                diff_edges = {k for k in full.edges.keys() ^ got.edges.keys()}
                neq = [k for k in full.edges.keys() & got.edges.keys()
                       if full.edges[k] != got.edges[k]]
                self.bad(label, f"long vs full rebuild: {d[:5]} only-in-one={sorted(diff_edges)[:6]}"
                                f" unequal={neq[:4]}")

    def expect_papers(self, label: str, expected: dict[str, str]) -> None:
        """The stored papers are exactly ``expected`` (id -> abstract)."""
        got = {pid: p.abstract for pid, p in papers_of(self.a.snapshot()).items()}
        if got != expected:
            extra = sorted(got.keys() - expected.keys())
            missing = sorted(expected.keys() - got.keys())
            wrong = sorted(k for k in got.keys() & expected.keys() if got[k] != expected[k])
            self.bad(label, f"stored papers: extra={extra} missing={missing} wrong_text={wrong}")

    def bad(self, label: str, msg: str) -> None:
        line = f"FAIL [{self.name} #{self.step}] {label}: {msg}"
        print(line, flush=True)
        self.failures.append(line)

    def close(self) -> int:
        self.long.close()
        self.a.close()
        self.b.close()
        print(f"== {self.name}: {len(self.failures)} failure(s); {self.region_writes} of "
              f"{self.step} writes took the region path", flush=True)
        return len(self.failures)


def main(fn) -> None:
    try:
        n = fn()
    except Exception:
        traceback.print_exc()
        sys.exit(2)
    sys.exit(1 if n else 0)
