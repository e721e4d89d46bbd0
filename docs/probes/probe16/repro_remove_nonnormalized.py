"""Minimal reproduction (probe 16, defect 1): a stored id in neither NFC nor NFD form
(here with U+212B ANGSTROM SIGN; an id mixing a composed and a decomposed accent does the
same) is found by an add through its NFC spelling (graph.build._merge_into matches on
id_key), but a remove through that same spelling says "no paper with id" on both paths
(graph.build._stored_spellings tries graph.ids.spellings(ref) only: the text as given,
trimmed, its NFC and its NFD, never the stored id's key).

Run: HF_HUB_OFFLINE=1 PYTHONPATH=/work/probe16:/work/probe16/docs/probes/probe16 \
     /work/main/.venv/bin/python docs/probes/probe16/repro_remove_nonnormalized.py
"""
import tempfile
import unicodedata
from pathlib import Path

from harness16 import EMBED_CACHE, SEED_PAPERS, P, papers_of

from graph.build import Pipeline
from graph.errors import NotFoundError
from graph.ids import id_key
from graph.store.embedded import EmbeddedStore
from tests.support.seeds import seed_settings

stored_id = "\u212bngstr\u00f6m-1"  # as first given: kept as the stored spelling
typed = unicodedata.normalize("NFC", stored_id)  # "\u00c5ngstr\u00f6m-1", what a keyboard gives
assert id_key(typed) == id_key(stored_id)  # one id by graph.ids' rule

for incremental in (True, False):
    d = Path(tempfile.mkdtemp())
    store = EmbeddedStore(d / "g.db")
    pl = Pipeline(seed_settings(d), cache_dir=EMBED_CACHE, incremental=incremental)
    papers = [P(s.id, s.abstract) for s in SEED_PAPERS[:4]] + [
        P(stored_id, SEED_PAPERS[4].abstract)]
    pl.run(store, add_papers=papers, replace=True)
    if not incremental:
        pl.close()
        pl = Pipeline(seed_settings(d), cache_dir=EMBED_CACHE, incremental=False)
    rep = pl.run(store, add_papers=[P(typed, SEED_PAPERS[5].abstract)])
    print(f"incremental={incremental}: add by NFC spelling -> updated={rep.updated} "
          f"added={rep.added}; papers: {sorted(ascii(p) for p in papers_of(store.snapshot()))}")
    try:
        rep = pl.run(store, remove=[typed])
        print(f"incremental={incremental}: remove by NFC spelling -> removed {rep.removed}")
    except NotFoundError as exc:
        print(f"incremental={incremental}: remove by NFC spelling -> NotFoundError: {exc}")
    pl.close()
    store.close()
