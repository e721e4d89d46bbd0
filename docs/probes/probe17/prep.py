"""Split the ICLR 2021 TSV into a base corpus (JSONL) and held-out records.

python prep.py OUTDIR  -> OUTDIR/all.json (every record as a dict), base.jsonl, held.json

Records are dicts {id, title, url, keywords: [..], abstract}: the same dict goes to a
JSONL file (CLI) and to GraphQL's PaperInput, and this checks that both give equal Papers.
"""
import csv
import json
import random
import sys
from pathlib import Path

from graph.ingest import paper_from_record

csv.field_size_limit(10**8)
out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
rows = []
with open("/work/shared/data/iclr2021/paperlist.tsv", encoding="utf-8", newline="") as f:
    for r in csv.DictReader(f, delimiter="\t"):
        kw = [k.strip() for k in (r["keywords"] or "").split(",") if k.strip()]
        rec = {"id": r["paper_id"], "title": r["title"], "url": r["link"], "abstract": r["abstract"]}
        if kw:
            rec["keywords"] = kw
        rows.append(rec)
# each record must be a Paper the same way from a file and from the API
for rec in rows:
    a = paper_from_record(rec, source="x")
    b = paper_from_record(json.loads(json.dumps(rec)), source="x")
    assert a == b, rec["id"]
rng = random.Random(17)
held_idx = set(rng.sample(range(len(rows)), 60))
base = [r for i, r in enumerate(rows) if i not in held_idx]
held = [r for i, r in enumerate(rows) if i in held_idx]
(out / "all.json").write_text(json.dumps(rows))
with open(out / "base.jsonl", "w", encoding="utf-8") as f:
    for r in base:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
(out / "held.json").write_text(json.dumps(held))
print(len(rows), "records;", len(base), "base;", len(held), "held out")
