"""Trial 9: a random sequence of server and CLI writes at 3k papers (new papers with odd id
spellings, updates of text/title/keywords, removes by other spellings, re-adds, CLI
batches), then: every expected paper stored with its expected text, the server's memory
equal to the file, and the file equal to a rebuild.

python t9_fuzz.py BASE_DIR WORK_DIR PORT SEED N_OPS
"""
import json
import random
import shutil
import sqlite3
import sys
import time
import unicodedata
from pathlib import Path

from lib17 import ADD, REMOVE, Expect, Server, cli, log, rebuild_and_compare, write_jsonl
from server_view import server_matches_db

from graph.ids import id_key
from graph.ingest import paper_from_record

base_dir, work, port, seed, n_ops = (Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]),
                                     int(sys.argv[4]), int(sys.argv[5]))
rng = random.Random(seed)
data = Path("/work/p17/data")
held = json.loads((data / "held.json").read_text())
base = [json.loads(l) for l in open(data / "base.jsonl", encoding="utf-8")]
trial = work / f"t9-{seed}"
if trial.exists():
    shutil.rmtree(trial)
shutil.copytree(base_dir, trial)
exp = Expect(base)
removed = {}  # id_key -> original record (to re-add)
pool = list(held)
counter = [0]
WORDS = ["diffusion models", "graph neural networks", "ImageNet", "CIFAR-10", "BERT",
         "reinforcement learning", "contrastive learning", "transformers", "meta-learning",
         "adversarial robustness", "federated learning", "knowledge distillation"]
ODD = [lambda s: "\u212a-" + s, lambda s: "caf\u00e9-" + s, lambda s: "cafe\u0301-" + s,
       lambda s: s + "   ", lambda s: "\u212bng-" + s, lambda s: s]


def sentence():
    counter[0] += 1
    return f"We also study {rng.choice(WORDS)} and {rng.choice(WORDS)} (variant {seed}-{counter[0]})."


def other_spelling(pid):
    if pid.isascii():
        return pid if rng.random() < 0.7 else "  " + pid + " "
    forms = [pid, unicodedata.normalize("NFC", pid), unicodedata.normalize("NFD", pid)]
    return rng.choice(forms)


BASE_IDS = {r["id"] for r in base}


def present():
    """Every stored paper; 40% of the time only the ones this run added (odd ids)."""
    allp = [sp for sp, _ in exp.papers.values()]
    mine = [sp for sp in allp if sp not in BASE_IDS]
    return mine if mine and rng.random() < 0.4 else allp


def gen_record():
    """One valid record: a new paper, an update, or a re-add."""
    r = rng.random()
    if r < 0.35:
        if pool and rng.random() < 0.5:
            rec = dict(pool.pop(rng.randrange(len(pool))))
            if rng.random() < 0.4:
                rec["id"] = rng.choice(ODD)(rec["id"])
            return rec
        src = rng.choice(base)
        counter[0] += 1
        return dict(src, id=rng.choice(ODD)(f"v{seed}-{counter[0]}"),
                    abstract=src["abstract"] + " " + sentence())
    if r < 0.8:
        pid = rng.choice(present())
        cur = exp.record(pid)
        what = rng.random()
        if what < 0.6:
            return dict(cur, id=other_spelling(pid), abstract=cur["abstract"] + " " + sentence())
        if what < 0.85:
            counter[0] += 1
            return dict(cur, id=other_spelling(pid), title=(cur.get("title") or "T") + f" v{counter[0]}")
        return dict(cur, id=other_spelling(pid), keywords=[rng.choice(WORDS), rng.choice(WORDS)])
    if removed:
        k = rng.choice(sorted(removed))
        return removed.pop(k)
    return None


def note_removed(pid):
    k = id_key(pid)
    rec = exp.papers[k][1]
    exp.remove(pid)
    removed[k] = rec


srv = Server(trial, port, work / f"t9-{seed}-server.log")
ops_log = []
try:
    srv.wait_ready()
    time.sleep(3)
    for i in range(n_ops):
        r = rng.random()
        if r < 0.45:  # server add of 1-3 records
            recs = []
            keys = set()
            for _ in range(rng.randint(1, 3)):
                rec = gen_record()
                if rec is not None and id_key(rec["id"]) not in keys:
                    keys.add(id_key(rec["id"]))
                    recs.append(rec)
            if not recs:
                continue
            got = srv.gql(ADD, {"p": recs})
            ok = "errors" not in got and "http_error" not in got
            d = got.get("data", {}).get("addPapers") if ok else None
            if ok and not d["problems"]:
                for rec in recs:
                    exp.add(rec)
            else:
                log(f"op{i} S-add PROBLEM {json.dumps(d or got)[:400]}")
                # apply what was added; leave the rest (logged for a look)
                for rec in recs:
                    if d and id_key(rec["id"]) in {id_key(a) for a in d["added"]}:
                        exp.add(rec)
            ops_log.append((i, "S-add", [rec["id"] for rec in recs], ok))
            log(f"op{i} S-add {[ascii(rec['id'])[:20] for rec in recs]} ok={ok}")
        elif r < 0.70:  # server remove by some spelling
            pid = rng.choice(present())
            ref = other_spelling(pid)
            got = srv.gql(REMOVE, {"id": ref})
            ok = "errors" not in got and "http_error" not in got
            if ok:
                note_removed(pid)
            else:
                log(f"op{i} S-rm {ascii(ref)} ERROR {json.dumps(got)[:300]}")
            ops_log.append((i, "S-rm", ref, ok))
            log(f"op{i} S-rm {ascii(ref)[:24]} ok={ok}")
        elif r < 0.88:  # CLI add of 1-4 records
            recs, keys = [], set()
            for _ in range(rng.randint(1, 4)):
                rec = gen_record()
                if rec is not None and id_key(rec["id"]) not in keys:
                    keys.add(id_key(rec["id"]))
                    recs.append(rec)
            if not recs:
                continue
            f = work / f"t9-{seed}-op{i}.jsonl"
            write_jsonl(f, recs)
            rc, out, err, dt = cli(trial, "add", str(f))
            if rc == 0:
                for rec in recs:
                    exp.add(rec)
            else:
                log(f"op{i} C-add rc={rc}: {(out + err)[-600:]}")
            ops_log.append((i, "C-add", [rec["id"] for rec in recs], rc))
            log(f"op{i} C-add {[ascii(rec['id'])[:20] for rec in recs]} rc={rc} {dt:.1f}s")
        else:  # CLI remove of 1-2
            pids = rng.sample(present(), 2 if rng.random() < 0.4 else 1)
            refs = [other_spelling(p) for p in pids]
            rc, out, err, dt = cli(trial, "remove", *refs)
            if rc == 0:
                for p in pids:
                    note_removed(p)
            else:
                log(f"op{i} C-rm {[ascii(x) for x in refs]} rc={rc}: {(out + err)[-300:]}")
            ops_log.append((i, "C-rm", refs, rc))
            log(f"op{i} C-rm {[ascii(x)[:20] for x in refs]} rc={rc} {dt:.1f}s")
    time.sleep(1)
    view = server_matches_db(srv.url(""), trial / "graph.db")
    log("server view:", "== file" if not view else view)
finally:
    srv.stop()
db = sqlite3.connect(f"file:{trial/'graph.db'}?mode=ro", uri=True)
stored = {i: json.loads(p)["abstract"] for i, p in db.execute("select id, props from nodes where kind='Paper'")}
db.close()
want = {sp: paper_from_record(r, source="x").abstract for sp, r in exp.papers.values()}
lost = sorted(set(want) - set(stored))
extra = sorted(set(stored) - set(want))
wrong = sorted(i for i in set(want) & set(stored) if want[i] != stored[i])
log(f"papers: {len(stored)} stored; missing {[ascii(x) for x in lost[:5]]}, extra {[ascii(x) for x in extra[:5]]}, wrong text {[ascii(x) for x in wrong[:5]]}")
diffs = rebuild_and_compare(trial, exp, work, f"t9-{seed}")
print(f"T9 seed {seed} RESULT", "SAME" if not diffs else "DIFFERENT", "ops", len(ops_log),
      "lost/extra/wrong", len(lost), len(extra), len(wrong), "view", "ok" if not view else "DIFF")
