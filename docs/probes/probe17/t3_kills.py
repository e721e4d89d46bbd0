"""Trial 3: SIGINT (process group / embedding child alone) / SIGTERM / SIGKILL to
`citegraph add` at random moments, with a server running on the folder.
Each attempt: graph unchanged or whole write; exit code and message; no leftover child;
the server agrees with the file; the next write works. At the end: equal to a rebuild.

python t3_kills.py BASE_DIR WORK_DIR PORT ATTEMPTS SEED
"""
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from lib17 import (ADD, PAPER, PY, REPO, Expect, Server, env, log, rebuild_and_compare,
                   write_jsonl, STATS)

base_dir, work, port, attempts, seed = (Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]),
                                        int(sys.argv[4]), int(sys.argv[5]))
rng = random.Random(seed)
# a job started with `&` by a non-interactive shell ignores SIGINT, and so would every
# child: restore it, or a Ctrl-C sent below is never seen (the first run of this
# script had that artifact: docs/probes/probe17/t3-run0-sigint-ignored.log)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def _child_setup():
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)

data = Path("/work/p17/data")
held = json.loads((data / "held.json").read_text())
base = [json.loads(l) for l in open(data / "base.jsonl", encoding="utf-8")]
trial = work / "t3"
if trial.exists():
    shutil.rmtree(trial)
shutil.copytree(base_dir, trial)
exp = Expect(base)


def digest():
    db = sqlite3.connect(f"file:{trial/'graph.db'}?mode=ro", uri=True)
    h = hashlib.sha256()
    for q in ("select id, kind, props from nodes order by id",
              "select source, target, type, weight, attrs from edges order by source, target, type",
              "select id, vector from embeddings order by id"):
        for row in db.execute(q):
            h.update(repr(row).encode())
    papers = {i for (i,) in db.execute("select id from nodes where kind='Paper'")}
    n = db.execute("select count(*) from nodes").fetchone()[0]
    e = db.execute("select count(*) from edges").fetchone()[0]
    seq = db.execute("select max(seq) from commits").fetchone()[0]
    db.close()
    return h.hexdigest()[:16], papers, n, e, seq


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                st = open(f"/proc/{d}/stat").read()
                ppid = int(st.rsplit(")", 1)[1].split()[1])
                if ppid == pid:
                    out.append(int(d))
            except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
                pass
    return out


srv = Server(trial, port, work / "t3-server.log")
rows = []
next_held = 40
try:
    srv.wait_ready()
    time.sleep(3)
    late = len(sys.argv) > 6 and sys.argv[6] == "late"
    # "late": the signal goes after the embedding child has ended (its vectors are in),
    # 0-1.5 s later: while the add links, writes and commits under the lock
    modes = (["INT-group", "TERM-main", "KILL-main"] if late
             else ["INT-group", "INT-child", "TERM-main", "KILL-main"])
    # calibration: one add with no signal (its texts are new: the model runs)
    durations = []
    for a in range(attempts + 1):
        mode = "none" if a == 0 else modes[(a - 1) % len(modes)]
        tag = f"k{seed}-{a}"
        batch = [dict(held[40 + (a % 15)], id=f"kill-{tag}-a",
                      abstract=held[40 + (a % 15)]["abstract"] + f" Variant {tag} with graph neural networks."),
                 dict(held[41 + (a % 15)], id=f"kill-{tag}-b",
                      abstract=held[41 + (a % 15)]["abstract"] + f" Variant {tag} on ImageNet."),
                 dict(base[800 + a], abstract=base[800 + a]["abstract"] + f" Update {tag}: we also use BERT.")]
        f = work / f"t3-{tag}.jsonl"
        write_jsonl(f, batch)
        d0, p0, n0, e0, s0 = digest()
        logf = open(work / f"t3-{tag}.out", "w")
        t0 = time.time()
        p = subprocess.Popen([PY, "-m", "citegraph", "--data-dir", str(trial), "add", str(f)],
                             stdout=logf, stderr=subprocess.STDOUT, env=env(), cwd=str(REPO),
                             start_new_session=True, preexec_fn=_child_setup)
        sent = None
        if mode != "none":
            hi = max(durations) if durations else 20
            delay = rng.uniform(0.3, hi * 1.05)
            if late:
                seen_child = False
                while p.poll() is None and time.time() - t0 < 120:
                    kids_now = children(p.pid)
                    seen_child = seen_child or bool(kids_now)
                    if seen_child and not kids_now:
                        break
                    time.sleep(0.01)
                delay = time.time() - t0 + rng.uniform(0.0, 1.5)
            while time.time() - t0 < delay and p.poll() is None:
                time.sleep(0.005)
            kids = children(p.pid)
            if p.poll() is not None:
                sent = "finished before the signal"
            elif mode == "INT-group":
                os.killpg(p.pid, signal.SIGINT)
                sent = f"SIGINT group at {delay:.2f}s (children {kids})"
            elif mode == "INT-child":
                if kids:
                    for k in kids:
                        os.kill(k, signal.SIGINT)
                    sent = f"SIGINT child {kids} at {delay:.2f}s"
                else:
                    os.kill(p.pid, signal.SIGINT)
                    sent = f"no child at {delay:.2f}s: SIGINT main"
            elif mode == "TERM-main":
                os.kill(p.pid, signal.SIGTERM)
                sent = f"SIGTERM main at {delay:.2f}s (children {kids})"
            elif mode == "KILL-main":
                os.kill(p.pid, signal.SIGKILL)
                sent = f"SIGKILL main at {delay:.2f}s (children {kids})"
        try:
            rc = p.wait(300)
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)
            rc = p.wait()
            sent = (sent or "") + " [HUNG: killed after 300s]"
        dt = time.time() - t0
        logf.close()
        if mode == "none":
            durations.append(dt)
        # leftover children of the add (the embedding process) after it ended
        # (waits up to 30 s for them to end by themselves, then kills them)
        t_end = time.time()
        left = []
        while time.time() - t_end < 30:
            left = [int(x) for x in subprocess.run(["pgrep", "-s", str(p.pid)], capture_output=True, text=True).stdout.split()]
            if not left:
                break
            time.sleep(0.2)
        left_for = round(time.time() - t_end, 1)
        for k in left:
            os.kill(k, signal.SIGKILL)
        out = (work / f"t3-{tag}.out").read_text().strip().splitlines()
        d1, p1, n1, e1, s1 = digest()
        ids = [r["id"] for r in batch]
        new_in = [i for i in ids[:2] if i in p1]
        db = sqlite3.connect(f"file:{trial/'graph.db'}?mode=ro", uri=True)
        upd = json.loads(db.execute("select props from nodes where id=?", (ids[2],)).fetchone()[0])["abstract"]
        db.close()
        updated = f"Update {tag}" in upd
        if not new_in and not updated:
            outcome = "unchanged" if d1 == d0 else "CHANGED-BUT-NOT-WRITTEN"
        elif len(new_in) == 2 and updated:
            outcome = "whole"
            for r in batch:
                exp.add(r)
        else:
            outcome = f"PARTIAL new={new_in} updated={updated}"
        # the server agrees with the file within 2 s
        agree = None
        t1 = time.time()
        while time.time() - t1 < 3:
            st = srv.gql(STATS)
            tn = st.get("data", {}).get("stats", {}).get("totalNodes")
            seen = [srv.gql(PAPER, {"id": i}).get("data", {}).get("paper") is not None for i in ids[:2]]
            if tn == n1 and seen == [i in p1 for i in ids[:2]]:
                agree = round(time.time() - t1, 2)
                break
            time.sleep(0.1)
        # the next write works (by the server)
        nxt = held[(a % 10) + 45]
        nxt = dict(nxt, id=f"next-{tag}", abstract=nxt["abstract"] + f" Next write {tag}.")
        got = srv.gql(ADD, {"p": [nxt]})
        next_ok = "errors" not in got and "http_error" not in got and got["data"]["addPapers"]["added"] == [nxt["id"]]
        if next_ok:
            exp.add(nxt)
        row = dict(a=a, mode=mode, sent=sent, rc=rc, secs=round(dt, 1), outcome=outcome,
                   msg=out[-2:], left_children=left, children_gone_after_s=left_for, server_agrees_after=agree, next_write_ok=next_ok,
                   next_err=None if next_ok else json.dumps(got)[:300])
        rows.append(row)
        log(json.dumps(row, ensure_ascii=False))
    log("server RSS kB", srv.rss_kb())
finally:
    srv.stop()
(work / f"t3-rows-{seed}.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False))
diffs = rebuild_and_compare(trial, exp, work, f"t3-{seed}")
print("T3 RESULT", "SAME" if not diffs else "DIFFERENT")
