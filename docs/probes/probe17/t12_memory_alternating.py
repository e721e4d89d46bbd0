"""Trial 12: the server's RSS when CLI writes and server writes alternate: each cycle a
`citegraph add` (so the server's next write goes the whole way and its region state is
made again), then a server add and a server remove. VmRSS each cycle; the final file vs a
rebuild.

python t12_memory_alternating.py BASE_DIR WORK_DIR PORT CYCLES
"""
import json
import shutil
import sys
import time
from pathlib import Path

from lib17 import ADD, REMOVE, Expect, Server, cli, log, rebuild_and_compare, write_jsonl

base_dir, work, port, cycles = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
data = Path("/work/p17/data")
held = json.loads((data / "held.json").read_text())
base = [json.loads(l) for l in open(data / "base.jsonl", encoding="utf-8")]
trial = work / f"t12-{cycles}"
if trial.exists():
    shutil.rmtree(trial)
shutil.copytree(base_dir, trial)
exp = Expect(base)
srv = Server(trial, port, work / f"t12-{cycles}-server.log")
samples, errors = [], []
try:
    srv.wait_ready()
    samples.append(("ready", srv.rss_kb()))
    time.sleep(5)
    samples.append(("primed", srv.rss_kb()))
    for c in range(cycles):
        a, b = held[(2 * c) % 60], held[(2 * c + 1) % 60]
        f = work / "t12-c.jsonl"
        write_jsonl(f, [a])
        rc, out, err, dt = cli(trial, "add", str(f))
        if rc == 0:
            exp.add(a)
        else:
            errors.append((c, "cli", rc, err[-200:]))
        t0 = time.time()
        got = srv.gql(ADD, {"p": [b]})
        if "errors" in got:
            errors.append((c, "add", json.dumps(got)[:200]))
        else:
            exp.add(b)
        t1 = time.time()
        for r in (a, b):
            got = srv.gql(REMOVE, {"id": r["id"]})
            if "errors" in got:
                errors.append((c, "rm", json.dumps(got)[:200]))
            else:
                exp.remove(r["id"])
        t2 = time.time()
        samples.append((c, srv.rss_kb()))
        log(f"cycle {c}: cli add {dt:.1f}s, server add after it {t1 - t0:.2f}s, 2 removes {t2 - t1:.2f}s, RSS {samples[-1][1]} kB")
finally:
    srv.stop()
(work / f"t12-{cycles}-rss.json").write_text(json.dumps(samples))
log("errors:", errors)
diffs = rebuild_and_compare(trial, exp, work, f"t12-{cycles}")
print("T12 RESULT", "SAME" if not diffs else "DIFFERENT", "RSS", samples[0], samples[1], samples[-1])
