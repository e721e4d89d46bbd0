"""Trial 2: two `citegraph add`/`remove` at once plus the server writing, repeated.
Nothing may be lost; the final graph must equal a fresh build of the final papers.

python t2_concurrent.py BASE_DIR WORK_DIR PORT ROUNDS
"""
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from lib17 import (ADD, PY, REMOVE, Expect, Server, env, log, rebuild_and_compare,
                   write_jsonl, REPO)

base_dir, work, port, rounds = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
data = Path("/work/p17/data")
held = json.loads((data / "held.json").read_text())
base = [json.loads(l) for l in open(data / "base.jsonl", encoding="utf-8")]
trial = work / "t2"
if trial.exists():
    shutil.rmtree(trial)
shutil.copytree(base_dir, trial)
exp = Expect(base)


def rec(r, id_=None, extra=""):
    r = dict(r)
    if id_ is not None:
        r["id"] = id_
    if extra:
        r["abstract"] = r["abstract"] + " " + extra
    return r


def start_cli(args, tag):
    logf = open(work / f"t2-{tag}.log", "w")
    p = subprocess.Popen([PY, "-m", "citegraph", "--data-dir", str(trial), *args],
                         stdout=logf, stderr=subprocess.STDOUT, env=env(), cwd=str(REPO),
                         text=True)
    return p, logf


srv = Server(trial, port, work / "t2-server.log")
lost = []
try:
    srv.wait_ready()
    time.sleep(3)
    for rnd in range(rounds):
        o = rnd * 12
        a_recs = [rec(h) for h in held[o:o + 4]]
        # B: two new papers, and an update of a base paper (a new text: the model runs)
        b_recs = [rec(h) for h in held[o + 4:o + 6]] + [
            rec(base[400 + rnd], extra=f"Round {rnd}: we add experiments on CIFAR-100 with vision transformers.")]
        s_recs = [[rec(h)] for h in held[o + 6:o + 10]]
        s_recs.append([rec(base[500 + rnd], "\u212a-conc-%d" % rnd)])  # a new Kelvin-sign id; its text is made new below
        s_recs[-1][0]["abstract"] = base[500 + rnd]["abstract"] + f" Round {rnd} Kelvin variant with diffusion models."
        rm_cli = base[600 + rnd]["id"]
        rm_srv = base[700 + rnd]["id"]
        fa, fb = work / f"t2-r{rnd}-a.jsonl", work / f"t2-r{rnd}-b.jsonl"
        write_jsonl(fa, a_recs)
        write_jsonl(fb, b_recs)
        t0 = time.time()
        pa, la = start_cli(["add", str(fa)], f"r{rnd}-a")
        pb, lb = start_cli(["add", str(fb)], f"r{rnd}-b")
        pc, lc = start_cli(["remove", rm_cli], f"r{rnd}-c")
        srv_out = []

        def server_writes():
            for batch in s_recs:
                srv_out.append(("add", [r["id"] for r in batch], srv.gql(ADD, {"p": batch})))
            srv_out.append(("rm", rm_srv, srv.gql(REMOVE, {"id": rm_srv})))

        th = threading.Thread(target=server_writes)
        th.start()
        rcs = []
        for p, lf in ((pa, la), (pb, lb), (pc, lc)):
            rcs.append(p.wait(900))
            lf.close()
        th.join(900)
        dt = time.time() - t0
        log(f"round {rnd}: cli rcs {rcs} in {dt:.1f}s")
        for tag in ("a", "b", "c"):
            txt = (work / f"t2-r{rnd}-{tag}.log").read_text().strip().splitlines()
            log(f"  cli {tag}: " + " | ".join(l for l in txt if "wait" in l or "Added" in l or "Removed" in l or "rror" in l or "nothing" in l)[:400])
        for kind, what, got in srv_out:
            bad = "errors" in got or "http_error" in got
            log(f"  server {kind} {what}: {'ERROR ' + json.dumps(got)[:400] if bad else 'ok ' + json.dumps(got['data'])[:200]}")
        # expectation: everything that answered ok landed
        if rcs[0] == 0:
            for r in a_recs:
                exp.add(r)
        if rcs[1] == 0:
            for r in b_recs:
                exp.add(r)
        if rcs[2] == 0:
            exp.remove(rm_cli)
        for kind, what, got in srv_out:
            if "errors" in got or "http_error" in got:
                continue
            if kind == "add":
                for batch in s_recs:
                    if [r["id"] for r in batch] == what:
                        for r in batch:
                            exp.add(r)
            else:
                exp.remove(what)
        # nothing lost: every expected paper is stored with its expected abstract
        import sqlite3
        from graph.ingest import paper_from_record
        db = sqlite3.connect(f"file:{trial/'graph.db'}?mode=ro", uri=True)
        stored = {i: json.loads(p)["abstract"] for i, p in db.execute("select id, props from nodes where kind='Paper'")}
        db.close()
        want = {spelling: paper_from_record(r, source="x").abstract for spelling, r in exp.papers.values()}
        miss = [i for i in want if i not in stored]
        extra = [i for i in stored if i not in want]
        wrong = [i for i in want if i in stored and stored[i] != want[i]]
        log(f"  after round {rnd}: {len(stored)} stored, missing {miss[:5]}, extra {extra[:5]}, wrong text {wrong[:5]}")
        lost += miss + extra + wrong
        # the server sees the same count
        st = srv.gql("{ stats { totalNodes totalEdges nodes { kind count } edges { kind count } } }")
        log(f"  server stats: {json.dumps(st)[:200]}")
    log("server RSS kB", srv.rss_kb())
finally:
    srv.stop()
diffs = rebuild_and_compare(trial, exp, work, "t2")
print("T2 RESULT", "SAME" if not diffs else "DIFFERENT", "lost/extra/wrong:", lost)
