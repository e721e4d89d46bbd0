"""Compare two citegraph graph.db files with the sqlite3 module alone (no citegraph code).

Based on docs/probes/probe12/dbdump.py, extended with the `names` table, the FTS rows
and a check of each file's kept counts against its tables.

python compare.py A.db B.db   -> "SAME" (exit 0) or the differences (exit 1)
python compare.py A.db        -> a summary (counts_ok, dangling, integrity), exit 1 if bad

Node props are compared without `source` (a server add says "api:addPapers[i]", a file
its path). Edges: every attr and the weight exactly. Vectors: byte for byte.
"""
from __future__ import annotations

import json
import sqlite3
import sys


def load(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        nodes = {i: (k, json.loads(p)) for i, k, p in db.execute("select id, kind, props from nodes")}
        edges = {(s, t, ty): (w, json.loads(a) if a else None)
                 for s, t, ty, w, a in db.execute("select source, target, type, weight, attrs from edges")}
        emb = {i: (d, bytes(v)) for i, d, v in db.execute("select id, dim, vector from embeddings")}
        meta = dict(db.execute("select key, value from meta"))
        names = set(db.execute("select key, id from names"))
        fts_n = set(db.execute("select id, kind, name, title from search_names"))
        fts_b = set(db.execute("select id, kind, abstract from search_body"))
        sids = set(r[0] for r in db.execute("select id from search_ids"))
        ic = db.execute("pragma integrity_check").fetchone()[0]
        seq = db.execute("select max(seq) from commits").fetchone()[0]
    finally:
        db.close()
    return dict(nodes=nodes, edges=edges, emb=emb, meta=meta, names=names, fts_n=fts_n,
                fts_b=fts_b, sids=sids, ic=ic, seq=seq)


def summary(path):
    g = load(path)
    n, e = {}, {}
    for k, _ in g["nodes"].values():
        n[k] = n.get(k, 0) + 1
    for (_, _, ty) in g["edges"]:
        e[ty] = e.get(ty, 0) + 1
    kept = json.loads(g["meta"].get("counts", "{}"))
    kn = {k: v for k, v in kept.get("nodes", {}).items() if v}
    ke = {k: v for k, v in kept.get("edges", {}).items() if v}
    dangling = [k for k in g["edges"] if k[0] not in g["nodes"] or k[1] not in g["nodes"]]
    orphan = [i for i in g["emb"] if i not in g["nodes"]]
    novec = [i for i, (k, _) in g["nodes"].items() if k == "Paper" and i not in g["emb"]]
    ok = kn == n and ke == e and g["ic"] == "ok" and not dangling and not orphan and not novec
    return {"ok": ok, "seq": g["seq"], "nodes": n, "edges": e, "kept": kept,
            "integrity": g["ic"], "dangling": len(dangling), "orphan_vectors": len(orphan),
            "papers_without_vector": len(novec), "search_ids": len(g["sids"]),
            "nodes_total": len(g["nodes"])}


def _strip(nodes, ignore):
    return {i: (k, {x: y for x, y in p.items() if x not in ignore}) for i, (k, p) in nodes.items()}


def compare(a, b, ignore=("source",)):
    A, B = load(a), load(b)
    na, nb = _strip(A["nodes"], ignore), _strip(B["nodes"], ignore)
    out = []
    if set(na) != set(nb):
        out.append(f"nodes only in A ({len(set(na)-set(nb))}): {sorted(set(na)-set(nb))[:10]!r} "
                   f"only in B ({len(set(nb)-set(na))}): {sorted(set(nb)-set(na))[:10]!r}")
    nd = [i for i in sorted(set(na) & set(nb)) if na[i] != nb[i]]
    if nd:
        out.append(f"{len(nd)} nodes differ, e.g.:")
    for i in nd[:8]:
        da, db_ = na[i][1], nb[i][1]
        keys = sorted(k for k in set(da) | set(db_) if da.get(k) != db_.get(k))
        out.append(f"  node {i!r} differs in {keys}: A={[da.get(k) for k in keys]!r:.300} "
                   f"B={[db_.get(k) for k in keys]!r:.300}")
    ea, eb = A["edges"], B["edges"]
    if set(ea) != set(eb):
        oa, ob = sorted(set(ea) - set(eb)), sorted(set(eb) - set(ea))
        out.append(f"edges only in A ({len(oa)}): {oa[:8]!r}; only in B ({len(ob)}): {ob[:8]!r}")
        types = {}
        for k in oa:
            types.setdefault(("A", k[2]), 0)
            types[("A", k[2])] += 1
        for k in ob:
            types.setdefault(("B", k[2]), 0)
            types[("B", k[2])] += 1
        out.append(f"  by type: {types}")
    diffs = [k for k in sorted(set(ea) & set(eb)) if ea[k] != eb[k]]
    if diffs:
        bytype = {}
        for k in diffs:
            bytype[k[2]] = bytype.get(k[2], 0) + 1
        out.append(f"{len(diffs)} edges differ in weight/attrs ({bytype}), e.g.:")
        for k in diffs[:6]:
            wa, aa = ea[k]
            wb, ab = eb[k]
            keys = sorted(x for x in set(aa or {}) | set(ab or {})
                          if (aa or {}).get(x) != (ab or {}).get(x))
            out.append(f"   {k!r}: w {wa} vs {wb}; attrs {keys}: "
                       f"{[(aa or {}).get(x) for x in keys]!r:.300} vs {[(ab or {}).get(x) for x in keys]!r:.300}")
    va, vb = A["emb"], B["emb"]
    if set(va) != set(vb):
        out.append(f"vector ids differ: only A {sorted(set(va)-set(vb))[:5]!r} only B {sorted(set(vb)-set(va))[:5]!r}")
    vd = [i for i in set(va) & set(vb) if va[i] != vb[i]]
    if vd:
        out.append(f"{len(vd)} vectors differ, e.g. {sorted(vd)[:5]!r}")
    for key, label in (("names", "names rows"), ("fts_n", "search_names rows"),
                       ("fts_b", "search_body rows"), ("sids", "search_ids ids")):
        if A[key] != B[key]:
            oa, ob = A[key] - B[key], B[key] - A[key]
            out.append(f"{label}: only A {len(oa)} {sorted(oa, key=repr)[:4]!r:.400}; "
                       f"only B {len(ob)} {sorted(ob, key=repr)[:4]!r:.400}")
    for k in ("embedding_model", "link_settings"):
        if A["meta"].get(k) != B["meta"].get(k):
            out.append(f"meta {k}: {A['meta'].get(k)!r} vs {B['meta'].get(k)!r}")
    for path in (a, b):
        s = summary(path)
        if not s["ok"]:
            out.append(f"{path}: self-check failed: {json.dumps(s)}")
    return out


if __name__ == "__main__":
    if len(sys.argv) == 2:
        s = summary(sys.argv[1])
        print(json.dumps(s))
        sys.exit(0 if s["ok"] else 1)
    d = compare(sys.argv[1], sys.argv[2])
    print("SAME" if not d else "DIFFERENT\n" + "\n".join(d))
    sys.exit(0 if not d else 1)
