"""A second CLI writer while the first is stalled between SIMILAR_TO pieces (holding the
write): it must wait (or say why not) and both must end in the graph of the two in turn."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from probe.digest import digest

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
W = Path("/tmp/p13-two")


def env(piece: str | None) -> dict[str, str]:
    e = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    e.pop("P13_PIECE", None)
    if piece:
        e["P13_PIECE"] = piece
    return e


def main() -> None:
    shutil.rmtree(W, ignore_errors=True)
    W.mkdir()
    d = W / "d"
    shutil.copytree("/tmp/p13-kill/base", d, ignore=shutil.ignore_patterns("*.lock"))
    w1 = subprocess.Popen([PY, str(ROOT / "probe/killpart.py"), "part", "6", "stop",
                           "--data-dir", str(d), "build", "/tmp/p13-kill/b.jsonl"],
                          env=env("40"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(600):
        time.sleep(0.2)
        if Path(f"/proc/{w1.pid}/stat").read_text().split()[2] == "T":
            break
    t = time.time()
    w2 = subprocess.Popen([PY, str(ROOT / "probe/killpart.py"), "none", "0", "raise",
                           "--data-dir", str(d), "add", "/tmp/p13-kill/extra.jsonl"],
                          env=env("7"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(8)
    print("second writer after 8s:", "running" if w2.poll() is None else f"rc={w2.returncode}")
    w1.send_signal(signal.SIGCONT)
    o1, e1 = w1.communicate(timeout=200)
    o2, e2 = w2.communicate(timeout=200)
    print("w1 rc", w1.returncode, e1.strip().splitlines()[-1:])
    print("w2 rc", w2.returncode, f"{time.time()-t:.1f}s", e2.strip().splitlines()[-3:])
    got = digest(str(d / "graph.db"))
    # the two in turn, whole
    f = W / "f"
    shutil.copytree("/tmp/p13-kill/base", f, ignore=shutil.ignore_patterns("*.lock"))
    for args in (("build", "/tmp/p13-kill/b.jsonl"), ("add", "/tmp/p13-kill/extra.jsonl")):
        r = subprocess.run([PY, "-m", "citegraph", "--data-dir", str(f), *args],
                           env=env(None), capture_output=True, text=True, timeout=200)
        assert r.returncode == 0, r.stderr[-1000:]
    want = digest(str(f / "graph.db"))
    strip = lambda x: {k: v for k, v in x.items() if k != "commits"}  # noqa: E731
    print("equals build-then-add written whole:", strip(got) == strip(want))
    if strip(got) != strip(want):
        print(got, want, sep="\n")


if __name__ == "__main__":
    main()
