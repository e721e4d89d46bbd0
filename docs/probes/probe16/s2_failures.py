"""Scenario 2: failures injected at every point of a region write that the new code
touches, each on a write that moves terms held by other papers (so the change holds
DeltaSet views of the state's sets), then more writes moving the same terms; after every
write the graph is compared with a one-shot reference and a full rebuild and the region
state audited.

* in the commit, after store.apply (the write landed; the long-lived side raises):
  PaperColumns.applied (1st, 3rd call), DeltaSet.apply (1st, 3rd call: some of the
  state's sets already moved in place), the postings Overlay.apply after every DeltaSet
  was applied, PaperColumns.settled, ConceptColumns.commit (the commit's first line),
  SimilarPools.apply (late in the commit);
* before the commit: _SubIndex.__init__ after it numbered the holders (2nd call: the
  change's views are numbered, settled() never runs), related_region,
  update_csls_pools, store.apply (FailingStore).
"""
import sys

import graph.link as gl
import graph.overlay as go
import graph.region as gr
from atoms import ATOMS
from harness16 import S, P, Harness, main, papers_of


def T(*atoms: int) -> str:
    return " ".join(ATOMS[a] for a in atoms)


def inject(owner, attr, nth=1, after=False):
    """``owner.attr`` raises on its ``nth`` call from now (after running, if ``after``);
    returns (undo, fired)."""
    real = getattr(owner, attr)
    calls = [0]
    fired = [False]

    def wrapper(*a, **k):
        calls[0] += 1
        if calls[0] == nth and not after:
            fired[0] = True
            raise RuntimeError(f"probe: injected in {attr} (call {nth})")
        got = real(*a, **k)
        if calls[0] == nth:
            fired[0] = True
            raise RuntimeError(f"probe: injected after {attr} (call {nth})")
        return got

    setattr(owner, attr, wrapper)
    return (lambda: setattr(owner, attr, real)), fired


class _PostingsOverlayFails:
    """Overlay.apply raises once, for the region commit's postings view only (the first
    Overlay applied after a DeltaSet was)."""

    def __init__(self):
        self.real_o = go.Overlay.apply
        self.real_d = go.DeltaSet.apply
        self.armed = False
        self.fired = [False]
        me = self

        def d_apply(ds):
            me.armed = True
            return me.real_d(ds)

        def o_apply(ov):
            if me.armed and not me.fired[0]:
                me.fired[0] = True
                raise RuntimeError("probe: injected in the postings Overlay.apply")
            return me.real_o(ov)

        go.DeltaSet.apply = d_apply
        go.Overlay.apply = o_apply

    def undo(self):
        go.Overlay.apply = self.real_o
        go.DeltaSet.apply = self.real_d


def run() -> int:
    wide = len(sys.argv) > 1 and sys.argv[1] == "wide"
    over = ({"shared_term_top_k": 2, "shared_term_min_weight": 0.05,
             "shared_term_max_df": 0.6, "similar_k": 3} if wide else {})
    h = Harness("s2" + ("-wide" if wide else ""), overrides=over)
    base = {
        "a": T(0, 1), "b": T(7, 8), "c": T(0, 10), "d": T(2, 3), "e": T(4, 5),
        "f": T(6, 9), "g": T(10, 11), "h": T(0, 2, 12), "i": T(1, 13), "j": T(3, 5, 8),
        "k": T(0, 11), "l": T(10, 12), "m": T(2, 6), "n": T(9, 13),
    }
    h.write("build", add=[P(k, v) for k, v in base.items()] + [S(i) for i in range(6)],
            replace=True)
    h.write("warm: a -> 0,2 (region path, state made)", add=[P("a", T(0, 2))])
    h.write("warm: a -> 0,1", add=[P("a", T(0, 1))])

    points = [
        # (name, make-injection, landed)
        ("PaperColumns.applied #1", lambda: inject(gl.PaperColumns, "applied", 1), True),
        ("PaperColumns.applied #3", lambda: inject(gl.PaperColumns, "applied", 3), True),
        ("DeltaSet.apply #1", lambda: inject(go.DeltaSet, "apply", 1), True),
        ("DeltaSet.apply #3", lambda: inject(go.DeltaSet, "apply", 3), True),
        ("DeltaSet.apply #2 after it ran", lambda: inject(go.DeltaSet, "apply", 2, after=True),
         True),
        ("postings Overlay.apply", None, True),
        ("PaperColumns.settled", lambda: inject(gl.PaperColumns, "settled", 1), True),
        ("ConceptColumns.commit", lambda: inject(gl.ConceptColumns, "commit", 1), True),
        ("SimilarPools.apply", lambda: inject(gl.SimilarPools, "apply", 1), True),
        ("_SubIndex.__init__ #2 after numbering",
         lambda: inject(gl._SubIndex, "__init__", 2, after=True), False),
        ("_SubIndex.__init__ #1 after numbering",
         lambda: inject(gl._SubIndex, "__init__", 1, after=True), False),
        ("related_region", lambda: inject(gr, "related_region", 1), False),
        ("update_csls_pools", lambda: inject(gr, "update_csls_pools", 1), False),
        ("store.apply", "store", False),
    ]
    rounds = [
        # (failing write's adds, removes), then two follow-ups moving the same terms
        ([P("a", T(2, 13)), P("c", T(0, 12)), P("x1", T(0, 10, 3))], ["k"]),
        ([P("a", T(0, 1)), P("c", T(0, 10))], ["x1"]),
        ([P("k", T(0, 11)), P("d", T(0, 3))], []),
        ([P("d", T(2, 3)), P("x1", T(0, 10, 3))], []),
    ]
    for name, make, landed in points:
        for r, (add, remove) in enumerate(rounds):
            live = set(papers_of(h.a.snapshot()))
            if r == 0:
                # a state with SIMILAR_TO pools (as the API's warm-up makes it), moved by two
                # region writes (kept numbers, moved pools) before the failing one
                h.long.prime(h.a)
                h.write("(warm) d -> 2,3,0", add=[P("d", T(2, 3, 0))])
                h.write("(warm) d -> 2,3", add=[P("d", T(2, 3))])
                if h.long._state is None or h.long._state.state.pools is None:
                    h.bad(name, "no state with pools before the failing write")
                undo, fired = (None, None)
                if make == "store":
                    h.write(f"FAIL[{name}] " + _label(add, remove), add=add, remove=remove,
                            fail_store=1)
                    continue
                if make is None:
                    inj = _PostingsOverlayFails()
                    undo, fired = inj.undo, inj.fired
                else:
                    undo, fired = make()
                optional = "#2" in name and "_SubIndex" in name  # only if the change
                # reaches soft papers (a first _SubIndex for the movers)
                try:
                    if optional:
                        h.write(f"FAIL?[{name}] " + _label(add, remove), add=add,
                                remove=remove, fired=fired, fired_landed=landed)
                    else:
                        h.write(f"FAIL[{name}] " + _label(add, remove), add=add, remove=remove,
                                landed=landed, expect_error=not landed)
                finally:
                    undo()
                if not fired[0]:
                    if optional:
                        print(f"   ({name}: did not fire on this write)", flush=True)
                        continue
                    h.bad(name, "the injection never fired")
                if h.long._state is not None:
                    h.bad(name, "the failed write left the pipeline holding its state")
                if h.last_error is not None and "probe: injected" not in str(h.last_error):
                    h.bad(name, f"failed otherwise: {h.last_error!r}")
            else:
                rm = [x for x in remove if x in live]
                h.write(f"after [{name}] " + _label(add, rm), add=add, remove=rm)
        # the papers back to their base text for the next point (x1 may exist)
        h.write(f"reset after [{name}]", add=[P(k, base[k]) for k in "acdk"])
    return h.close()


def _label(add, remove):
    return f"add {[p.id for p in add]} rm {remove}"


if __name__ == "__main__":
    main(run)
