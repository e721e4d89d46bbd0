"""Trial 5, on a base built with CITEGRAPH_SHARED_TERM_MAX_DF=0.1675 (so the linking cap
int(0.1675 N) flips between 486 and 487 at N = 2907/2908, right at the df of
concept:classification, 487): writes by the server (region path) and the CLI move N back
and forth across the gate; then 6 simultaneous addPapers on the server (4 may run or
wait, the rest WRITE_BUSY); in-batch duplicate ids (NFC + NFD), an update to another
paper's text; after each step the server's in-memory graph (its whole export) must
equal graph.db; at the end the file must equal a fresh build (same setting).

python t5_gate_and_view.py BASE_DIR(built with the setting) WORK_DIR PORT
"""
import json
import shutil
import sys
import threading
import time
from pathlib import Path

from lib17 import ADD, REMOVE, Expect, Server, cli, log, rebuild_and_compare, write_jsonl
from server_view import server_matches_db

SET = {"CITEGRAPH_SHARED_TERM_MAX_DF": "0.1675"}
base_dir, work, port = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
data = Path("/work/p17/data")
held = json.loads((data / "held.json").read_text())
base = [json.loads(l) for l in open(data / "base.jsonl", encoding="utf-8")]
trial = work / "t5"
if trial.exists():
    shutil.rmtree(trial)
shutil.copytree(base_dir, trial)
exp = Expect(base)
views = []


def check_view(srv, label):
    time.sleep(1.0)
    d = server_matches_db(srv.url(""), trial / "graph.db")
    views.append((label, d))
    log(f"  view after {label}: {'server == file' if not d else 'DIFFERENT: ' + '; '.join(d)[:600]}")


def s_add(srv, recs, label):
    got = srv.gql(ADD, {"p": recs})
    ok = "errors" not in got and "http_error" not in got
    log(f"{label} S-add {[r['id'][:16] for r in recs]} -> {json.dumps(got.get('data', got))[:300]}")
    return got, ok


def s_rm(srv, pid, label):
    got = srv.gql(REMOVE, {"id": pid})
    ok = "errors" not in got and "http_error" not in got
    log(f"{label} S-rm {pid} -> {json.dumps(got.get('data', got))[:200]}")
    if ok:
        exp.remove(pid)
    return ok


def c_add(recs, label):
    f = work / f"t5-{label}.jsonl"
    write_jsonl(f, recs)
    rc, out, err, dt = cli(trial, "add", str(f), extra_env=SET)
    lines = [l for l in (out + err).splitlines() if "Added" in l or "error" in l or "skipped" in l or "recomput" in l]
    log(f"{label} C-add {[r['id'][:16] for r in recs]} rc={rc} {dt:.1f}s {lines}")
    return rc


def c_rm(ids, label):
    rc, out, err, dt = cli(trial, "remove", *ids, extra_env=SET)
    lines = [l for l in (out + err).splitlines() if "Added" in l or "error" in l]
    log(f"{label} C-rm {ids} rc={rc} {dt:.1f}s {lines}")
    if rc == 0:
        for i in ids:
            exp.remove(i)
    return rc


srv = Server(trial, port, work / "t5-server.log", extra_env=SET)
try:
    srv.wait_ready()
    time.sleep(3)
    # N = 2906 (cap 486). Step across 2907/2908 several times, by both writers.
    H = held
    steps = [
        ("S-add", [H[0]]),          # 2907 (486)
        ("S-add", [H[1]]),          # 2908 (487): classification starts linking
        ("S-rm", H[1]["id"]),       # 2907: stops
        ("S-add", [H[1], H[2]]),    # 2909: starts
        ("C-rm", [H[2]["id"], H[1]["id"]]),  # 2907: stops (CLI)
        ("S-add", [H[3]]),          # 2908: starts (server after a CLI write: whole path)
        ("S-rm", H[3]["id"]),       # 2907: stops (region)
        ("C-add", [H[3]]),          # 2908: starts (CLI)
        ("S-rm", H[0]["id"]),       # 2907: stops
        ("S-add", [H[0]]),          # 2908
        ("S-rm", base[10]["id"]),   # 2907
        ("S-add", [base[10]]),      # 2908
    ]
    for i, (kind, arg) in enumerate(steps):
        if kind == "S-add":
            got, ok = s_add(srv, arg, f"g{i}")
            if ok:
                for r in arg:
                    exp.add(r)
        elif kind == "S-rm":
            s_rm(srv, arg, f"g{i}")
        elif kind == "C-add":
            if c_add(arg, f"g{i}") == 0:
                for r in arg:
                    exp.add(r)
        elif kind == "C-rm":
            c_rm(arg, f"g{i}")
        if i % 3 == 2:
            check_view(srv, f"g{i}")
    check_view(srv, "gate steps")
    mid = rebuild_and_compare(trial, exp, work, "t5-mid", extra_env=SET)

    # 6 simultaneous addPapers
    batches = [[H[10 + j]] for j in range(6)]
    res = [None] * 6

    def go(j):
        res[j] = srv.gql(ADD, {"p": batches[j]})

    ths = [threading.Thread(target=go, args=(j,)) for j in range(6)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(600)
    for j, got in enumerate(res):
        ok = "errors" not in got and "http_error" not in got
        log(f"concurrent {j}: {json.dumps(got.get('data') if ok else got.get('errors', got))[:250]}")
        if ok:
            for r in batches[j]:
                exp.add(r)
    check_view(srv, "concurrent")

    # in-batch duplicates: NFC and NFD spellings of one new id (server, then CLI)
    nfc, nfd = "dup-caf\u00e9", "dup-cafe\u0301"
    got, ok = s_add(srv, [dict(H[20], id=nfc), dict(H[21], id=nfd)], "dup-S")
    if ok:
        for r in got["data"]["addPapers"]["added"]:
            exp.add(dict(H[20], id=r) if r == nfc else dict(H[21], id=r))
    rc = c_add([dict(H[22], id="dup2-" + "\u00e9"), dict(H[23], id="dup2-e\u0301")], "dup-C")
    if rc in (0, 3):
        # whatever the CLI says it added (read back from the file)
        import sqlite3
        db = sqlite3.connect(f"file:{trial/'graph.db'}?mode=ro", uri=True)
        got_ids = [i for (i,) in db.execute("select id from nodes where id like 'dup2-%'")]
        db.close()
        log(f"  CLI dup batch stored: {[ascii(i) for i in got_ids]}")
        for i in got_ids:
            src = H[22] if i == "dup2-\u00e9" else H[23]
            exp.add(dict(src, id=i))
    # an update that gives a paper another paper's text: refused
    got, ok = s_add(srv, [dict(base[20], abstract=base[21]["abstract"])], "steal-S")
    rc = c_add([dict(base[22], abstract=base[23]["abstract"])], "steal-C")
    check_view(srv, "dups")
    log("server RSS kB", srv.rss_kb())
finally:
    srv.stop()
diffs = rebuild_and_compare(trial, exp, work, "t5", extra_env=SET)
bad_views = [v for v in views if v[1]]
print("T5 RESULT", "SAME" if not diffs and not mid else "DIFFERENT", "mid:", "SAME" if not mid else "DIFFERENT",
      "views differing:", len(bad_views), "of", len(views))
