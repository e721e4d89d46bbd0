"""Trial 11: SIGKILL (or SIGTERM) to the server while its own addPapers/removePaper runs
(region path), at a random moment; then a new server on the folder. The file must hold the
whole write or none of it (self-check clean), the new server must take the next write, and
the final file must equal a rebuild.

python t11_server_kill.py BASE_DIR WORK_DIR PORT ATTEMPTS SEED
"""
import json
import os
import random
import shutil
import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path

import compare
from lib17 import ADD, REMOVE, Expect, Server, log, rebuild_and_compare

from graph.ids import id_key
from graph.ingest import paper_from_record

base_dir, work, port, attempts, seed = (Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]),
                                        int(sys.argv[4]), int(sys.argv[5]))
rng = random.Random(seed)
data = Path("/work/p17/data")
held = json.loads((data / "held.json").read_text())
base = [json.loads(l) for l in open(data / "base.jsonl", encoding="utf-8")]
trial = work / f"t11-{seed}"
if trial.exists():
    shutil.rmtree(trial)
shutil.copytree(base_dir, trial)
exp = Expect(base)
rows = []


def stored_papers():
    db = sqlite3.connect(f"file:{trial/'graph.db'}?mode=ro", uri=True)
    out = {i: json.loads(p)["abstract"] for i, p in db.execute("select id, props from nodes where kind='Paper'")}
    db.close()
    return out


srv = Server(trial, port, work / "t11-server.log")
try:
    srv.wait_ready()
    time.sleep(3)
    for a in range(attempts):
        # a write with 3 new papers (cached texts), an update (new text: the server embeds)
        # and, every other time, a remove in a second request right after
        new = [dict(held[(3 * a + j) % 60], id=f"sk-{seed}-{a}-{j}",
                    abstract=held[(3 * a + j) % 60]["abstract"] + f" Server kill {seed}-{a}-{j}.")
               for j in range(3)]
        upd = dict(base[1800 + a], abstract=base[1800 + a]["abstract"] + f" Updated before kill {a}.")
        batch = new + [upd]
        before = stored_papers()
        out = {}

        def go():
            out["r"] = srv.gql(ADD, {"p": batch}, timeout=60)

        th = threading.Thread(target=go)
        th.start()
        delay = rng.uniform(0.05, float(os.environ.get("P17_T11_MAXDELAY", "2.5")))
        time.sleep(delay)
        sig = signal.SIGKILL if a % 3 else signal.SIGTERM
        os.kill(srv.pid, sig)
        th.join(90)
        srv.proc.wait(60)
        rc = srv.proc.returncode
        srv.logf.close()
        after = stored_papers()
        ids = [r["id"] for r in new]
        n_in = sum(i in after for i in ids)
        upd_in = f"Updated before kill {a}." in (after.get(upd["id"]) or "")
        if n_in == 0 and not upd_in:
            outcome = "none" if after == before else "CHANGED"
        elif n_in == 3 and upd_in:
            outcome = "whole"
            for r in batch:
                exp.add(r)
        else:
            outcome = f"PARTIAL {n_in} new, update {upd_in}"
        check = compare.summary(str(trial / "graph.db"))
        answer = out.get("r")
        ans = "no answer" if answer is None else ("ok" if "data" in answer and answer.get("data") else json.dumps(answer)[:150])
        # a new server; the next write
        srv = Server(trial, port, work / "t11-server.log")
        srv.wait_ready()
        nxt = dict(held[(a + 30) % 60], id=f"after-{seed}-{a}",
                   abstract=held[(a + 30) % 60]["abstract"] + f" After kill {seed}-{a}.")
        got = srv.gql(ADD, {"p": [nxt]})
        nok = "errors" not in got and got["data"]["addPapers"]["added"] == [nxt["id"]]
        if nok:
            exp.add(nxt)
        if a % 2 == 1:  # and a remove by the region path, once the pipeline is primed
            time.sleep(3)
            victim = f"sk-{seed}-{a - 1}-0"
            if id_key(victim) in exp.papers:
                got = srv.gql(REMOVE, {"id": victim})
                if "errors" not in got:
                    exp.remove(victim)
        row = dict(a=a, sig=sig.name, delay=round(delay, 2), server_rc=rc, answer=ans, outcome=outcome,
                   file_ok=check["ok"], next_write_ok=nok)
        rows.append(row)
        log(json.dumps(row))
finally:
    srv.stop()
(work / f"t11-rows-{seed}.json").write_text(json.dumps(rows, indent=1))
diffs = rebuild_and_compare(trial, exp, work, f"t11-{seed}")
print("T11 RESULT", "SAME" if not diffs else "DIFFERENT",
      "outcomes", [r["outcome"] for r in rows], "files ok", all(r["file_ok"] for r in rows))
