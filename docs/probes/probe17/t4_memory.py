"""Trial 4: a server's RSS over many writes (add 5 papers, remove them one by one, repeated),
then the stored graph against a rebuild of the final papers.

python t4_memory.py BASE_DIR WORK_DIR PORT CYCLES
"""
import json
import shutil
import sys
import time
from pathlib import Path

from lib17 import ADD, REMOVE, Expect, Server, log, rebuild_and_compare

base_dir, work, port, cycles = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
data = Path("/work/p17/data")
held = json.loads((data / "held.json").read_text())
base = [json.loads(l) for l in open(data / "base.jsonl", encoding="utf-8")]
trial = work / "t4"
if trial.exists():
    shutil.rmtree(trial)
shutil.copytree(base_dir, trial)
exp = Expect(base)
srv = Server(trial, port, work / "t4-server.log")
samples = []
errors = []
try:
    srv.wait_ready()
    samples.append(("ready", srv.rss_kb()))
    time.sleep(5)
    samples.append(("primed", srv.rss_kb()))
    for c in range(cycles):
        batch = held[(c % 8) * 5:(c % 8) * 5 + 5]
        t0 = time.time()
        got = srv.gql(ADD, {"p": batch})
        if "errors" in got or "http_error" in got:
            errors.append((c, "add", json.dumps(got)[:300]))
        else:
            for r in batch:
                exp.add(r)
        ta = time.time() - t0
        t0 = time.time()
        for r in batch[:4]:  # keep one of the five each cycle
            got = srv.gql(REMOVE, {"id": r["id"]})
            if "errors" in got or "http_error" in got:
                errors.append((c, "rm", json.dumps(got)[:300]))
            else:
                exp.remove(r["id"])
        tr = time.time() - t0
        samples.append((c, srv.rss_kb()))
        log(f"cycle {c}: add {ta:.2f}s, 4 removes {tr:.2f}s, RSS {samples[-1][1]} kB")
finally:
    srv.stop()
(work / "t4-rss.json").write_text(json.dumps(samples))
log("errors:", errors)
diffs = rebuild_and_compare(trial, exp, work, "t4")
print("T4 RESULT", "SAME" if not diffs else "DIFFERENT", "RSS first/last", samples[0], samples[-1])
