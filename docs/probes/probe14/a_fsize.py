"""Probe 14, A: a 'full disk' for the checkpoint only -- RLIMIT_FSIZE set so the WAL can
take the commit but graph.db cannot grow when the TRUNCATE checkpoint copies pages into
it (EFBIG; Python ignores SIGXFSZ). Then a writer without the limit, a reopen, and
integrity_check. Also a read-only folder: open and read. argv: workdir."""
import os, resource, sqlite3, stat, subprocess, sys
from pathlib import Path
WORK = Path(sys.argv[1]); WORK.mkdir(parents=True, exist_ok=True); PY = sys.executable
W = str(Path(__file__).parent / "a_writer.py"); db = WORK / "graph.db"
for f in WORK.glob("graph.db*"): f.unlink()
def run(args, fsize=None):
    pre = (lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))) if fsize else None
    return subprocess.run([PY, W, str(db), *args], capture_output=True, text=True, timeout=300, preexec_fn=pre)
r = run(["a_", "3", "200", str(128 * 1024)]); print("seed rc", r.returncode, "db", db.stat().st_size)
limit = db.stat().st_size + 64 * 1024
r = run(["b_", "1", "200", str(128 * 1024)], fsize=limit)
print("limited writer rc", r.returncode, "out", r.stdout.split("\n")[-4:], "err", r.stderr[-300:])
wal = os.path.getsize(f"{db}-wal") if os.path.exists(f"{db}-wal") else 0
con = sqlite3.connect(db); print("after limited: nodes", con.execute("SELECT COUNT(*) FROM nodes").fetchone()[0],
      "integrity", con.execute("PRAGMA integrity_check").fetchone()[0], "db", db.stat().st_size, "wal", wal); con.close()
r = run(["c_", "1", "200", str(128 * 1024)]); print("unlimited writer rc", r.returncode, r.stderr[-200:])
con = sqlite3.connect(db); print("after: nodes", con.execute("SELECT COUNT(*) FROM nodes").fetchone()[0], "(want 1000)",
      "integrity", con.execute("PRAGMA integrity_check").fetchone()[0], "wal", os.path.getsize(f"{db}-wal") if os.path.exists(f"{db}-wal") else 0); con.close()
# read-only folder (root ignores permission bits, so this only runs usefully as non-root)
print("uid", os.getuid(), "(root: a read-only folder cannot be simulated by chmod)")
