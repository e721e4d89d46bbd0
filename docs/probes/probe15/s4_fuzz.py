"""Scenario 4: random write sequences over a small pool of ids and texts (seeded): adds,
updates to free or taken texts, removes (some of missing ids), an id twice in a batch,
NFC/NFD spellings, title-only changes, injected store failures; compared after every
write with a one-shot reference and a full rebuild. Usage: s4_fuzz.py SEED [STEPS] [prime]"""
import random
import sys
import unicodedata

from harness import SEED_PAPERS, P, Harness, main, papers_of
from texts import H

from graph.build import Pipeline
from tests.support.seeds import EMBED_CACHE


def run() -> int:
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    start = int(sys.argv[4]) if len(sys.argv) > 4 else 14  # papers in the first build
    prime = len(sys.argv) > 3 and sys.argv[3] == "prime"
    rng = random.Random(seed)
    h = Harness(f"s4-{seed}{'-prime' if prime else ''}")
    texts = [p.abstract for p in SEED_PAPERS[:30]] + list(H)
    ids = [f"x{i}" for i in range(max(18, start + 6))] + [unicodedata.normalize("NFC", "réseau-1"),
                                           unicodedata.normalize("NFC", "Ωmega"),
                                           "\u212a1"]
    def spell(pid: str) -> str:
        return unicodedata.normalize("NFD", pid) if rng.random() < 0.5 else pid

    first = [P(ids[i], texts[i]) for i in range(start)]
    if rng.random() < 0.5:
        first.append(P("dupA", texts[0]))  # a text held twice in the build itself
    if prime:
        one = Pipeline(h.settings, cache_dir=EMBED_CACHE, incremental=False)
        one.run(h.a, add_papers=first, replace=True); one.close()
        one = Pipeline(h.settings, cache_dir=EMBED_CACHE, incremental=False)
        one.run(h.b, add_papers=first, replace=True); one.close()
        h.long.prime(h.a)
        h.step += 1
        h.compare("primed build")
    else:
        h.write("build", add=first, replace=True)
    for step in range(steps):
        live = sorted(papers_of(h.a.snapshot()))
        add, remove = [], []
        r = rng.random()
        n_ops = rng.choice([1, 1, 1, 2, 3])
        for _ in range(n_ops):
            op = rng.random()
            if op < 0.35:  # new or existing id, random text
                add.append(P(spell(rng.choice(ids)), rng.choice(texts)))
            elif op < 0.5 and live:  # title only
                pid = rng.choice(live)
                cur = papers_of(h.a.snapshot())[pid]
                add.append(P(pid, cur.abstract, f"T{rng.randrange(5)}"))
            elif op < 0.75 and live:  # remove
                pid = rng.choice(live)
                if pid not in remove:
                    remove.append(pid)
            elif op < 0.85 and live:  # remove + its text elsewhere in the same write
                pid = rng.choice(live)
                if pid not in remove:
                    remove.append(pid)
                    cur = papers_of(h.a.snapshot())[pid]
                    add.append(P(spell(rng.choice(ids)), cur.abstract))
            elif op < 0.97:  # same id twice in one batch
                pid = rng.choice(ids)
                add += [P(pid, rng.choice(texts)), P(spell(pid), rng.choice(texts))]
            else:  # a missing id removed (both sides must refuse)
                remove.append("nope")
        if len(remove) != len(set(remove)):
            remove = list(dict.fromkeys(remove))
        fail = 1 if rng.random() < 0.08 else 0
        label = f"add {[(p.id, texts.index(p.abstract) if p.abstract in texts else '?') for p in add]} rm {remove}" + (" FAILSTORE" if fail else "")
        if "nope" in remove:
            h.write(label, add=add, remove=remove)  # both raise NotFoundError
        else:
            h.write(label, add=add, remove=remove, fail_store=fail)
    return h.close()


if __name__ == "__main__":
    main(run)
