"""Trial 8: SIMILAR_TO pools and CSLS hubs through the server's region path at 3k:
a cluster of near-copies of one paper added (they enter each other's lists and move
hubs), topic swaps (a paper's abstract replaced by another topic's, and back), the
cluster's origin removed, copies updated, one CLI write in between. Server memory vs
file, and the file vs a rebuild, in the middle and at the end.

python t8_similar_stress.py BASE_DIR WORK_DIR PORT
"""
import json
import shutil
import sys
import time
from pathlib import Path

from lib17 import ADD, REMOVE, Expect, Server, cli, log, rebuild_and_compare, write_jsonl
from server_view import server_matches_db

base_dir, work, port = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
data = Path("/work/p17/data")
held = json.loads((data / "held.json").read_text())
base = [json.loads(l) for l in open(data / "base.jsonl", encoding="utf-8")]
trial = work / "t8"
if trial.exists():
    shutil.rmtree(trial)
shutil.copytree(base_dir, trial)
exp = Expect(base)
O = base[2000]  # the cluster's origin
S1, S2, S3 = base[2100], base[2200], base[2300]  # papers whose topics get swapped
extra = ["We add an ablation.", "Code is released.", "We study robustness too.",
         "Results hold on larger models.", "We discuss limitations.", "A theoretical bound is given."]
cluster = [dict(O, id=f"copy-{j}", title=f"{O['title']} (copy {j})",
                abstract=O["abstract"] + " " + extra[j]) for j in range(6)]
views, bad = [], []


def s_add(recs, label):
    got = srv.gql(ADD, {"p": recs})
    ok = "errors" not in got and "http_error" not in got
    if ok:
        for r in recs:
            exp.add(r)
    log(f"{label} S-add {[r['id'][:12] for r in recs]} -> {json.dumps(got.get('data', got))[:240]}")


def s_rm(pid, label):
    got = srv.gql(REMOVE, {"id": pid})
    if "errors" not in got:
        exp.remove(pid)
    log(f"{label} S-rm {pid} -> {json.dumps(got.get('data', got))[:200]}")


def view(label):
    time.sleep(1)
    d = server_matches_db(srv.url(""), trial / "graph.db")
    views.append((label, d))
    log(f"  view {label}: {'== file' if not d else d}")


srv = Server(trial, port, work / "t8-server.log")
mid = []
try:
    srv.wait_ready()
    time.sleep(3)
    s_add(cluster[:3], "s0")
    s_add(cluster[3:4], "s1")
    s_add([dict(S1, abstract=held[50]["abstract"] + " Swapped topic one.")], "s2")
    s_add([dict(S2, abstract=held[51]["abstract"] + " Swapped topic two.")], "s3")
    s_rm(O["id"], "s4")
    view("s4")
    s_add([dict(cluster[0], abstract=cluster[0]["abstract"] + " Updated once.")], "s5")
    s_add([dict(S1)], "s6")  # S1 back to its own abstract
    f = work / "t8-c.jsonl"
    write_jsonl(f, [cluster[4], dict(S3, abstract=held[52]["abstract"] + " Swapped topic three.")])
    rc, out, err, _ = cli(trial, "add", str(f))
    log(f"s7 C-add rc={rc} {[l for l in out.splitlines() if 'Added' in l]}")
    if rc == 0:
        exp.add(cluster[4])
        exp.add(dict(S3, abstract=held[52]["abstract"] + " Swapped topic three."))
    s_add([cluster[5]], "s8")  # the server after a CLI write: whole path, then region
    s_add([O], "s9")          # the origin back
    view("s9")
    mid = rebuild_and_compare(trial, exp, work, "t8-mid")
    s_rm("copy-1", "s10")
    s_rm("copy-2", "s11")
    s_add([dict(S2)], "s12")
    s_add([dict(S3)], "s13")
    s_rm("copy-0", "s14")
    s_add([dict(cluster[1], abstract=held[53]["abstract"] + " A copy no more.")], "s15")
    view("s15")
finally:
    srv.stop()
diffs = rebuild_and_compare(trial, exp, work, "t8")
print("T8 RESULT", "SAME" if not diffs and not mid else "DIFFERENT", "mid:", "SAME" if not mid else "DIFFERENT",
      "views differing:", sum(1 for v in views if v[1]), "of", len(views))
