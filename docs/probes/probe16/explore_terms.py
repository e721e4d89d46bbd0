"""Which terms the extractor gives each atom sentence (to design term-churn texts)."""
import os, sys
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from graph.ingest import paper_from_record
from graph.build import Pipeline
from tests.support.seeds import EMBED_CACHE, seed_settings
import tempfile
from pathlib import Path
from atoms import ATOMS
d = Path(tempfile.mkdtemp())
pl = Pipeline(seed_settings(d), cache_dir=EMBED_CACHE)
papers = [paper_from_record({"id": f"a{i}", "title": "t", "abstract": a}, source="x") for i, a in enumerate(ATOMS)]
ex = pl.extract_all(papers)
for i, a in enumerate(ATOMS):
    e = ex[f"a{i}"]
    print(i, a[:50], "->", [getattr(c, "key", None) or getattr(c, "term", None) or str(c)[:40] for c in e.concepts], [str(d)[:50] for d in e.datasets])
pl.close()
