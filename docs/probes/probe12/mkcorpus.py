"""Make JSONL corpora from ICLR 2021 (real text) with synthetic references (for CITES).

python probe/mkcorpus.py OUT.jsonl --start S --n N [--seed K] [--mutate FRAC] [--retitle FRAC]
  papers S..S+N of paperlist.tsv; references: 0-3 random ids / exact titles of papers in
  0..S+N (some dangling); --mutate: change that fraction of abstracts (a sentence appended);
  --retitle: change that fraction of titles.
"""
import argparse, csv, json, random, sys
csv.field_size_limit(10**8)
ap = argparse.ArgumentParser()
ap.add_argument("out"); ap.add_argument("--start", type=int, default=0)
ap.add_argument("--n", type=int, default=300); ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--mutate", type=float, default=0.0); ap.add_argument("--retitle", type=float, default=0.0)
ap.add_argument("--refseed", type=int, default=7)
ap.add_argument("--drop", type=str, default="")  # comma list of indexes to drop
a = ap.parse_args()
rows = list(csv.DictReader(open("/work/shared/data/iclr2021/paperlist.tsv"), delimiter="\t"))
pool = rows[: a.start + a.n]
sel = rows[a.start: a.start + a.n]
drop = {int(x) for x in a.drop.split(",") if x}
rr = random.Random(a.refseed)   # references fixed per paper id
mr = random.Random(a.seed)
with open(a.out, "w") as f:
    for i, r in enumerate(sel):
        if a.start + i in drop:
            continue
        refs = []
        pr = random.Random(f"{a.refseed}-{r['paper_id']}")
        for _ in range(pr.randint(0, 3)):
            t = pool[pr.randrange(len(pool))]
            refs.append(t["paper_id"] if pr.random() < 0.6 else t["title"])
        if pr.random() < 0.1:
            refs.append("nonexistent-" + str(pr.randrange(1000)))
        title, abstract = r["title"], r["abstract"]
        if mr.random() < a.mutate:
            abstract = abstract + " We also evaluate robustness to distribution shift on ImageNet."
        if mr.random() < a.retitle:
            title = "Revisited: " + title
        f.write(json.dumps({"id": r["paper_id"], "title": title, "abstract": abstract,
                            "keywords": [k.strip() for k in r["keywords"].split(",") if k.strip()],
                            "references": refs}) + "\n")
