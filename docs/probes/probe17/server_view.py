"""Does a running server's in-memory graph equal its graph.db? Its whole-graph export
(/export/cytoscape.json) against the file's nodes and edges (ids, types, weights).

Used by t5_view.py; importable: server_matches_db(url_base, db_path) -> list of differences.
"""
import json
import sqlite3
import urllib.request


def server_matches_db(base_url, db_path, tol=1e-6):
    with urllib.request.urlopen(base_url + "/export/cytoscape.json", timeout=300) as r:
        data = json.loads(r.read())
    els = data["elements"]
    s_nodes = {n["data"]["id"] for n in els["nodes"]}
    s_edges = {}
    for e in els["edges"]:
        d = e["data"]
        s_edges[(d["source"], d["target"], d["type"])] = d.get("weight")
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    d_nodes = {i for (i,) in db.execute("select id from nodes")}
    d_edges = {(s, t, ty): w for s, t, ty, w in db.execute("select source, target, type, weight from edges")}
    db.close()
    out = []
    if s_nodes != d_nodes:
        out.append(f"nodes: only server {sorted(s_nodes - d_nodes)[:5]!r} ({len(s_nodes - d_nodes)}), "
                   f"only db {sorted(d_nodes - s_nodes)[:5]!r} ({len(d_nodes - s_nodes)})")
    if set(s_edges) != set(d_edges):
        a, b = set(s_edges) - set(d_edges), set(d_edges) - set(s_edges)
        out.append(f"edges: only server {sorted(a)[:5]!r} ({len(a)}), only db {sorted(b)[:5]!r} ({len(b)})")
    wd = [k for k in set(s_edges) & set(d_edges)
          if s_edges[k] is None or abs(s_edges[k] - d_edges[k]) > tol]
    if wd:
        out.append(f"{len(wd)} weights differ, e.g. {[(k, s_edges[k], d_edges[k]) for k in sorted(wd)[:3]]!r}")
    return out
