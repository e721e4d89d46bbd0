"""Scenario 1: texts moved between ids, swaps, refused updates, same-batch ids, NFC/NFD."""
import unicodedata

from harness import S, SEED_PAPERS, P, Harness, main
from texts import H


def run() -> int:
    h = Harness("s1")
    base = [S(i) for i in range(24)] + [P(f"h{i}", H[i]) for i in range(4)]
    h.write("build", add=base, replace=True)
    sid = [SEED_PAPERS[i].id for i in range(30)]
    exp = {p.id: p.abstract for p in base}

    # remove a paper and re-add its text under a new id in the same write
    h.write("remove s1 + its text as moved1 (same write)", add=[S(1, "moved1")], remove=[sid[1]])
    exp.pop(sid[1]); exp["moved1"] = SEED_PAPERS[1].abstract
    # the moved one back under its old id in the next write, removing moved1 in it
    h.write("remove moved1 + s1 back (same write)", add=[S(1)], remove=["moved1"])
    exp.pop("moved1"); exp[sid[1]] = SEED_PAPERS[1].abstract
    # remove, then re-add the text under a new id in the NEXT write
    h.write("remove s2", remove=[sid[2]])
    exp.pop(sid[2])
    h.write("s2's text as moved2", add=[S(2, "moved2")])
    exp["moved2"] = SEED_PAPERS[2].abstract
    # and the old id again with the same text: a duplicate of moved2
    h.write("s2 back (dup of moved2)", add=[S(2)])
    h.expect_papers("after dup", exp)

    # swap texts of h0 and h1 across writes
    h.write("h0 -> h1's text (refused)", add=[P("h0", H[1])])
    h.expect_papers("refused", exp)
    h.write("h1 -> H4 text", add=[P("h1", H[4])]); exp["h1"] = H[4]
    h.write("h0 -> H1 (free now)", add=[P("h0", H[1])]); exp["h0"] = H[1]
    h.write("h1 -> H0 (free now)", add=[P("h1", H[0])]); exp["h1"] = H[0]
    h.expect_papers("after swap", exp)
    # swap back in ONE write (both refused: each text is the other's)
    h.write("swap h0<->h1 in one write", add=[P("h0", H[0]), P("h1", H[1])])
    h.expect_papers("one-write swap", exp)

    # update to another's text (refused), remove that other, retry
    h.write("h2 -> h3's text (refused)", add=[P("h2", H[3])])
    h.write("remove h3", remove=["h3"]); exp.pop("h3")
    h.write("h2 -> H3 retry", add=[P("h2", H[3])]); exp["h2"] = H[3]
    # the freed old text of h2 as a new id
    h.write("new id with h2's old text", add=[P("h2old", H[2])]); exp["h2old"] = H[2]
    # remove X and update Y to X's text in one write
    h.write("remove h2old + h2 -> H2 same write", add=[P("h2", H[2])], remove=["h2old"])
    exp.pop("h2old"); exp["h2"] = H[2]
    h.expect_papers("after retry", exp)
    # the text h2 left (H3) under a new id: must be added
    h.write("H3 under h3b", add=[P("h3b", H[3])]); exp["h3b"] = H[3]

    # an id twice in one batch; two new ids with one text; case-folded duplicate
    h.write("id twice in a batch", add=[P("twice", H[5]), P("twice", H[6])]); exp["twice"] = H[5]
    h.write("two new ids, one text", add=[P("one-a", H[7]), P("one-b", H[7])]); exp["one-a"] = H[7]
    h.write("case-folded dup of H7", add=[P("upper", H[7].upper())])
    h.write("one-a -> case-only change", add=[P("one-a", H[7].lower())]); exp["one-a"] = H[7].lower()
    h.write("title-only update of s5", add=[S(5, title="Protein folding with molecular dynamics")])
    h.write("same id, same text, same title (dup)", add=[S(5, title="Protein folding with molecular dynamics")])
    h.expect_papers("after batch dups", exp)

    # remove and re-add same id, new text, same write; same id same text same write
    h.write("remove s6 + s6 new text", add=[P(sid[6], H[8])], remove=[sid[6]]); exp[sid[6]] = H[8]
    h.write("remove s7 + s7 same text", add=[S(7)], remove=[sid[7]])
    # update s8 to moved2's text while removing moved2 in the same write, and moved2's id
    # re-added with s8's old text in the same write
    h.write("cross move s8<->moved2 via remove", add=[P(sid[8], SEED_PAPERS[2].abstract),
                                                     P("moved2", SEED_PAPERS[8].abstract)],
            remove=["moved2"])
    exp[sid[8]] = SEED_PAPERS[2].abstract; exp["moved2"] = SEED_PAPERS[8].abstract
    h.expect_papers("after cross move", exp)

    # NFC / NFD ids
    nfc = unicodedata.normalize("NFC", "café-1")
    nfd = unicodedata.normalize("NFD", "café-1")
    h.write("add café NFC", add=[P(nfc, H[9])]); exp[nfc] = H[9]
    h.write("update café via NFD id", add=[P(nfd, H[10])]); exp[nfc] = H[10]
    h.write("NFC and NFD in one batch", add=[P(nfd, H[11]), P(nfc, H[9])]); exp[nfc] = H[11]
    h.expect_papers("after NFC/NFD", exp)
    h.write("remove via NFD spelling", remove=[nfd], expect_error=False)
    h.write("NFD new id with H9 text + Kelvin", add=[P(unicodedata.normalize("NFD", "ñame"), H[9]),
                                                     P("\u212a-kelvin", H[10])])
    h.write("remove NFC café", remove=[nfc])
    h.write("re-add café (NFD) with H[11] text", add=[P(nfd, H[11])])
    h.write("remove two, re-add one's text under the other's id",
            add=[P("h0", H[1]), P(sid[9], SEED_PAPERS[9].abstract)], remove=["h1", sid[9]])
    return h.close()


if __name__ == "__main__":
    main(run)
