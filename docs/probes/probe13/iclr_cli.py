"""ICLR 2021 (first N rows) through the CLI: a build with SIMILAR_TO whole and one in
pieces of P edges, then a rebuild over a changed corpus and an add; digests compared,
the Time: line's stages summed against its total."""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from probe.digest import digest

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
SRC = Path("/work/shared/data/iclr2021/paperlist.tsv")
W = Path("/tmp/p13-iclr-cli")


def run(d: Path, piece: str | None, *args: str) -> dict:
    e = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    e.pop("P13_PIECE", None)
    if piece:
        e["P13_PIECE"] = piece
    r = subprocess.run([PY, str(ROOT / "probe" / "killpart.py"), "none", "0", "raise",
                        "--data-dir", str(d), *args, "--json"], capture_output=True, text=True,
                       env=e, timeout=280)
    assert r.returncode in (0, 3), r.stderr[-2000:]
    return json.loads(r.stdout)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    piece = sys.argv[2] if len(sys.argv) > 2 else "13"
    shutil.rmtree(W, ignore_errors=True)
    W.mkdir()
    rows = list(csv.reader(SRC.open(), delimiter="\t"))
    head, body = rows[0], rows[1:]

    def tsv(name: str, part: list) -> Path:
        p = W / name
        with p.open("w", newline="") as f:
            w = csv.writer(f, delimiter="\t")
            w.writerow(head)
            w.writerows(part)
        return p

    first = tsv("first.tsv", body[:n])
    second = tsv("second.tsv", body[n // 4: n + n // 10])
    more = tsv("more.tsv", body[n + n // 10: n + n // 10 + 20])
    digests = {}
    for p in (None, piece):
        d = W / f"d-{p}"
        (d / "cache").mkdir(parents=True)
        shutil.copy("/tmp/p13-iclr-cache/embeddings.sqlite", d / "cache" / "embeddings.sqlite")
        out = []
        for args in (("build", str(first)), ("build", str(second)), ("add", str(more))):
            rep = run(d, p, *args)
            st = rep["stage_seconds"]
            parts = sum(v for k, v in st.items() if k != "total")
            out.append(digest(str(d / "graph.db")))
            print(f"piece={p} {args[0]} {Path(args[1]).name}: read={rep['papers_read']} "
                  f"embedded={rep['embedded']} nodes_written={rep['nodes_written']} "
                  f"edges_written={rep['edges_written']} edges_deleted={rep['edges_deleted']} "
                  f"stages_sum={parts:.2f} total={st['total']:.2f} stats={rep['stats']['edges']}",
                  flush=True)
        digests[p] = out
    for i, (a, b) in enumerate(zip(digests[None], digests[piece])):
        sa = {k: v for k, v in a.items() if k != "commits"}
        sb = {k: v for k, v in b.items() if k != "commits"}
        print("step", i, "equal" if sa == sb else f"DIFF\n {a}\n {b}")


if __name__ == "__main__":
    main()
