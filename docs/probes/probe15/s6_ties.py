"""Scenario 6: SHARES_TERM ties at the k-th weight (top_k=2): papers sharing the same
terms (equal df, equal weights), added one per write in reverse id order (so the kept
PaperColumns numbering is not id order), removed and re-added (a removed number leaves a
hole; a re-added id keeps its number). Run with
PROBE15_OVERRIDES='{"shared_term_top_k": 2, "shared_term_min_weight": 0.01, "shared_term_max_df": 1.0}'"""
from harness import S, P, Harness, main

T = ("We study {x} with graph neural networks for citation link prediction and "
     "contrastive pretraining on scholarly knowledge graphs.")
TOPICS = ["sparse benchmarks", "noisy labels", "temporal splits", "cold-start authors",
          "multilingual venues", "long-tail fields", "dense retrieval", "scaling laws",
          "negative sampling", "node features"]


def run() -> int:
    h = Harness("s6")
    h.write("build", add=[S(i) for i in range(10)], replace=True)
    ids = [f"zz{i}" for i in range(len(TOPICS))]
    for i in reversed(range(len(TOPICS))):
        h.write(f"add {ids[i]}", add=[P(ids[i], T.format(x=TOPICS[i]))])
    h.write("remove zz3, zz5", remove=["zz3", "zz5"])
    h.write("re-add zz3 (new text) + aa0 with zz5's text",
            add=[P("zz3", T.format(x="graph sampling")), P("aa0", T.format(x=TOPICS[5]))])
    h.write("zz9 -> zz0's text (refused)", add=[P("zz9", T.format(x=TOPICS[0]))])
    h.write("remove zz0 + zz9 -> zz0's text", add=[P("zz9", T.format(x=TOPICS[0]))],
            remove=["zz0"])
    h.write("add a0..a2 in one batch (ids before every zz)",
            add=[P(f"a{i}", T.format(x=f"setting {i}")) for i in (2, 0, 1)])
    h.write("retitle zz4", add=[P("zz4", T.format(x=TOPICS[4]), "Citation link prediction")])
    h.write("remove a1 zz7 aa0", remove=["a1", "zz7", "aa0"])
    h.write("re-add zz7", add=[P("zz7", T.format(x=TOPICS[7]))])
    return h.close()


if __name__ == "__main__":
    main(run)
