"""Trial 13: `citegraph build` of another corpus over the folder while a server is serving
and writing (its writes racing the build), then server writes (the whole path once, then
the region path) and a CLI add. Server memory vs file; the final file vs a rebuild.

python t13_build_under_server.py BASE_DIR WORK_DIR PORT
"""
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from lib17 import ADD, PY, REMOVE, REPO, Expect, Server, cli, env, log, rebuild_and_compare, write_jsonl
from server_view import server_matches_db

base_dir, work, port = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
data = Path("/work/p17/data")
held = json.loads((data / "held.json").read_text())
base = [json.loads(l) for l in open(data / "base.jsonl", encoding="utf-8")]
trial = work / "t13"
if trial.exists():
    shutil.rmtree(trial)
shutil.copytree(base_dir, trial)
# the corpus the build replaces the graph with: base minus 150 papers, plus 20 held out,
# plus 5 base papers with a changed abstract
dropped = {r["id"] for r in base[::19][:150]}
changed = {r["id"]: dict(r, abstract=r["abstract"] + " Rebuilt with new results on ImageNet.")
           for r in base[7::211][:5] if r["id"] not in dropped}
corpus = [changed.get(r["id"], r) for r in base if r["id"] not in dropped] + held[:20]
cf = work / "t13-corpus.jsonl"
write_jsonl(cf, corpus)
views = []


def view(label):
    time.sleep(1)
    d = server_matches_db(srv.url(""), trial / "graph.db")
    views.append(d)
    log(f"  view {label}: {'== file' if not d else d}")


srv = Server(trial, port, work / "t13-server.log")
try:
    srv.wait_ready()
    time.sleep(3)
    # before the build: two server writes (lost in the build's replace, by design)
    srv.gql(ADD, {"p": [held[30]]})
    srv.gql(REMOVE, {"id": base[1]["id"]})
    # the build, with server writes racing it
    logf = open(work / "t13-build.out", "w")
    t0 = time.time()
    p = subprocess.Popen([PY, "-m", "citegraph", "--data-dir", str(trial), "build", str(cf)],
                         stdout=logf, stderr=subprocess.STDOUT, env=env(), cwd=str(REPO))
    racing = []

    def race():
        for j in range(4):
            time.sleep(2.0)
            r = held[40 + j]
            got = srv.gql(ADD, {"p": [r]})
            racing.append((r, got, time.time() - t0))

    th = threading.Thread(target=race)
    th.start()
    rc = p.wait(600)
    th.join(600)
    logf.close()
    log(f"build rc={rc} in {time.time() - t0:.1f}s: "
        f"{[l for l in (work / 't13-build.out').read_text().splitlines() if 'Added' in l or 'wait' in l]}")
    # the expected corpus: the build's, plus the racing writes that answered ok and
    # committed after the build (by commit order)
    import sqlite3
    db = sqlite3.connect(f"file:{trial/'graph.db'}?mode=ro", uri=True)
    commits = db.execute("select seq, pid from commits order by seq").fetchall()
    db.close()
    log(f"commits (seq, pid) last 8: {commits[-8:]}; build pid {p.pid}, server pid {srv.pid}")
    build_seq = max(s for s, pid in commits if pid == p.pid)
    exp = Expect(corpus)
    after_build = [s for s, pid in commits if s > build_seq]
    ok_racers = []
    for r, got, t in racing:
        ok = "errors" not in got and "http_error" not in got
        log(f"  racing add {r['id']} at {t:.1f}s: {'ok' if ok else json.dumps(got.get('errors'))[:200]}")
        if ok:
            ok_racers.append(r)
    # a racing add that answered ok before the build committed was replaced by the build;
    # one after it stays. Which is which: is the paper in the file now?
    db = sqlite3.connect(f"file:{trial/'graph.db'}?mode=ro", uri=True)
    stored = {i for (i,) in db.execute("select id from nodes where kind='Paper'")}
    db.close()
    for r in ok_racers:
        if r["id"] in stored:
            exp.add(r)
    log(f"  racing adds ok: {len(ok_racers)}, in the file after the build: "
        f"{sum(r['id'] in stored for r in ok_racers)}; commits after the build: {len(after_build)}")
    if len([r for r in ok_racers if r["id"] in stored]) != len(after_build):
        log("  NOTE: commits after the build != racing adds kept")
    view("after build")
    # then: the server's writes (whole path once, then region), a CLI add, more server writes
    for j, r in enumerate(held[50:53]):
        got = srv.gql(ADD, {"p": [r]})
        if "errors" not in got:
            exp.add(r)
        log(f"  server add {r['id']}: {json.dumps(got.get('data', got))[:150]}")
    got = srv.gql(REMOVE, {"id": corpus[10]["id"]})
    if "errors" not in got:
        exp.remove(corpus[10]["id"])
    f = work / "t13-c.jsonl"
    write_jsonl(f, [held[55], dict(corpus[20], abstract=corpus[20]["abstract"] + " After the build.")])
    rc2, out, err, _ = cli(trial, "add", str(f))
    if rc2 == 0:
        exp.add(held[55])
        exp.add(dict(corpus[20], abstract=corpus[20]["abstract"] + " After the build."))
    log(f"  cli add rc={rc2}")
    for r in held[56:58]:
        got = srv.gql(ADD, {"p": [r]})
        if "errors" not in got:
            exp.add(r)
    view("end")
finally:
    srv.stop()
diffs = rebuild_and_compare(trial, exp, work, "t13")
print("T13 RESULT", "SAME" if not diffs else "DIFFERENT", "views differing", sum(1 for v in views if v))
