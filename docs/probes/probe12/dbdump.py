"""Canonical dump of a citegraph graph.db, read-only (sqlite3 module, no citegraph code).

python probe/dbdump.py DB            -> prints a digest + counts; exit 1 if kept counts != tables
python probe/dbdump.py DB1 DB2       -> compares two graphs (nodes, edges+attrs+weights, vectors)
"""
import hashlib, json, sqlite3, sys


def load(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    nodes = {i: (k, json.loads(p)) for i, k, p in db.execute("select id, kind, props from nodes")}
    edges = {(s, t, ty): (w, json.loads(a) if a else None)
             for s, t, ty, w, a in db.execute("select source, target, type, weight, attrs from edges")}
    emb = {i: (d, bytes(v)) for i, d, v in db.execute("select id, dim, vector from embeddings")}
    meta = dict(db.execute("select key, value from meta"))
    ic = db.execute("pragma integrity_check").fetchone()[0]
    seq = db.execute("select max(seq) from commits").fetchone()[0]
    db.close()
    return nodes, edges, emb, meta, ic, seq


def table_counts(nodes, edges):
    n, e = {}, {}
    for k, _ in nodes.values():
        n[k] = n.get(k, 0) + 1
    for (_, _, ty) in edges:
        e[ty] = e.get(ty, 0) + 1
    return n, e


def digest(nodes, edges, emb):
    h = hashlib.sha256()
    for i in sorted(nodes):
        h.update(json.dumps([i, nodes[i]], sort_keys=True).encode())
    for k in sorted(edges):
        h.update(json.dumps([k, edges[k]], sort_keys=True).encode())
    for i in sorted(emb):
        h.update(i.encode()); h.update(emb[i][1])
    return h.hexdigest()[:16]


def summary(path):
    nodes, edges, emb, meta, ic, seq = load(path)
    n, e = table_counts(nodes, edges)
    kept = json.loads(meta.get("counts", "{}"))
    kn = {k: v for k, v in kept.get("nodes", {}).items() if v}
    ke = {k: v for k, v in kept.get("edges", {}).items() if v}
    ok = kn == n and ke == e and ic == "ok"
    dangling = [k for k in edges if k[0] not in nodes or k[1] not in nodes]
    orphan_emb = [i for i in emb if i not in nodes]
    papers_wo_emb = [i for i, (k, _) in nodes.items() if k == "Paper" and i not in emb]
    return {"digest": digest(nodes, edges, emb), "seq": seq, "nodes": n, "edges": e,
            "embeddings": len(emb), "counts_ok": ok, "kept": kept, "integrity": ic,
            "dangling": len(dangling), "orphan_emb": len(orphan_emb),
            "papers_without_vector": len(papers_wo_emb)}


def compare(a, b, ignore=("source",)):
    na, ea, va, ma, _, _ = load(a)
    nb, eb, vb, mb, _, _ = load(b)
    for n in (na, nb):
        for i, (k, p) in list(n.items()):
            n[i] = (k, {x: y for x, y in p.items() if x not in ignore})
    out = []
    if set(na) != set(nb):
        out.append(f"nodes only in A: {sorted(set(na)-set(nb))[:10]} only in B: {sorted(set(nb)-set(na))[:10]}")
    nd = [i for i in sorted(set(na) & set(nb)) if na[i] != nb[i]]
    if nd:
        out.append(f"{len(nd)} nodes differ, e.g.:")
    for i in nd[:8]:
        if True:
            da, db_ = na[i][1], nb[i][1]
            keys = sorted(k for k in set(da) | set(db_) if da.get(k) != db_.get(k))
            out.append(f"node {i} differs in {keys}: A={[da.get(k) for k in keys]!r:.200} B={[db_.get(k) for k in keys]!r:.200}")
    if set(ea) != set(eb):
        oa, ob = sorted(set(ea) - set(eb)), sorted(set(eb) - set(ea))
        out.append(f"edges only in A ({len(oa)}): {oa[:8]}; only in B ({len(ob)}): {ob[:8]}")
    diffs = [k for k in sorted(set(ea) & set(eb)) if ea[k] != eb[k]]
    if diffs:
        out.append(f"{len(diffs)} edges differ in weight/attrs, e.g.:")
        for k in diffs[:5]:
            wa, aa = ea[k]; wb, ab = eb[k]
            keys = sorted(x for x in set(aa or {}) | set(ab or {}) if (aa or {}).get(x) != (ab or {}).get(x))
            out.append(f"   {k}: w {wa} vs {wb}; attrs {keys}: {[ (aa or {}).get(x) for x in keys]!r:.300} vs {[ (ab or {}).get(x) for x in keys]!r:.300}")
    if set(va) != set(vb):
        out.append(f"vector ids differ: only A {sorted(set(va)-set(vb))[:5]} only B {sorted(set(vb)-set(va))[:5]}")
    vd = [i for i in set(va) & set(vb) if va[i] != vb[i]]
    if vd:
        out.append(f"{len(vd)} vectors differ, e.g. {sorted(vd)[:5]}")
    for k in ("embedding_model", "link_settings"):
        if ma.get(k) != mb.get(k):
            out.append(f"meta {k}: {ma.get(k)!r} vs {mb.get(k)!r}")
    return out


if __name__ == "__main__":
    if len(sys.argv) == 2:
        s = summary(sys.argv[1])
        print(json.dumps(s))
        sys.exit(0 if s["counts_ok"] and not s["dangling"] and not s["orphan_emb"] else 1)
    d = compare(sys.argv[1], sys.argv[2])
    print("SAME" if not d else "DIFFERENT\n" + "\n".join(d))
    sys.exit(0 if not d else 1)
