"""Defect 1 (probe 17): a remove by the key spelling of a stored id that is not its own key
(Kelvin sign U+212A, Angstrom sign U+212B) is refused by both real entry points,
`citegraph remove` and the server's `removePaper`, although an add by that same spelling
updates the paper, and 6678fcf says such a paper "is found by key, for a remove".

The pipeline's own `_found_ids` does find it by key (6678fcf), but the CLI resolves the
argument first with graph.lookup.paper_to_remove and the API with api's `find`, and
both try only graph.ids.spellings (as given, trimmed, NFC, NFD) and names.

python repro_remove_by_key.py   (needs PYTHONPATH=<clone>, HF_HUB_OFFLINE=1; ~1 min;
uses port 18799; exits 1 while the defect is there)
"""
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib17 import PAPER, REMOVE, Server, cli, write_jsonl  # noqa: E402

tsv = Path("/work/shared/data/iclr2021/paperlist.tsv").read_text(encoding="utf-8").splitlines()[1:7]
recs = []
for i, line in enumerate(tsv):
    pid, title, link, kw, abstract = line.split("\t")
    recs.append({"id": pid, "title": title, "abstract": abstract})
recs[0]["id"] = "\u212a-3"                    # KELVIN SIGN: id_key is ASCII "K-3"
recs[1]["id"] = "\u212bngstr\u00f6m-1"        # ANGSTROM SIGN: id_key starts with U+00C5
d = Path(tempfile.mkdtemp(prefix="p17-key-"))
f = d / "in.jsonl"
write_jsonl(f, recs)
rc, out, err, _ = cli(d / "data", "build", str(f))
assert rc == 0, (out, err)


def stored():
    db = sqlite3.connect(f"file:{d/'data'/'graph.db'}?mode=ro", uri=True)
    ids = sorted(i for (i,) in db.execute("select id from nodes where kind='Paper'"))
    db.close()
    return ids


failures = []
print("stored ids:", [ascii(i) for i in stored()])

# an add by the ASCII spelling updates the Kelvin-sign paper (the key rule works for adds)
upd = dict(recs[0], id="K-3", abstract=recs[0]["abstract"] + " We also report results on ImageNet.")
write_jsonl(d / "upd.jsonl", [upd])
rc, out, err, _ = cli(d / "data", "add", str(d / "upd.jsonl"))
print("citegraph add id 'K-3' ->", rc, [l for l in out.splitlines() if "Added" in l])

# 1. the CLI: remove by the key spelling
for ref in ("K-3", "\u00c5ngstr\u00f6m-1"):
    rc, out, err, _ = cli(d / "data", "remove", ref)
    print(f"citegraph remove {ascii(ref)} -> rc={rc} {err.strip() or out.strip().splitlines()[-1:]}")
    if rc != 0:
        failures.append(f"CLI remove {ascii(ref)}: rc={rc}")

# 2. the server: removePaper by the key spelling (rebuild the folder first)
shutil.rmtree(d / "data")
rc, out, err, _ = cli(d / "data", "build", str(f))
srv = Server(d / "data", 18799, d / "server.log")
try:
    srv.wait_ready(300)
    for ref in ("K-3", "\u00c5ngstr\u00f6m-1"):  # (information only: a lookup by the key spelling)
        got = srv.gql(PAPER, {"id": ref})
        print(f"paper({ascii(ref)}) ->", json.dumps(got)[:200])
    for ref in ("K-3", "\u00c5ngstr\u00f6m-1"):
        got = srv.gql(REMOVE, {"id": ref})
        print(f"removePaper({ascii(ref)}) ->", json.dumps(got)[:300])
        if "errors" in got or "http_error" in got:
            failures.append(f"API removePaper {ascii(ref)}: {got.get('errors', got)[0]['message'] if 'errors' in got else got}")
finally:
    srv.stop()
print("stored ids after:", [ascii(i) for i in stored()])
print("FAIL" if failures else "PASS", failures)
sys.exit(1 if failures else 0)
