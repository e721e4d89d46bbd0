"""Trial 6: CITES through the server's region path and CLI writes at 3k papers: references
by id, NFD spelling, title (other case), to papers not there yet; the cited paper removed
and re-added; a title moved to another paper; a second holder of a title with a higher id;
references updated. Server memory vs file after each step; the final file vs a rebuild.

python t6_cites.py BASE_DIR WORK_DIR PORT
"""
import json
import shutil
import sqlite3
import sys
import time
from pathlib import Path

from lib17 import ADD, REMOVE, Expect, Server, cli, log, rebuild_and_compare, write_jsonl
from server_view import server_matches_db

base_dir, work, port = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
data = Path("/work/p17/data")
held = json.loads((data / "held.json").read_text())
base = [json.loads(l) for l in open(data / "base.jsonl", encoding="utf-8")]
trial = work / "t6"
if trial.exists():
    shutil.rmtree(trial)
shutil.copytree(base_dir, trial)
exp = Expect(base)
A, B, Dp = base[1000], base[1001], base[1002]
H = held
views = []


def cites():
    db = sqlite3.connect(f"file:{trial/'graph.db'}?mode=ro", uri=True)
    out = sorted(db.execute("select source, target from edges where type='CITES'"))
    db.close()
    return out


def step(srv, label, kind, arg):
    if kind == "S-add":
        got = srv.gql(ADD, {"p": arg})
        ok = "errors" not in got and "http_error" not in got
        if ok:
            for r in arg:
                exp.add(r)
        log(f"{label} S-add {[r['id'][:14] for r in arg]} -> {json.dumps(got.get('data', got))[:250]}")
    elif kind == "S-rm":
        got = srv.gql(REMOVE, {"id": arg})
        ok = "errors" not in got and "http_error" not in got
        if ok:
            exp.remove(arg)
        log(f"{label} S-rm {arg} -> {json.dumps(got.get('data', got))[:200]}")
    elif kind == "C-add":
        f = work / f"t6-{label}.jsonl"
        write_jsonl(f, arg)
        rc, out, err, dt = cli(trial, "add", str(f))
        if rc == 0:
            for r in arg:
                exp.add(r)
        log(f"{label} C-add {[r['id'][:14] for r in arg]} rc={rc} {[l for l in (out+err).splitlines() if 'Added' in l or 'error' in l or 'skipped' in l]}")
    elif kind == "C-rm":
        rc, out, err, dt = cli(trial, "remove", *arg)
        if rc == 0:
            for i in arg:
                exp.remove(i)
        log(f"{label} C-rm {arg} rc={rc}")
    time.sleep(1.0)
    d = server_matches_db(srv.url(""), trial / "graph.db")
    views.append((label, d))
    log(f"   CITES now {cites()}; server view {'== file' if not d else 'DIFFERENT ' + '; '.join(d)[:400]}")


C1 = dict(H[0], id="citer-1", references=[A["id"], B["title"].upper(), "cafe\u0301-cited", H[1]["id"], "K-cite"])
C2 = dict(H[2], id="citer-2", references=[B["title"], Dp["id"]])
steps = [
    ("S-add", [C1]),                                   # cites A, B (by title), nothing else yet
    ("S-add", [dict(H[1])]),                           # H1 appears: C1 -> H1
    ("C-add", [dict(H[3], id="caf\u00e9-cited")]),     # NFC id; C1 gave the NFD spelling
    ("S-add", [dict(H[4], id="\u212a-cite")]),         # Kelvin id; C1 gave ASCII "K-cite"
    ("S-rm", B["id"]),                                 # C1 -> B goes
    ("C-add", [B]),                                    # B back (CLI): C1 -> B again
    ("S-add", [C2]),
    ("S-add", [dict(Dp, title=B["title"])]),           # D takes B's title: two holders
    ("S-add", [dict(B, title=B["title"] + " (revised)")]),  # B moves away from the title
    ("C-rm", [Dp["id"]]),                              # the title's holder gone
    ("S-add", [dict(H[5], id="zzz-" + B["id"], title=B["title"].lower())]),  # a higher id holds it
    ("S-add", [dict(C1, references=[H[1]["id"]])]),    # C1's references updated
    ("S-rm", H[1]["id"]),
    ("S-add", [dict(H[1])]),
]
srv = Server(trial, port, work / "t6-server.log")
try:
    srv.wait_ready()
    time.sleep(3)
    for i, (kind, arg) in enumerate(steps):
        step(srv, f"c{i}", kind, arg)
finally:
    srv.stop()
diffs = rebuild_and_compare(trial, exp, work, "t6")
print("T6 RESULT", "SAME" if not diffs else "DIFFERENT", "views differing:", sum(1 for v in views if v[1]), "of", len(views))
