"""Kill/interrupt/fail a one-shot build or add inside its write in parts, many times;
check each time: graph == old or new exactly, kept counts == tables, the rerun completes
with the new graph.

python probe/killtrials.py SCENARIO N_RANDOM_TICKS SEED
SCENARIO: build (A graph -> build B.jsonl) or add (A graph -> add Cadd.jsonl)
"""
import json, os, random, shutil, subprocess, sys, time
from pathlib import Path
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
T = Path("/tmp/p12")
sys.path.insert(0, str(HERE))
import dbdump

scen, nticks, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if scen == "build":
    tpl, cmd, NEW = T / "tpl", ["build", str(T / "c/B.jsonl")], "93d3d6952ed75cb7"
else:
    tpl, cmd, NEW = T / "tpl_add", ["add", str(T / "c/Cadd.jsonl")], "613e1ebc160987cb"
OLD = "a7fdb90eadd3ee06"
env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
rng = random.Random(seed)
modes = []
for n in range(1, 6):
    for sig in ("KILL", "INT", "TERM", "EXC", "SQLERR"):
        modes.append(f"part:{n}:{sig}")
    modes.append(f"before:{n}:EXC")
    modes.append(f"before:{n}:INT")
for sig in ("KILL", "INT", "TERM", "EXC"):
    modes.append(f"commit:{sig}")
    modes.append(f"aftercommit:{sig}")
for _ in range(nticks):
    modes.append(f"tick:{rng.randint(1, 1800)}:{rng.choice(['KILL', 'INT', 'TERM', 'ABORT'])}")
bad = 0
results = []
for i, mode in enumerate(modes):
    d = T / f"kt_{scen}"
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(tpl, d)
    t0 = time.time()
    p = subprocess.run([sys.executable, str(HERE / "killrun.py"), mode, "--data-dir", str(d), *cmd, "--json"],
                       env=env, capture_output=True, text=True, timeout=300)
    err_tail = [l for l in p.stderr.strip().splitlines() if l.strip()][-3:]
    s = dbdump.summary(str(d / "graph.db"))
    state = "OLD" if s["digest"] == OLD else "NEW" if s["digest"] == NEW else "OTHER:" + s["digest"]
    ok = state in ("OLD", "NEW") and s["counts_ok"] and not s["dangling"] and not s["orphan_emb"]
    # the expected state
    if mode.startswith("aftercommit"):
        ok = ok and state == "NEW"
    elif not mode.startswith("tick") or True:
        ok = ok and (state == "OLD" or mode.startswith("aftercommit") or
                     (mode.startswith("tick") and p.returncode == 0))
    leftover = sorted(x.name for x in d.iterdir() if x.name.startswith(".") or "tmp" in x.name)
    p2 = subprocess.run([sys.executable, "-m", "citegraph", "--data-dir", str(d), *cmd, "--json"],
                        env=env, capture_output=True, text=True, timeout=300, cwd=str(ROOT))
    s2 = dbdump.summary(str(d / "graph.db"))
    ok2 = p2.returncode == 0 and s2["digest"] == NEW and s2["counts_ok"]
    try:
        rep = json.loads(p2.stdout)
        st = rep["stats"]
        ok2 = ok2 and st["edges"] == {k: s2["edges"].get(k, 0) for k in st["edges"]}
    except Exception as e:
        ok2 = False
    line = (f"{i:3d} {mode:22s} rc={p.returncode:4d} state={state:6s} counts_ok={s['counts_ok']} "
            f"rerun_rc={p2.returncode} rerun_new={s2['digest'] == NEW} {'OK' if ok and ok2 else 'BAD'} "
            f"{time.time() - t0:.1f}s | {' / '.join(err_tail)[:300]}")
    print(line, flush=True)
    if not (ok and ok2):
        bad += 1
        print("   rerun stderr:", p2.stderr[-800:], flush=True)
print(f"TRIALS {len(modes)} BAD {bad}")
