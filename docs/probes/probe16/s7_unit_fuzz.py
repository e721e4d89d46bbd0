"""Scenario 7 (no model, no store): DeltaSet and PaperColumns against plain-set models over
random change sequences, as region_change/commit use them: a change reads moved terms
through views (a term emptied and deleted, re-created as a plain set, within one change),
asks holders() of some terms, then either commits (applied for every view, then apply,
then settled) or fails at a random point of the commit loop / before it (then, as the
pipeline does, the state is thrown away and rebuilt: a new PaperColumns) or fails before
the commit keeping the state (settled only: what tests/unit does). After every change:
each set equals its model, every kept number list names exactly its set, holders() of
every set names exactly its set.

Also records (not a pipeline path): a view changed after holders() numbered it keeps the
numbers of the moment it was numbered.

Usage: s7_unit_fuzz.py [SEEDS] [CHANGES]"""
import random
import sys

import numpy as np

from graph.link import PaperColumns
from graph.overlay import DeltaSet, Overlay


def names(pc, nums):
    return sorted(pc.names[i] for i in np.asarray(nums).tolist())


def run_seed(seed: int, changes: int) -> list[str]:
    rng = random.Random(seed)
    bad: list[str] = []
    papers = [f"p{i}" for i in range(40)]
    terms = [f"t{i}" for i in range(12)]
    model = {t: set(rng.sample(papers, rng.randrange(1, 12))) for t in terms}
    state = {t: set(ps) for t, ps in model.items()}
    pc = PaperColumns()
    for t, ps in state.items():
        pc.holders(t, ps)
    for c in range(changes):
        post = Overlay(state)
        views: dict = {}

        def own(t):
            ps = views.get(t)
            if ps is None or post.get(t) is not ps:
                had = post.get(t)
                ps = views[t] = DeltaSet(had) if isinstance(had, set) else set(had or ())
                post[t] = ps
            return ps

        want = {t: set(ps) for t, ps in model.items()}
        for _ in range(rng.randrange(1, 10)):
            t = rng.choice(terms)
            p = rng.choice(papers)
            if rng.random() < 0.5:
                if t in post:
                    ps = own(t)
                    ps.discard(p)
                    want.get(t, set()).discard(p)
                    if not ps:
                        del post[t]
                        want.pop(t, None)
            else:
                own(t).add(p)
                want.setdefault(t, set()).add(p)
        # the change's view equals the model of after
        got = {t: set(post[t]) for t in post}
        if got != {t: ps for t, ps in want.items() if ps}:
            bad.append(f"seed {seed} change {c}: the view is not the model")
        for t in rng.sample(terms, rng.randrange(0, len(terms))):
            if t in post:
                nums = pc.holders(t, post[t])
                if names(pc, nums) != sorted(post[t]):
                    bad.append(f"seed {seed} change {c}: holders({t}) of the view wrong")
        fate = rng.random()
        if fate < 0.15:  # fails before the commit, the state kept (tests/unit's case)
            pc.settled()
        elif fate < 0.3:  # fails partway through the commit loop: the state is dropped
            k = rng.randrange(0, 4)
            for i, (t, ps) in enumerate(list(post.mine.items())):
                if i == k:
                    break
                if isinstance(ps, DeltaSet):
                    pc.applied(t, ps)
                    post.mine[t] = ps.apply()
            # the pipeline rebuilds its state from the store (here: the model)
            state = {t: set(ps) for t, ps in model.items()}
            pc = PaperColumns()
        else:
            for t, ps in post.mine.items():
                if isinstance(ps, DeltaSet):
                    pc.applied(t, ps)
                    post.mine[t] = ps.apply()
            post.apply()
            pc.settled()
            model = {t: ps for t, ps in want.items() if ps}
        if {t: set(ps) for t, ps in state.items()} != model:
            bad.append(f"seed {seed} change {c}: state != model")
        if pc._views:
            bad.append(f"seed {seed} change {c}: views left")
        for t, (ps, nums) in pc._held.items():
            if state.get(t) is ps and names(pc, nums) != sorted(ps):
                bad.append(f"seed {seed} change {c}: kept numbers of {t} stale")
        for t, ps in state.items():
            if names(pc, pc.holders(t, ps)) != sorted(ps):
                bad.append(f"seed {seed} change {c}: holders({t}) wrong")
    return bad


def changed_after_numbering() -> str:
    pc = PaperColumns()
    base = {"a", "b", "c"}
    pc.holders("t", base)
    v = DeltaSet(base)
    v.discard("a")
    pc.holders("t", v)  # numbered: b, c
    v.add("d")  # changed after it was numbered
    return (f"a view changed after holders(): holders() now names "
            f"{names(pc, pc.holders('t', v))}, the view holds {sorted(v)}")


if __name__ == "__main__":
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    changes = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    bad = []
    for s in range(seeds):
        bad += run_seed(s, changes)
    for b in bad[:20]:
        print("FAIL", b)
    print(f"== s7: {seeds} seeds x {changes} changes: {len(bad)} failure(s)")
    print("   (contract note)", changed_after_numbering())
    sys.exit(1 if bad else 0)
