"""Trial 7: which paper holds which text, moved by server (region) and CLI writes at 3k:
an update frees a text for a new id; an id taking a held text (or its case/punctuation
variant) is refused; a remove frees it. Each outcome is checked against what the docs
say; applied writes go into the expected corpus; the final file vs a rebuild.

python t7_text_holders.py BASE_DIR WORK_DIR PORT
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
base = [json.loads(l) for l in open(data / "base.jsonl", encoding="utf-8")]
trial = work / "t7"
if trial.exists():
    shutil.rmtree(trial)
shutil.copytree(base_dir, trial)
exp = Expect(base)
X, Y = base[1500], base[1501]
T = X["abstract"]
T2 = T + " We also evaluate on CIFAR-10."
TU = T.upper()
surprises = []


def s_add(rec, want, label):
    got = srv.gql(ADD, {"p": [rec]})
    d = got.get("data", {}).get("addPapers") if "errors" not in got else None
    applied = bool(d and (d["added"] or d["updated"]))
    if applied:
        exp.add(rec)
    log(f"{label} S-add {rec['id']}: applied={applied} want={want} {json.dumps(d or got)[:260]}")
    if applied != want:
        surprises.append(label)


def c_add(rec, want, label):
    f = work / f"t7-{label}.jsonl"
    write_jsonl(f, [rec])
    rc, out, err, _ = cli(trial, "add", str(f))
    applied = rc == 0 and any(("Added 1" in l or "updated 1" in l) for l in out.splitlines())
    if applied:
        exp.add(rec)
    log(f"{label} C-add {rec['id']}: rc={rc} applied={applied} want={want} "
        f"{[l for l in (out + err).splitlines() if 'Added' in l or 'skipped' in l or 'error' in l]}")
    if applied != want:
        surprises.append(label)


def s_rm(pid, label):
    got = srv.gql(REMOVE, {"id": pid})
    ok = "errors" not in got
    if ok:
        exp.remove(pid)
    log(f"{label} S-rm {pid}: ok={ok}")


def c_rm(pid, label):
    rc, out, err, _ = cli(trial, "remove", pid)
    if rc == 0:
        exp.remove(pid)
    log(f"{label} C-rm {pid}: rc={rc}")


srv = Server(trial, port, work / "t7-server.log")
try:
    srv.wait_ready()
    time.sleep(3)
    s_add(dict(X, abstract=T2), True, "h0")            # X: T -> T2 (frees T)
    s_add(dict(X, id="th-1"), True, "h1")              # a new id takes T
    c_add(dict(X, id="th-2", abstract=T2), False, "h2")  # T2 is X's: refused
    s_add(dict(X, id="th-3", abstract=TU), False, "h3")  # T's case variant: th-1 holds it
    s_rm("th-1", "h4")                                 # frees T (and its variants)
    c_add(dict(X, id="th-3", abstract=TU), True, "h5")   # now accepted
    s_add(dict(Y, abstract=T), False, "h6")            # Y to T: th-3 holds a variant
    s_add(dict(X, abstract=T), False, "h7")            # X back to T: th-3 holds its variant: refused
    c_rm("th-3", "h8")
    s_add(dict(X, abstract=T), True, "h9")             # X back to T
    s_add(dict(Y, id="th-4", abstract=T2), True, "h10")  # T2 free again
    time.sleep(1)
    d = server_matches_db(srv.url(""), trial / "graph.db")
    log("server view:", "== file" if not d else d)
finally:
    srv.stop()
diffs = rebuild_and_compare(trial, exp, work, "t7")
print("T7 RESULT", "SAME" if not diffs else "DIFFERENT", "outcomes other than my reading of the docs:", surprises)
