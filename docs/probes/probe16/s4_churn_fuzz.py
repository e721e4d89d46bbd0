"""Scenario 4: random write sequences (seeded) whose texts are 1-3 of 14 atom sentences, so
each write moves terms in and out of the sets other papers hold, terms empty and come
back, papers go and come back; with removes by other spellings, the same paper removed
twice in one call, remove + re-add in one write, title-only updates, store failures and
failures injected in the region commit (PaperColumns.applied, DeltaSet.apply, the
postings Overlay.apply) or before it (after _SubIndex numbered the holders). Compared after
every write with a one-shot reference and a full rebuild; the region state audited.

Usage: s4_churn_fuzz.py SEED [STEPS] [plain|prime] [START]
(PROBE16_OVERRIDES='{"shared_term_max_df": 0.6, ...}' for other settings)"""
import random
import sys
import unicodedata

import graph.link as gl
import graph.overlay as go
from atoms import ATOMS
from harness16 import EMBED_CACHE, P, Harness, main, papers_of
from s2_failures import _PostingsOverlayFails, inject

from graph.build import Pipeline


def run() -> int:
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    prime = len(sys.argv) > 3 and sys.argv[3] == "prime"
    start = int(sys.argv[4]) if len(sys.argv) > 4 else 16
    rng = random.Random(seed)
    h = Harness(f"s4-{seed}{'-prime' if prime else ''}")
    nfc = unicodedata.normalize("NFC", "réseau-1")
    ids = [f"x{i}" for i in range(start + 6)] + [nfc, unicodedata.normalize("NFC", "Ωmega")]

    def spell(pid: str) -> str:
        r = rng.random()
        if r < 0.25:
            return unicodedata.normalize("NFD", pid)
        if r < 0.35:
            return f" {pid}\t"
        return pid

    def text() -> str:
        k = rng.choice([1, 2, 2, 3])
        return " ".join(ATOMS[a] for a in sorted(rng.sample(range(len(ATOMS)), k)))

    first = [P(ids[i], text()) for i in range(start)]
    if prime:
        for store in (h.a, h.b):
            one = Pipeline(h.settings, cache_dir=EMBED_CACHE, incremental=False)
            one.run(store, add_papers=first, replace=True)
            one.close()
        h.long.prime(h.a)
        h.step += 1
        h.compare("primed build")
        h.audit("primed build")
    else:
        h.write("build", add=first, replace=True)
    for step in range(steps):
        cur = papers_of(h.a.snapshot())
        live = sorted(cur)
        add, remove, ref_remove = [], [], []
        for _ in range(rng.choice([1, 1, 2, 3, 4])):
            op = rng.random()
            if len(live) - len(ref_remove) < start * 2 // 3 and op >= 0.52:
                op = rng.random() * 0.52  # the corpus drained: adds and updates only
            if op < 0.35:  # an id (new or stored) with random atoms
                pid = rng.choice(ids)
                add.append(P(unicodedata.normalize("NFD", pid) if rng.random() < 0.3 else pid,
                             text()))
            elif op < 0.45 and live:  # a stored paper's terms moved by one atom
                pid = rng.choice(live)
                atoms = [a for a in range(len(ATOMS)) if ATOMS[a] in cur[pid].abstract]
                if atoms and rng.random() < 0.5 and len(atoms) > 1:
                    atoms.remove(rng.choice(atoms))
                else:
                    atoms.append(rng.choice([a for a in range(len(ATOMS)) if a not in atoms]))
                add.append(P(pid, " ".join(ATOMS[a] for a in sorted(atoms))))
            elif op < 0.52 and live:  # title only
                pid = rng.choice(live)
                add.append(P(pid, cur[pid].abstract, f"T{rng.randrange(4)}"))
            elif op < 0.75 and live:  # remove (by a spelling)
                pid = rng.choice(live)
                if pid not in ref_remove:
                    remove.append(spell(pid))
                    ref_remove.append(pid)
            elif op < 0.82 and live:  # the same paper removed twice, two spellings
                pid = rng.choice(live)
                if pid not in ref_remove:
                    remove += [pid, spell(pid)]
                    ref_remove.append(pid)
            elif op < 0.92 and live:  # remove + re-add the same id in one write
                pid = rng.choice(live)
                if pid not in ref_remove:
                    remove.append(pid)
                    ref_remove.append(pid)
                    add.append(P(pid, text() if rng.random() < 0.5 else cur[pid].abstract))
            elif op < 0.97 and live:  # all holders of one atom's terms leave that atom
                a = rng.randrange(len(ATOMS))
                for pid in live:
                    if ATOMS[a] in cur[pid].abstract:
                        rest = cur[pid].abstract.replace(ATOMS[a], "").strip()
                        add.append(P(pid, rest or ATOMS[(a + 1) % len(ATOMS)]))
            else:
                remove.append("nope")
                ref_remove.append("nope")
        seen = set()
        add = [p for p in add if not (p.id in seen or seen.add(p.id))]
        r = rng.random()
        label = (f"add {[(p.id, [a for a in range(len(ATOMS)) if ATOMS[a] in p.abstract]) for p in add]}"
                 f" rm {[ascii(x) for x in remove]}")
        if "nope" in remove:
            h.write(label, add=add, remove=remove, ref_remove=ref_remove)
        elif r < 0.05:
            h.write(label + " FAILSTORE", add=add, remove=remove, ref_remove=ref_remove,
                    fail_store=1)
        elif r < 0.2:
            which = rng.randrange(4)
            nth = rng.choice([1, 2, 3])
            if which == 0:
                undo, fired = inject(gl.PaperColumns, "applied", nth)
                what = f"applied#{nth}"
            elif which == 1:
                undo, fired = inject(go.DeltaSet, "apply", nth, after=rng.random() < 0.5)
                what = f"DeltaSet.apply#{nth}"
            elif which == 2:
                inj = _PostingsOverlayFails()
                undo, fired = inj.undo, inj.fired
                what = "postings-overlay"
            else:
                undo, fired = inject(gl._SubIndex, "__init__", nth, after=True)
                what = f"_SubIndex#{nth}"
            try:
                h.write(label + f" INJECT[{what}]", add=add, remove=remove,
                        ref_remove=ref_remove, fired=fired, fired_landed=which != 3)
            finally:
                undo()
            if fired[0]:
                if h.long._state is not None:
                    h.bad(label, f"{what}: the failed write left the pipeline its state")
                if "probe: injected" not in str(h.last_error):
                    h.bad(label, f"{what}: failed otherwise: {h.last_error!r}")
        else:
            h.write(label, add=add, remove=remove, ref_remove=ref_remove)
        if prime and (h.long._state is None or h.long._state.state.pools is None):
            # as the API's warm-up would after a restart: a state with SIMILAR_TO pools
            h.long.prime(h.a)
            h.audit("re-primed")
    return h.close()


if __name__ == "__main__":
    main(run)
