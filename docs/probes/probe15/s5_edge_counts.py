"""Scenario 5: the embedded store's kept edge counts (_held_edges: one SELECT per 300
keys) after writes whose changes upsert many already-held edges (title updates of many
papers at once: >300 edge keys), removes, re-adds; checked against COUNT(*) by type and
against the full-rebuild comparison."""
import sqlite3

from harness import S, SEED_PAPERS, P, Harness, main
from graph.store.embedded import EmbeddedStore


def counts_ok(h: Harness, label: str) -> None:
    path = h.dir / "long.db"
    sql = EmbeddedStore(path, reads="sql")
    try:
        kept = {k: v for k, v in sql.stats().edges.items() if v}
    finally:
        sql.close()
    db = sqlite3.connect(path)
    real = dict(db.execute("SELECT type, COUNT(*) FROM edges GROUP BY type").fetchall())
    db.close()
    if kept != real:
        h.bad(label, f"kept edge counts {kept} != COUNT(*) {real}")
    else:
        print(f"   counts ok: {real}")


def run() -> int:
    h = Harness("s5")
    n = 50
    h.write("build 50", add=[S(i) for i in range(n)], replace=True); counts_ok(h, "build")
    h.write("retitle all 50", add=[S(i, title=f"Retitled study {i} of models") for i in range(n)])
    counts_ok(h, "retitle all")
    h.write("retitle all back + remove 5 + add 10",
            add=[S(i) for i in range(5, n)] + [S(i) for i in range(n, n + 10)],
            remove=[SEED_PAPERS[i].id for i in range(5)])
    counts_ok(h, "mixed")
    h.write("re-add 5 under new ids", add=[S(i, f"new{i}") for i in range(5)])
    counts_ok(h, "re-add")
    h.write("same again (all duplicates)", add=[S(i, f"new{i}") for i in range(5)])
    counts_ok(h, "dups")
    return h.close()


if __name__ == "__main__":
    main(run)
