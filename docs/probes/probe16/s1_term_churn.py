"""Scenario 1: the same terms moved again and again on one long-lived pipeline (the
DeltaSet view of a term's set applied in place at each commit, PaperColumns' kept numbers
carried over), compared after every write with a one-shot reference and a full rebuild,
and the region state audited (harness16.Harness.audit).

Usage: s1_term_churn.py [wide]   (wide: SHARES_TERM links terms up to 60% of the corpus,
top 2 per paper, so more terms link and ties at the k-th weight are common)"""
import sys

from atoms import ATOMS
from harness16 import S, P, Harness, main


def T(*atoms: int) -> str:
    return " ".join(ATOMS[a] for a in atoms)


def run() -> int:
    wide = len(sys.argv) > 1 and sys.argv[1] == "wide"
    over = ({"shared_term_top_k": 2, "shared_term_min_weight": 0.05,
             "shared_term_max_df": 0.6, "similar_k": 3} if wide else {})
    h = Harness("s1" + ("-wide" if wide else ""), overrides=over)
    base = {
        "a": T(0, 1), "b": T(7, 8), "c": T(0, 10), "d": T(2, 3), "e": T(4, 5),
        "f": T(6, 9), "g": T(10, 11), "h": T(0, 2, 12), "i": T(1, 13), "j": T(3, 5, 8),
        "k": T(0, 11), "l": T(10, 12), "m": T(2, 6), "n": T(9, 13),
    }
    h.write("build", add=[P(k, v) for k, v in base.items()] + [S(i) for i in range(8)],
            replace=True)
    # 1. one paper's terms back and forth, write after write
    for i, atoms in enumerate([(2, 3), (0, 1), (0, 2), (0, 1), (2, 3), (0, 1)]):
        h.write(f"a -> atoms {atoms} ({i})", add=[P("a", T(*atoms))])
    # 2. a term held by one paper (speculative decoding: b) emptied and re-created in one
    #    write, both orders of the ids (the change walks the moved papers in set order)
    h.write("remove b + new b2 with b's term 7", add=[P("b2", T(7, 13))], remove=["b"])
    h.write("b2 drops 7, a0 (new) takes 7", add=[P("b2", T(13)), P("a0", T(7))])
    h.write("a0 drops 7, zz takes 7", add=[P("a0", T(6)), P("zz", T(7, 6))])
    # 3. emptied in one write, re-created in the next, emptied again
    h.write("zz drops 7 (term gone)", add=[P("zz", T(6))])
    h.write("b back with 7", add=[P("b", T(7, 8))])
    h.write("remove b (7 gone again)", remove=["b"])
    h.write("b again, same text", add=[P("b", T(7, 8))])
    # 4. removed and re-added: next write, and within one write (with the same and
    #    another text)
    h.write("remove c", remove=["c"])
    h.write("re-add c", add=[P("c", T(0, 10))])
    h.write("remove+add c, same text", add=[P("c", T(0, 10))], remove=["c"])
    h.write("remove+add c, other terms", add=[P("c", T(11, 12))], remove=["c"])
    h.write("remove+add c, back", add=[P("c", T(0, 10))], remove=["c"])
    # 5. many papers in and out of one term (neural network: atoms 0 and 10) at once
    h.write("5 papers join neural network",
            add=[P(x, T(*({0: (0,), 1: (10,)}[i % 2]), 13 - i)) for i, x in
                 enumerate(["d", "e", "f", "m", "n"])])
    h.write("they leave again", add=[P("d", T(2, 3)), P("e", T(4, 5)), P("f", T(6, 9)),
                                     P("m", T(2, 6)), P("n", T(9, 13))])
    h.write("they join again + a,c,g,h,k leave",
            add=[P(x, T(0, 13 - i)) for i, x in enumerate(["d", "e", "f", "m", "n"])]
            + [P("a", T(1)), P("c", T(12)), P("g", T(11)), P("h", T(2, 12)), P("k", T(11))])
    h.write("swap back", add=[P(k, base[k]) for k in "acdefghkmn"])
    # 6. every holder of a term removed while one paper gains it (in one write)
    h.write("remove a,c,h,k (holders of 'graph'), l gains atom 0",
            remove=["a", "c", "h", "k"], add=[P("l", T(0, 10, 12))])
    h.write("re-add a,c,h,k", add=[P(k, base[k]) for k in "achk"])
    # 7. the same paper updated twice in a row to each other's terms, with another paper
    #    moving the other way in the same write
    for r in range(4):
        x, y = ("g", "l") if r % 2 == 0 else ("l", "g")
        h.write(f"{x}<->{y} swap terms ({r})", add=[P(x, T(10, 12)), P(y, T(10, 11))]
                if r % 2 == 0 else [P(x, T(10, 11)), P(y, T(10, 12))])
    # 8. a title-only update (no term moves) then a text update of that paper
    h.write("title only", add=[P("j", base["j"], "Another title")])
    h.write("j text", add=[P("j", T(3, 5))])
    h.write("j back", add=[P("j", base["j"], "Another title")])
    # 9. the corpus shrinks a lot (the linking cap moves: many terms change status) and
    #    grows back
    gone = ["d", "e", "f", "g", "i", "j", "l", "m", "n", "zz", "a0", "b2"]
    h.write("remove 12", remove=gone)
    h.write("re-add them", add=[P(k, base[k]) for k in gone if k in base]
            + [P("zz", T(6)), P("a0", T(6)), P("b2", T(13))])
    # 10. a paper's terms moved three times, every other paper touching the same terms
    for r in range(3):
        h.write(f"churn {r}", add=[P("a", T(r, r + 1)), P("b", T(r + 1, r + 2)),
                                   P("c", T(r + 2, 0)), P(f"n{r}", T(r, r + 2))],
                remove=[f"n{r - 1}"] if r else [])
    return h.close()


if __name__ == "__main__":
    main(run)
