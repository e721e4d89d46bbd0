"""Probe 14, A: SIGKILL a writer (a_writer.py) at random moments -- at random times and
right inside _shrink_wal's TRUNCATE checkpoint -- with a raw sqlite3 reader process
holding read transactions beside it; after each kill: PRAGMA integrity_check, every
batch all-or-nothing, acknowledged batches present, and EmbeddedStore reopens the folder
from a new process (walowner must not refuse). argv: iterations, seconds, workdir."""
import os, random, signal, sqlite3, subprocess, sys, time
from pathlib import Path

ITER, LIMIT, WORK = int(sys.argv[1]), float(sys.argv[2]), Path(sys.argv[3])
PY = sys.executable; HERE = Path(__file__).parent
WORK.mkdir(parents=True, exist_ok=True)
db = WORK / "graph.db"
for f in WORK.glob("graph.db*"): f.unlink()
Path(f"{db}.stop").unlink(missing_ok=True)
SIZE = 200; KEEP = 128 * 1024
READER = r'''
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
end = time.monotonic() + float(sys.argv[2]); bad = 0; n = 0
import os
while time.monotonic() < end and not os.path.exists(sys.argv[1] + ".stop"):
    try:
        db.execute("BEGIN")
        c = db.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
        time.sleep(0.05 if n % 3 else 0.4)   # sometimes hold the snapshot long
        c2 = db.execute("SELECT COUNT(*) FROM nodes WHERE kind='Paper'").fetchone()[0]
        db.execute("COMMIT")
        n += 1
        if c % %SIZE% or c != c2:
            bad += 1; print("MIXED", c, c2, flush=True)
    except sqlite3.Error as e:
        print("READERR", e, flush=True)
        try: db.execute("ROLLBACK")
        except sqlite3.Error: pass
        time.sleep(0.05)
print("reader", n, "reads", bad, "bad", flush=True)
'''.replace("%SIZE%", str(SIZE))
T0 = time.time(); rnd = random.Random(14); acked = 0; problems = []; kills = []
reader = subprocess.Popen([PY, "-c", READER, str(db), str(LIMIT + 60)], stdout=subprocess.PIPE, text=True)
try:
    for it in range(ITER):
        if time.time() - T0 > LIMIT: break
        w = subprocess.Popen([PY, str(HERE / "a_writer.py"), str(db), f"k{it:03d}_", "6", str(SIZE), str(KEEP)],
                             stdout=subprocess.PIPE, text=True)
        mode = rnd.choice(["time", "ckpt", "ckpt"])
        delay = rnd.uniform(0, 2.5) if mode == "time" else rnd.uniform(0, 0.03)
        target = rnd.randrange(0, 6)
        done_here = 0
        start = time.monotonic()
        if mode == "time":
            time.sleep(delay)
        else:
            for line in w.stdout:  # bounded: the writer ends after 6 batches
                if line.startswith("done"): done_here += 1
                if line.startswith(f"ckpt {target}"):
                    time.sleep(delay); break
        w.send_signal(signal.SIGKILL)
        rest, _ = w.communicate(timeout=60)
        done_here += sum(1 for l in rest.splitlines() if l.startswith("done"))
        acked += done_here
        kills.append((mode, round(delay, 3), target, done_here))
        # checks, from new processes
        con = sqlite3.connect(db, timeout=30)
        ic = con.execute("PRAGMA integrity_check").fetchall()
        n = con.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
        con.close()
        ok = ic == [("ok",)] and n % SIZE == 0 and acked * SIZE <= n <= (acked + 1) * SIZE
        chk = subprocess.run([PY, "-c", "import sys; from graph.store.embedded import EmbeddedStore as E; from pathlib import Path; s=E(Path(sys.argv[1]), reads='sql'); "
                              "st=s.stats(); print(sum(st.nodes.values())); s.close()", str(db)], capture_output=True, text=True, timeout=120)
        if chk.returncode != 0 or int(chk.stdout.split()[-1]) != n: ok = False
        if n > acked * SIZE: acked = n // SIZE  # the killed commit had landed
        wal = os.path.getsize(f"{db}-wal") if os.path.exists(f"{db}-wal") else 0
        print(f"it {it} kill {mode} delay={delay:.3f} target={target} acked_here={done_here} nodes={n} integrity={ic[0][0]} reopen_rc={chk.returncode} wal={wal} {'OK' if ok else 'PROBLEM ' + chk.stderr[-300:]}", flush=True)
        if not ok: problems.append(it)
finally:
    Path(f"{db}.stop").touch()
    try:
        out, _ = reader.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        reader.kill(); out, _ = reader.communicate()
print("reader output:", [l for l in out.strip().splitlines() if not l.startswith("x")][-5:])
print(f"iterations={len(kills)} problems={problems} elapsed={time.time() - T0:.0f}s")
