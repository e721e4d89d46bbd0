"""Trial 10: the same paper updated at once by `citegraph add` and by the server's
`addPapers` (plus a neighbour updated by each), repeated. Each round: the stored text of
the paper is the one whose commit came last (commits table: seq and pid); no other write is
lost. At the end, the file equals a rebuild of what is stored per the last committers.

python t10_same_paper.py BASE_DIR WORK_DIR PORT ROUNDS
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from lib17 import ADD, PY, REPO, Expect, Server, env, log, rebuild_and_compare, write_jsonl
from server_view import server_matches_db

from graph.ingest import paper_from_record

base_dir, work, port, rounds = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
data = Path("/work/p17/data")
base = [json.loads(l) for l in open(data / "base.jsonl", encoding="utf-8")]
trial = work / ("t10" + os.environ.get("P17_T10_OFFSET", ""))
if trial.exists():
    shutil.rmtree(trial)
shutil.copytree(base_dir, trial)
exp = Expect(base)
problems = []


def stored_abstract(pid):
    db = sqlite3.connect(f"file:{trial/'graph.db'}?mode=ro", uri=True)
    row = db.execute("select props from nodes where id=?", (pid,)).fetchone()
    db.close()
    return json.loads(row[0])["abstract"] if row else None


def commits_since(seq):
    db = sqlite3.connect(f"file:{trial/'graph.db'}?mode=ro", uri=True)
    rows = db.execute("select seq, pid from commits where seq > ? order by seq", (seq,)).fetchall()
    last = db.execute("select max(seq) from commits").fetchone()[0]
    db.close()
    return rows, last


srv = Server(trial, port, work / f"{trial.name}-server.log")
try:
    srv.wait_ready()
    time.sleep(3)
    _, seq0 = commits_since(0)
    for rnd in range(rounds):
        P, Qc, Qs = base[2500 + rnd], base[2600 + rnd], base[2700 + rnd]
        cli_recs = [dict(P, abstract=P["abstract"] + f" CLI version {rnd} with BERT."),
                    dict(Qc, abstract=Qc["abstract"] + f" CLI neighbour {rnd}.")]
        srv_recs = [dict(P, abstract=P["abstract"] + f" Server version {rnd} with GANs."),
                    dict(Qs, abstract=Qs["abstract"] + f" Server neighbour {rnd}.")]
        f = work / f"{trial.name}-r{rnd}.jsonl"
        write_jsonl(f, cli_recs)
        out = {}

        def server():
            # the server's write lands at different points of the CLI's (P17_T10_OFFSET: later)
            time.sleep(rnd % 3 * 2.5 + float(os.environ.get("P17_T10_OFFSET", "0")))
            out["srv"] = srv.gql(ADD, {"p": srv_recs})

        th = threading.Thread(target=server)
        logf = open(work / f"{trial.name}-r{rnd}.out", "w")
        p = subprocess.Popen([PY, "-m", "citegraph", "--data-dir", str(trial), "add", str(f)],
                             stdout=logf, stderr=subprocess.STDOUT, env=env(), cwd=str(REPO))
        th.start()
        rc = p.wait(600)
        th.join(600)
        logf.close()
        got = out["srv"]
        s_ok = "errors" not in got and "http_error" not in got
        rows, seq0_new = commits_since(seq0)
        seq0 = seq0_new
        order = ["cli" if pid == p.pid else "srv" if pid == srv.pid else f"pid{pid}" for _, pid in rows]
        # the expected state: both writes applied in commit order
        applied = []
        for who in order:
            if who == "cli" and rc == 0:
                for r in cli_recs:
                    exp.add(r)
                applied.append("cli")
            elif who == "srv" and s_ok:
                for r in srv_recs:
                    exp.add(r)
                applied.append("srv")
        want = {r["id"]: paper_from_record(exp.record(r["id"]), source="x").abstract
                for r in cli_recs + srv_recs}
        bad = [pid for pid, a in want.items() if stored_abstract(pid) != a]
        log(f"round {rnd}: cli rc={rc}, server ok={s_ok}, commit order {order}; "
            f"P holds the {'CLI' if 'CLI version' in (stored_abstract(P['id']) or '') else 'server'} text; "
            f"rows not as the last committer left them: {bad}")
        if not s_ok:
            log("  server said:", json.dumps(got)[:300])
        if bad or len(order) != 2:
            problems.append((rnd, order, bad))
    time.sleep(1)
    view = server_matches_db(srv.url(""), trial / "graph.db")
    log("server view:", "== file" if not view else view)
finally:
    srv.stop()
diffs = rebuild_and_compare(trial, exp, work, trial.name)
print("T10 RESULT", "SAME" if not diffs else "DIFFERENT", "problems:", problems)
