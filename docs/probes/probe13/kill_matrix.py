"""Kill or fail a CLI build/add during a later SIMILAR_TO piece, between pieces, or at
the commit; check from other processes (sqlite3, `citegraph stats`) that the old graph
is intact; rerun; compare with a fresh build written whole.

    python docs/probes/probe13/kill_matrix.py [cases...]     (case: WHERE:N:ACTION:CMD)
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from probe.common import seed_papers
from probe.digest import digest

ROOT = Path(__file__).resolve().parents[1]
WORK = Path("/tmp/p13-kill")
PY = sys.executable


def env(piece: int | None = 40) -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT)
    e["HF_HUB_OFFLINE"] = "1"
    if piece is not None:
        e["P13_PIECE"] = str(piece)
    return e


def cli(data: Path, *args: str, wrap: list[str] | None = None, piece: int | None = 40,
        timeout: float = 240) -> subprocess.CompletedProcess[str]:
    pre = [PY, str(ROOT / "probe" / "killpart.py"), *(wrap or ["none", "0", "raise"])]
    return subprocess.run([*pre, "--data-dir", str(data), *args], capture_output=True,
                          text=True, env=env(piece), timeout=timeout)


def write_jsonl(path: Path, papers: list) -> None:
    with path.open("w") as f:
        for p in papers:
            f.write(json.dumps({"id": p.id, "title": p.title, "abstract": p.abstract}) + "\n")


def setup() -> tuple[Path, Path, Path, Path]:
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir()
    ps = seed_papers()
    a, b, extra = WORK / "a.jsonl", WORK / "b.jsonl", WORK / "extra.jsonl"
    write_jsonl(a, ps[:50])
    # B: 10 dropped, 26 added, 5 retitled (re-embedded: texts in the cache after the base)
    import dataclasses
    retitled = [dataclasses.replace(p, title="Retitled " + p.id) for p in ps[20:25]]
    write_jsonl(b, ps[10:20] + retitled + ps[25:])
    write_jsonl(extra, ps[50:])
    base = WORK / "base"
    base.mkdir()
    (base / "cache").mkdir()
    shutil.copy("/tmp/p13-seed-cache/embeddings.sqlite", base / "cache" / "embeddings.sqlite")
    r = cli(base, "build", str(a), piece=None)
    assert r.returncode == 0, r.stderr[-3000:]
    # warm the cache with B's and A+extra's texts (a throwaway build each), so a kill
    # never lands in a model load
    for src in (b, extra):
        tmp = WORK / "warm"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(base, tmp)
        r = cli(tmp, "add" if src is extra else "build", str(src), piece=None)
        assert r.returncode == 0, r.stderr[-3000:]
        shutil.copy(tmp / "cache" / "embeddings.sqlite", base / "cache" / "embeddings.sqlite")
    return base, a, b, extra


def fresh(name: str, base: Path, cmd: str, src: Path, a: Path) -> dict:
    d = WORK / name
    if not d.exists():
        d.mkdir()
        (d / "cache").mkdir()
        shutil.copy(base / "cache" / "embeddings.sqlite", d / "cache" / "embeddings.sqlite")
        if cmd == "add":
            r = cli(d, "build", str(a), piece=None)
            assert r.returncode == 0, r.stderr[-2000:]
            r = cli(d, "add", str(src), piece=None)
        else:
            r = cli(d, "build", str(src), piece=None)
        assert r.returncode == 0, r.stderr[-2000:]
    return digest(str(d / "graph.db"))


def strip(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "commits"}


def run_case(case: str, base: Path, a: Path, b: Path, extra: Path) -> str:
    where, n, action, cmd = case.split(":")
    src = b if cmd == "build" else extra
    d = WORK / ("case-" + case.replace(":", "-"))
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(base, d, ignore=shutil.ignore_patterns("*.lock"))
    before = digest(str(d / "graph.db"))
    stats_before = subprocess.run([PY, "-m", "citegraph", "--data-dir", str(d), "stats", "--json"],
                                  capture_output=True, text=True, env=env(None)).stdout
    t = time.time()
    if action == "stop":
        p = subprocess.Popen([PY, str(ROOT / "probe" / "killpart.py"), where, n, action,
                              "--data-dir", str(d), cmd, str(src)], env=env(40),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # wait for it to stop itself
        for _ in range(600):
            time.sleep(0.2)
            st = Path(f"/proc/{p.pid}/stat").read_text().split()[2]
            if st == "T":
                break
        mid = digest(str(d / "graph.db"))
        stats_mid = subprocess.run([PY, "-m", "citegraph", "--data-dir", str(d), "stats", "--json"],
                                   capture_output=True, text=True, env=env(None), timeout=60)
        p.send_signal(9)
        p.wait()
        rc, err = p.returncode, p.stderr.read()
        res_mid = (strip(mid) == strip(before), stats_mid.returncode,
                   stats_mid.stdout == stats_before)
    else:
        r = cli(d, cmd, str(src), wrap=[where, n, action])
        rc, err = r.returncode, r.stderr
        res_mid = None
    after = digest(str(d / "graph.db"))
    st = subprocess.run([PY, "-m", "citegraph", "--data-dir", str(d), "stats", "--json"],
                        capture_output=True, text=True, env=env(None))
    kept = strip(after) == strip(before) and after["commits"] == before["commits"]
    stats_same = st.stdout == stats_before
    # rerun (pieces small) and compare with a fresh build written whole
    r2 = cli(d, cmd, str(src), piece=7)
    final = digest(str(d / "graph.db"))
    want = fresh("fresh-" + cmd, base, cmd, src, a)
    same = strip(final) == strip(want)
    last = [line for line in err.strip().splitlines() if line.strip()][-1:] if err else []
    return (f"{case}: rc={rc} kept_old={kept} stats_same={stats_same} mid={res_mid} "
            f"rerun_rc={r2.returncode} rerun_equals_fresh={same} "
            f"({time.time()-t:.1f}s) last_err={last}"
            + ("" if same else f"\n   final={final}\n   want={want}")
            + ("" if kept else f"\n   before={before}\n   after={after}"))


def main() -> None:
    base, a, b, extra = setup()
    cases = sys.argv[1:] or [
        "part:5:kill9:build", "part:5:term:build", "part:5:int:build", "part:5:raise:build",
        "piece:6:kill9:build", "piece:6:term:build", "piece:6:int:build", "piece:6:raise:build",
        "piece:6:oserror:build", "piece:6:memory:build",
        "commit:0:kill9:build", "commit:0:raise:build",
        "part:5:kill9:add", "piece:3:raise:add", "piece:3:term:add", "commit:0:int:add",
        "part:6:stop:build",
    ]
    for c in cases:
        print(run_case(c, base, a, b, extra), flush=True)


if __name__ == "__main__":
    main()
