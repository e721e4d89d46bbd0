"""Probe 16 harness: probe 15's (a long-lived incremental pipeline vs a one-shot reference
and a fresh full rebuild after every write) extended for 8042f8a / 8604e98:

* ``write(..., landed=True)``: a failure injected *after* ``store.apply`` (the region
  commit): the long-lived side raises but its store holds the write, so the reference is
  given the write too and both graphs must still match;
* ``audit()``: after every write, the long-lived pipeline's region state (when it holds
  one) is checked against itself: ``state.postings`` is exactly what ``state.pterms``
  says (no DeltaSet left in it), every ``PaperColumns`` number list kept for a term's
  current set names exactly that set's papers (no stale or duplicate numbers), no
  per-change view is left over, the state's papers and version are the store's;
* counters of what the new code did (DeltaSet.apply calls, PaperColumns.applied by
  branch, holders() of a DeltaSet, update_csls_pools calls and how many blocks took the
  shared ``fresh_product``), so a run that never exercised a path cannot pass unnoticed.

Run: HF_HUB_OFFLINE=1 PYTHONPATH=/work/probe16:/work/probe16/docs/probes/probe16 \
     /work/main/.venv/bin/python docs/probes/probe16/<scenario>.py
"""

from __future__ import annotations

import collections
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

import graph.link as gl  # noqa: E402
import graph.overlay as go  # noqa: E402
from graph.build import Pipeline, graphs_equal  # noqa: E402
from graph.ingest import paper_from_record, read_corpus  # noqa: E402
from graph.model import GraphData, Paper  # noqa: E402
from graph.store.embedded import EmbeddedStore  # noqa: E402
from graph.store.memory import NetworkxStore  # noqa: E402
from tests.support.seeds import EMBED_CACHE as _TEST_CACHE, SEEDS, seed_settings  # noqa: E402

# a copy of the tests' embed cache: the probe's new texts are not written into theirs
EMBED_CACHE = Path(os.environ.get("PROBE16_CACHE", "/tmp/probe16-embed-cache"))
if not EMBED_CACHE.exists():
    import shutil
    shutil.copytree(_TEST_CACHE, EMBED_CACHE)

SEED_PAPERS: list[Paper] = read_corpus([SEEDS]).papers

# ---------------------------------------------------------------- counters (no behaviour change)
COUNT: collections.Counter[str] = collections.Counter()

_real_apply = go.DeltaSet.apply
_real_applied = gl.PaperColumns.applied
_real_holders = gl.PaperColumns.holders
_real_find_pools = gl._find_pools
_real_update_pools = gl.update_csls_pools


def _count_apply(self):
    COUNT["deltaset.apply"] += 1
    if self.plus and self.minus:
        COUNT["deltaset.apply.plus+minus"] += 1
    return _real_apply(self)


def _count_applied(self, term, view):
    got = self._views.get(term)
    held = self._held.get(term)
    if got is not None and got[0] is view:
        COUNT["applied.view-numbered"] += 1
    elif held is not None and held[0] is view.base:
        COUNT["applied.held-moved"] += 1
    else:
        COUNT["applied.dropped"] += 1
    return _real_applied(self, term, view)


def _count_holders(self, term, papers):
    if isinstance(papers, go.DeltaSet):
        COUNT["holders.deltaset"] += 1
    return _real_holders(self, term, papers)


def _count_find_pools(sc, block, min_score, product=None):
    COUNT["find_pools.block"] += 1
    if product is not None:
        COUNT["find_pools.fresh_product"] += 1
    if os.environ.get("PROBE16_TRACE_BLOCKS"):
        print(f"   block rows {block[0]}..{block[-1]} ({len(block)}) of {sc.m32.shape[0]}: "
              f"{'shared product' if product is not None else 'own product'}", flush=True)
    return _real_find_pools(sc, block, min_score, product)


def _count_update_pools(*a, **k):
    COUNT["update_csls_pools"] += 1
    return _real_update_pools(*a, **k)


def install_counters() -> None:
    go.DeltaSet.apply = _count_apply
    gl.PaperColumns.applied = _count_applied
    gl.PaperColumns.holders = _count_holders
    gl._find_pools = _count_find_pools
    gl.update_csls_pools = _count_update_pools
    import graph.region as gr
    gr.update_csls_pools = _count_update_pools


install_counters()


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
    def __init__(self, name: str, rebuild_every: int = 1, overrides: dict | None = None) -> None:
        self.name = name
        self.dir = Path(tempfile.mkdtemp(prefix=f"probe16-{name}-"))
        # PROBE16_OVERRIDES='{"shared_term_top_k": 2, ...}': settings for both sides
        over = json.loads(os.environ.get("PROBE16_OVERRIDES", "{}"))
        over.update(overrides or {})
        self.settings = seed_settings(self.dir, **over)
        self.long = Pipeline(self.settings, cache_dir=EMBED_CACHE)  # incremental=True
        self.a = FailingStore(self.dir / "long.db")
        self.b = EmbeddedStore(self.dir / "ref.db")
        self.step = 0
        self.failures: list[str] = []
        self.rebuild_every = rebuild_every
        self.region_writes = 0
        self.audits = 0
        self.audited_terms = 0
        self.no_state = 0
        inner = self.long._region_update

        def counted(*a, **k):
            self.region_writes += 1
            return inner(*a, **k)

        self.long._region_update = counted  # type: ignore[method-assign]

    def _one_shot(self) -> Pipeline:
        return Pipeline(self.settings, cache_dir=EMBED_CACHE, incremental=False)

    def write(self, label: str, add: list[Paper] = (), remove: list[str] = (),
              replace: bool = False, fail_store: int = 0, check: bool = True,
              expect_error: bool = False, landed: bool = False,
              ref_remove: list[str] | None = None, fired: list | None = None,
              fired_landed: bool = True) -> None:
        """``landed``: an error is expected on the long-lived side, after its store took
        the write (the reference gets it too). ``ref_remove``: what the reference is given
        to remove, where it differs (e.g. another spelling)."""
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
        if fired is not None and fired[0]:
            # an injection that may not fire (the write may hold no DeltaSet): decided now
            if fired_landed:
                landed = True
            else:
                expect_error = True
        if fail_store or expect_error or landed:
            wrote = rep_a is not None and (rep_a.nodes_written + rep_a.edges_written
                                           + rep_a.nodes_deleted + rep_a.edges_deleted)
            if err_a is None and (expect_error or landed or wrote):
                self.bad(label, f"expected the write to fail, it did not ({rep_a})")
        if landed or err_a is None or not (fail_store or expect_error):
            one = self._one_shot()
            try:
                rep_b = one.run(self.b, add_papers=list(add),
                                remove=list(ref_remove if ref_remove is not None else remove),
                                replace=replace)
            except Exception as exc:  # noqa: BLE001
                err_b = exc
            finally:
                one.close()
            if not landed and ((err_a is None) != (err_b is None) or (
                    err_a is not None and type(err_a) is not type(err_b))):
                self.bad(label, f"errors differ: long={err_a!r} ref={err_b!r}")
            if landed and err_b is not None:
                self.bad(label, f"the reference failed: {err_b!r}")
            if rep_a is not None and rep_b is not None:
                ka = self._rep(rep_a)
                kb = self._rep(rep_b)
                if ka != kb:
                    self.bad(label, f"reports differ:\n  long={ka}\n  ref ={kb}")
        if check:
            self.compare(label)
        self.audit(label)
        dt = time.perf_counter() - t0
        print(f"[{self.name} #{self.step}] {label}: "
              f"{'ERR ' + type(err_a).__name__ + ': ' + str(err_a)[:80] if err_a else 'ok'}"
              f" [{'region' if self.region_writes > before_region else 'whole'}]"
              f"{'' if self.long._state is not None else ' (no state)'}"
              f" ({dt:.1f}s)", flush=True)
        self.last_error = err_a
        self.last_report = rep_a

    @staticmethod
    def _rep(r) -> tuple:
        return (sorted(r.added), sorted(r.removed), r.updated, r.duplicates,
                sorted(p.reason for p in r.problems))

    def compare(self, label: str) -> None:
        got = self.a.snapshot()
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
                if papers:
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

    def audit(self, label: str) -> None:
        """The long-lived region state agrees with itself and with the store."""
        held = self.long._state
        if held is None:
            self.no_state += 1
            return
        self.audits += 1
        st = held.state
        want: dict[str, set[str]] = collections.defaultdict(set)
        for p, ts in st.pterms.items():
            for t in ts:
                want[t].add(p)
        kinds = {type(v).__name__ for v in st.postings.values()}
        if kinds - {"set"}:
            self.bad(label, f"state.postings holds {kinds}")
        got = {t: set(v) for t, v in st.postings.items() if v}
        empty = [t for t, v in st.postings.items() if not v]
        if got != dict(want) or empty:
            extra = sorted(got.keys() - want.keys())[:4]
            missing = sorted(want.keys() - got.keys())[:4]
            wrong = sorted(t for t in got.keys() & want.keys() if got[t] != want[t])[:4]
            self.bad(label, f"state.postings != pterms: extra={extra} missing={missing} "
                            f"wrong={wrong} empty={empty[:4]}")
        if not set(st.pterms) <= set(st.papers):
            self.bad(label, f"state.pterms holds ids that are not papers: {sorted(set(st.pterms) - set(st.papers))[:4]}")
        stored = papers_of(self.a.snapshot())
        if set(stored) != set(st.papers):
            self.bad(label, f"state papers != stored papers: {sorted(set(stored) ^ set(st.papers))[:5]}")
        if st.version != self.a.version():
            self.bad(label, f"state version {st.version} != store {self.a.version()}")
        pc = st.paper_columns
        if pc._views:
            self.bad(label, f"PaperColumns views left after the change: {sorted(pc._views)[:4]}")
        for t, (ps, nums) in pc._held.items():
            cur = st.postings.get(t)
            if cur is not ps:
                continue  # kept for a set the state no longer holds: never matched again
            self.audited_terms += 1
            names = [pc.names[i] for i in np.asarray(nums).tolist()]
            if len(names) != len(set(names)) or set(names) != set(ps):
                self.bad(label, f"PaperColumns numbers of {t!r} are stale: numbers name "
                                f"{sorted(names)[:6]} (len {len(names)}), the set holds "
                                f"{sorted(ps)[:6]} (len {len(ps)})")
        for p, i in pc.index.items():
            if pc.names[i] != p:
                self.bad(label, f"PaperColumns index/names disagree at {p!r}")
                break

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
              f"{self.step} writes took the region path; state audited {self.audits} times "
              f"({self.audited_terms} term number lists checked), no state after "
              f"{self.no_state} writes", flush=True)
        print(f"== counters: {dict(sorted(COUNT.items()))}", flush=True)
        return len(self.failures)


def main(fn) -> None:
    try:
        n = fn()
    except Exception:
        traceback.print_exc()
        sys.exit(2)
    sys.exit(1 if n else 0)
