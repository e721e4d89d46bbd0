"""A digest of an embedded graph's contents (nodes, edges with attrs, vectors, counts),
read with the sqlite3 module alone: python docs/probes/probe13/digest.py graph.db"""
from __future__ import annotations

import hashlib
import sqlite3
import sys


def digest(path: str) -> dict[str, object]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out: dict[str, object] = {}
        for name, q in [
            ("nodes", "SELECT id, kind, props FROM nodes ORDER BY id"),
            ("edges", "SELECT source, target, type, weight, attrs FROM edges ORDER BY source, target, type"),
            ("vectors", "SELECT id, dim, vector FROM embeddings ORDER BY id"),
            ("meta", "SELECT key, value FROM meta WHERE key NOT IN ('version') ORDER BY key"),
        ]:
            h = hashlib.sha256()
            n = 0
            for row in db.execute(q):
                h.update(repr(row).encode())
                n += 1
            out[name] = (n, h.hexdigest()[:16])
        out["commits"] = db.execute("SELECT count(*) FROM commits").fetchone()[0]
        out["edge_types"] = dict(db.execute("SELECT type, count(*) FROM edges GROUP BY type"))
        return out
    finally:
        db.close()


if __name__ == "__main__":
    import json
    print(json.dumps(digest(sys.argv[1]), sort_keys=True))
