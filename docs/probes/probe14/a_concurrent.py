"""Probe 14, A: two writer processes (a_writer.py) committing at once, with and without a
raw sqlite3 reader that holds read transactions (1 s each), WAL_KEEP_BYTES shrunk to
128 KB so every commit checkpoints. Reports how long each _shrink_wal took (the claim:
<= ~200 ms extra), errors, final counts, integrity and the WAL size. argv: workdir."""
import os, sqlite3, subprocess, sys, time
from pathlib import Path
WORK = Path(sys.argv[1]); PY = sys.executable; HERE = Path(__file__).parent
READER = r'''
import sqlite3, sys, time, os
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
n = bad = 0; end = time.monotonic() + 120
while time.monotonic() < end and not os.path.exists(sys.argv[1] + ".stop"):
    db.execute("BEGIN"); a = db.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
    time.sleep(float(sys.argv[2]))
    b = db.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]; db.execute("COMMIT")
    n += 1; bad += (a != b) or (a % 150 != 0)
print("reads", n, "bad", bad, flush=True)
'''
for with_reader in (False, True):
    d = WORK / ("reader" if with_reader else "alone"); d.mkdir(parents=True, exist_ok=True)
    db = d / "graph.db"
    for f in d.glob("graph.db*"): f.unlink()
    subprocess.run([PY, str(HERE / "a_writer.py"), str(db), "seed_", "1", "150", str(128 * 1024)], check=True, capture_output=True, timeout=120)
    rd = subprocess.Popen([PY, "-c", READER, str(db), "1.0"], stdout=subprocess.PIPE, text=True) if with_reader else None
    t0 = time.monotonic()
    ws = [subprocess.Popen([PY, str(HERE / "a_writer.py"), str(db), f"w{i}_", "8", "150", str(128 * 1024)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    outs = [w.communicate(timeout=300) for w in ws]
    wall = time.monotonic() - t0
    Path(f"{db}.stop").touch()
    rout = rd.communicate(timeout=30)[0].strip() if rd else "-"
    ck = [float(l.split()[2]) for o, _ in outs for l in o.splitlines() if l.startswith("ckptdone")]
    dn = [float(l.split()[2]) for o, _ in outs for l in o.splitlines() if l.startswith("done")]
    con = sqlite3.connect(db); ic = con.execute("PRAGMA integrity_check").fetchone()[0]
    n = con.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]; con.close()
    wal = os.path.getsize(f"{db}-wal") if os.path.exists(f"{db}-wal") else 0
    print(f"reader={with_reader} rc={[w.returncode for w in ws]} stderr={[e[-200:] for _, e in outs if e.strip()]} wall={wall:.1f}s "
          f"commits={len(dn)} apply max={max(dn):.3f} mean={sum(dn)/len(dn):.3f} checkpoints={len(ck)} ckpt max={max(ck) if ck else 0:.3f} "
          f"mean={sum(ck)/len(ck) if ck else 0:.3f} nodes={n} (want 2550) integrity={ic} wal_after={wal} reader: {rout}", flush=True)
