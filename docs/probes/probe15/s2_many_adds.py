"""Scenario 2: 40+ writes in a row through one pipeline: single and small-batch adds of
seed abstracts, removes of old and just-added papers, re-adds of removed texts under new
ids, title updates, text updates to hand-written abstracts."""
import random

from harness import S, SEED_PAPERS, P, Harness, main
from texts import H


def run() -> int:
    rng = random.Random(15)
    h = Harness("s2")
    n0 = 20
    h.write("build", add=[S(i) for i in range(n0)], replace=True)
    live = {SEED_PAPERS[i].id: SEED_PAPERS[i].abstract for i in range(n0)}
    removed_texts: list[str] = []
    nxt = n0
    hw = 0
    for step in range(45):
        kind = step % 5
        add, remove = [], []
        if kind in (0, 1, 3) and nxt < len(SEED_PAPERS):
            k = 1 if kind != 3 else 3
            for _ in range(k):
                if nxt < len(SEED_PAPERS):
                    add.append(S(nxt)); nxt += 1
        if kind == 2 or (kind == 3 and step % 2):
            victims = rng.sample(sorted(live), 2)
            remove.extend(victims)
        if kind == 4 and removed_texts:
            t = removed_texts.pop(rng.randrange(len(removed_texts)))
            add.append(P(f"re{step}", t))
        if kind == 1 and hw < len(H):
            pid = rng.choice(sorted(live))
            add.append(P(pid, H[hw], "A new title")); hw += 1
        if kind == 0:
            pid = rng.choice(sorted(live))
            add.append(P(pid, live[pid], f"Retitled {step}"))
        for r in remove:
            removed_texts.append(live[r])
        label = f"add {[p.id[:12] for p in add]} remove {[r[:12] for r in remove]}"
        h.write(label, add=add, remove=remove)
        for r in remove:
            live.pop(r, None)
        for p in add:
            if p.id in remove or p.id not in live:
                live[p.id] = p.abstract
            else:
                live[p.id] = p.abstract
    return h.close()


if __name__ == "__main__":
    main(run)
