"""Trial 1: a server takes addPapers/removePaper, interleaved with `citegraph add`/`remove`
from another process on the same folder; hostile ids, updates, re-adds, removes of hub
papers. The server must see each CLI write within ~1 s. Then the stored graph must
equal a fresh build of the final papers.

python t1_serial.py BASE_DIR WORK_DIR PORT
"""
import json
import os
import shutil
import sqlite3
import sys
import time
from pathlib import Path

from lib17 import (ADD, PAPER, REMOVE, Expect, Server, cli, log, rebuild_and_compare,
                   write_jsonl)

from graph.ids import id_key
from graph.ingest import paper_from_record

base_dir, work, port = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
data = Path("/work/p17/data")
held = json.loads((data / "held.json").read_text())
base = [json.loads(l) for l in open(data / "base.jsonl", encoding="utf-8")]
by_id = {r["id"]: r for r in base}
label = "t1" + os.environ.get("P17_LABEL", "")
trial = work / label
if trial.exists():
    shutil.rmtree(trial)
shutil.copytree(base_dir, trial)
exp = Expect(base)

# hub papers: most MENTIONS of concepts that many papers mention
db = sqlite3.connect(f"file:{trial/'graph.db'}?mode=ro", uri=True)
deg = dict(db.execute("select target, count(*) from edges where type='MENTIONS' group by target"))
score = {}
for s, t in db.execute("select source, target from edges where type='MENTIONS'"):
    score[s] = score.get(s, 0) + deg.get(t, 0)
db.close()
hubs = sorted(score, key=lambda p: -score[p])[:4]
log("hub papers", [(h, score[h]) for h in hubs])


def rec(r, id_=None, extra=""):
    r = dict(r)
    if id_ is not None:
        r["id"] = id_
    if extra:
        r["abstract"] = r["abstract"] + " " + extra
    return r


H = held
KELVIN = "\u212a-kelvin-1"          # KELVIN SIGN; NFC is ASCII K
NFD_CAFE = "cafe\u0301-nfd"          # NFD spelling
NFC_CAFE = "caf\u00e9-nfd"
ANG = "\u212bngstr\u00f6m-1"         # ANGSTROM SIGN; NFC is U+00C5
ANG_NFC = "\u00c5ngstr\u00f6m-1"
TRAIL = "trail-1   "
LONG = "x" * 505 + "-e\u0301"        # 508 characters, NFD ending
B1, B2, B3 = base[100]["id"], base[200]["id"], base[300]["id"]

ops = [
    ("S-add", [rec(h) for h in H[0:5]]),
    ("S-add", [rec(H[5], KELVIN)]),
    ("C-add", [rec(H[6], NFD_CAFE), rec(H[7], TRAIL), rec(H[8], LONG)]),
    ("S-add", [rec(H[5], "K-kelvin-1", "We further evaluate on ImageNet with a ResNet-50 backbone.")]),
    ("S-add", [rec(H[9], ANG)]),
    ("C-rm", [NFC_CAFE]),
    ("C-rm", [ANG_NFC]),
    ("S-rm", hubs[0]),
    ("S-rm", hubs[1]),
    ("C-add", [rec(by_id[B1], extra="Experiments on CIFAR-10 and ImageNet confirm the gains of contrastive learning.")]),
    ("S-add", [rec(by_id[B2], extra="We also release a new benchmark, ProbeBench, for graph neural networks.")]),
    ("C-add", [rec(by_id[hubs[0]])]),                      # re-add a removed hub, same id and text
    ("S-add", [rec(H[9], ANG_NFC)]),                       # re-add under another spelling
    ("S-rm", "trail-1 "),
    ("C-add", [rec(h) for h in H[10:20]]),
    ("S-add", [rec(h) for h in H[20:30]]),
    ("S-rm", hubs[2]),
    ("S-rm", H[21]["id"]),
    ("S-add", [rec(by_id[B3], extra="Transformers trained with reinforcement learning from human feedback.")]),
    ("S-add", [rec(by_id[hubs[1]])]),                      # re-add hub 2 by the server
    ("C-rm", [hubs[3], H[0]["id"]]),
    ("C-add", [rec(H[5], KELVIN, "A second change: we also study self-supervised learning.")]),
    ("S-rm", LONG),
    ("S-add", [rec(H[30]), rec(H[31], "  padded-id-2  ")]),
    ("S-rm", "K-kelvin-1"),                                # remove the Kelvin paper by ASCII
    ("C-add", [rec(h) for h in H[32:36]]),
    ("S-add", [rec(by_id[B1], extra="Experiments on CIFAR-10 and ImageNet confirm the gains of contrastive learning. Code is public.")]),
]


def expected_abstract(r):
    return paper_from_record(r, source="x").abstract


def visible(srv, ref, present, abstract=None, timeout=5.0):
    t0 = time.time()
    while time.time() - t0 < timeout:
        got = srv.gql(PAPER, {"id": ref})
        p = (got.get("data") or {}).get("paper")
        if present and p is not None and (abstract is None or p["abstract"] == abstract):
            return time.time() - t0
        if not present and p is None and (
                "errors" not in got or "NOT_FOUND" in json.dumps(got.get("errors"))):
            return time.time() - t0
        time.sleep(0.05)
    return None


results = []
srv = Server(trial, port, work / f"{label}-server.log")
try:
    srv.wait_ready()
    time.sleep(3)  # let the pipeline prime after ready
    for i, (kind, arg) in enumerate(ops):
        t0 = time.time()
        if kind == "S-add":
            got = srv.gql(ADD, {"p": arg})
            ok = "errors" not in got and "http_error" not in got
            for r in arg:
                exp.add(r)
            summary = got.get("data", {}) and got["data"]["addPapers"]
            log(f"op{i} {kind} {[r['id'][:20] for r in arg]} {time.time()-t0:.2f}s -> {json.dumps(summary if ok else got)[:400]}")
        elif kind == "S-rm":
            got = srv.gql(REMOVE, {"id": arg})
            ok = "errors" not in got and "http_error" not in got
            if ok:
                exp.remove(arg)
            summary = got.get("data", {}) and got["data"]["removePaper"]
            log(f"op{i} {kind} {arg[:30]!r} {time.time()-t0:.2f}s -> {json.dumps(summary if ok else got)[:400]}")
        elif kind == "C-add":
            f = work / f"{label}-op{i}.jsonl"
            write_jsonl(f, arg)
            rc, out, err, dt = cli(trial, "add", str(f))
            log(f"op{i} {kind} {[r['id'][:20] for r in arg]} rc={rc} {dt:.1f}s: {(out+err).strip()[-300:]!r}")
            if rc == 0:
                for r in arg:
                    exp.add(r)
                lat = []
                for r in arg:
                    spelling = exp.papers[id_key(r['id'])][0]
                    lat.append(visible(srv, spelling, True, expected_abstract(exp.record(r["id"]))))
                log(f"   server saw it after {lat}")
        elif kind == "C-rm":
            rc, out, err, dt = cli(trial, "remove", *arg)
            log(f"op{i} {kind} {[a[:20] for a in arg]} rc={rc} {dt:.1f}s: {(out+err).strip()[-300:]!r}")
            if rc == 0:
                lat = []
                for a in arg:
                    stored = exp.papers[id_key(a)][0]
                    exp.remove(a)
                    lat.append(visible(srv, stored, False))
                log(f"   server saw it after {lat}")
        results.append((i, kind))
    time.sleep(1.0)
    from server_view import server_matches_db
    for _ in range(3):  # with --workers 2 each request may reach either process
        d = server_matches_db(srv.url(""), trial / "graph.db")
        log("server view vs file:", "SAME" if not d else "DIFFERENT " + "; ".join(d)[:600])
    log("server RSS kB", srv.rss_kb())
finally:
    srv.stop()
diffs = rebuild_and_compare(trial, exp, work, label)
print("T1 RESULT", "SAME" if not diffs else "DIFFERENT")
