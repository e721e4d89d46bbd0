"""The CLI's printed counts and the commit summary, SIMILAR_TO in pieces vs whole."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def run(d: Path, piece: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    e.pop("P13_PIECE", None)
    if piece:
        e["P13_PIECE"] = piece
    return subprocess.run([PY, str(ROOT / "probe" / "killpart.py"), "none", "0", "raise",
                           "--data-dir", str(d), *args], capture_output=True, text=True, env=e,
                          timeout=240)


KEYS = ("papers_read", "added", "removed", "updated", "embedded", "nodes_written",
        "edges_written", "nodes_deleted", "edges_deleted", "stats", "duplicates")


def main() -> None:
    out = {}
    for piece in (None, "1", "7", "40"):
        d = Path(f"/tmp/p13-counts-{piece}")
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree("/tmp/p13-kill/base", d, ignore=shutil.ignore_patterns("*.lock"))
        rows = []
        for args in (("build", "/tmp/p13-kill/b.jsonl"), ("add", "/tmp/p13-kill/extra.jsonl"),
                     ("remove", "p-87f1a892e478", "p-f2249745db79"),
                     ("build", "/tmp/p13-kill/a.jsonl")):
            r = run(d, piece, *args, "--json")
            assert r.returncode == 0, r.stderr[-2000:]
            rep = json.loads(r.stdout)
            rows.append({k: rep.get(k) for k in KEYS})
        db = sqlite3.connect(d / "graph.db")
        rows.append([s for (s,) in db.execute("SELECT summary FROM commits ORDER BY seq")])
        db.close()
        out[piece] = rows
    base = out[None]
    for piece, rows in out.items():
        for i, (a, b) in enumerate(zip(base, rows)):
            if a != b:
                print(f"piece={piece} step {i}: differs\n  whole: {a}\n  piece: {b}")
    print("compared", list(out))


if __name__ == "__main__":
    main()
