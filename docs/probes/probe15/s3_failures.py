"""Scenario 3: writes that fail (store apply raises before writing; extraction raises;
embedding raises; region computation raises) between other writes."""
from harness import S, SEED_PAPERS, P, Harness, main
from texts import H


def run() -> int:
    h = Harness("s3")
    h.write("build", add=[S(i) for i in range(24)] + [P("h0", H[0]), P("h1", H[1])],
            replace=True)
    sid = [p.id for p in SEED_PAPERS]
    h.write("add h2", add=[P("h2", H[2])])
    # a failing store write that moves text holders: s1 removed, its text under new id
    h.write("FAIL: remove s1 + s1 text as mv1", add=[S(1, "mv1")], remove=[sid[1]], fail_store=1)
    h.write("s1's text as mv2 (must be a duplicate: s1 still holds it)", add=[S(1, "mv2")])
    h.write("retry remove s1 + mv1", add=[S(1, "mv1")], remove=[sid[1]])
    # failing update to a free text, then another paper takes that text
    h.write("FAIL: h0 -> H3", add=[P("h0", H[3])], fail_store=1)
    h.write("h1 -> H3 (free: h0's update failed)", add=[P("h1", H[3])])
    h.write("h0 -> H1 (free now)", add=[P("h0", H[1])])
    # two failures in a row, then a big mixed write
    h.write("FAIL x1: add s30..s33", add=[S(i) for i in range(30, 34)], fail_store=1)
    h.write("FAIL x2: remove h2", remove=["h2"], fail_store=1)
    h.write("add s30..s33 + remove h2", add=[S(i) for i in range(30, 34)], remove=["h2"])

    # extraction raising (before the region change: the state is kept)
    real = h.long.extract_all

    def boom(papers, **k):
        if papers:
            raise RuntimeError("probe: extractor down")
        return real(papers, **k)
    h.long.extract_all = boom
    h.write("FAIL(extract): add h4 + remove s3 + s3 text as mv3",
            add=[P("h4", H[4]), S(3, "mv3")], remove=[sid[3]], expect_error=True)
    h.long.extract_all = real
    h.write("s3 text as mv4 (s3 still holds it)", add=[S(3, "mv4")])
    h.write("add h4", add=[P("h4", H[4])])

    # embedding raising
    real_embed = h.long.embed_all
    def eboom(*a, **k):
        raise RuntimeError("probe: embedder down")
    h.long.embed_all = eboom
    h.write("FAIL(embed): h5 new + h4 -> H6", add=[P("h5", H[5]), P("h4", H[6])],
            expect_error=True)
    h.long.embed_all = real_embed
    h.write("h6 gets H6 (h4 kept H4)", add=[P("h6", H[6])])
    h.write("h4 -> H5 ; h5 new with H4 text", add=[P("h4", H[5]), P("h5", H[4])])

    # region computation raising mid-way (after the resolver moved)
    import graph.build as gb
    real_rc = gb.region_change
    def rboom(*a, **k):
        raise RuntimeError("probe: region down")
    gb.region_change = rboom
    h.write("FAIL(region): remove s4 + its text as mv5", add=[S(4, "mv5")], remove=[sid[4]],
            expect_error=True)
    gb.region_change = real_rc
    h.write("s4's text as mv6 (dup)", add=[S(4, "mv6")])
    h.write("remove s4 + mv5", add=[S(4, "mv5")], remove=[sid[4]])
    for i in range(34, 40):
        h.write(f"add s{i}", add=[S(i)])
    h.write("FAIL: remove mv5 + s4 back", add=[S(4)], remove=["mv5"], fail_store=1)
    h.write("remove mv5 + s4 back", add=[S(4)], remove=["mv5"])
    return h.close()


if __name__ == "__main__":
    main(run)
