"""graph.extract.incremental.Resolver against resolve(): every update equals a fresh resolve."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest

from graph.extract import Extraction, Resolution, extract, resolve
from graph.extract.incremental import Resolver
from graph.extract.resolve import _STANDALONE_MIN, _STANDALONE_SHARE
from graph.model import concept_id
from tests.unit.test_extract import _seed_abstracts

_HERE = Path(__file__).resolve()
ICLR2021 = next(
    (
        base / "shared" / "data" / "iclr2021" / "paperlist.tsv"
        for base in (_HERE.parents[3], _HERE.parents[4])  # beside the checkout, or a worktree
        if (base / "shared" / "data" / "iclr2021" / "paperlist.tsv").exists()
    ),
    _HERE.parents[3] / "shared" / "data" / "iclr2021" / "paperlist.tsv",
)


def _same(a: Resolution, b: Resolution) -> None:
    assert list(a.concepts) == list(b.concepts)
    assert a.concepts == b.concepts
    assert list(a.datasets) == list(b.datasets)
    assert a.datasets == b.datasets
    assert a.paper_terms == b.paper_terms
    assert a.terms == b.terms


def _check(resolver: Resolver, current: dict[str, Extraction]) -> Resolution:
    got = resolver.update(dict(current))
    _same(got, resolve(current))
    return got


@pytest.fixture(scope="module")
def seed_extractions() -> dict[str, Extraction]:
    return {pid: extract(text) for pid, text in _seed_abstracts().items()}


def _random_walk(exs: dict[str, Extraction], start: int, steps: int, seed: int) -> None:
    rng = random.Random(seed)
    ids = sorted(exs)
    rng.shuffle(ids)
    current = {p: exs[p] for p in ids[:start]}
    rest = ids[start:]
    resolver = Resolver()
    _check(resolver, current)
    for _ in range(steps):
        op = rng.random()
        if op < 0.45 and rest:
            for p in rest[: rng.randint(1, 8)]:
                current[p] = exs[p]
                rest.remove(p)
        elif op < 0.8 and len(current) > 2:
            for p in rng.sample(sorted(current), rng.randint(1, min(5, len(current) - 1))):
                del current[p]
                rest.append(p)
        else:  # remove some and add others in one update
            gone = rng.sample(sorted(current), min(3, len(current) - 1))
            for p in rest[:3]:
                current[p] = exs[p]
            rest = rest[3:] + gone
            for p in gone:
                del current[p]
        _check(resolver, current)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_adds_and_removes_equal_full_resolve(
    seed_extractions: dict[str, Extraction], seed: int
) -> None:
    _random_walk(seed_extractions, 30, 25, seed)


def test_add_then_remove_returns_to_the_same_resolution(
    seed_extractions: dict[str, Extraction],
) -> None:
    ids = sorted(seed_extractions)
    base = {p: seed_extractions[p] for p in ids[:50]}
    resolver = Resolver()
    first = _check(resolver, base)
    _check(resolver, {**base, **{p: seed_extractions[p] for p in ids[50:]}})
    again = _check(resolver, base)
    _same(again, first)
    assert resolver.changed_papers  # the removal did change some papers' terms


def test_an_acronym_defined_by_a_new_paper_changes_old_papers() -> None:
    bare = {
        f"old{i}": extract(f"We probe the DKV cache of a model with {w} prompts. DKV helps.")
        for i, w in enumerate(["short", "long", "noisy"])
    }
    resolver = Resolver()
    before = _check(resolver, bare)
    cid = concept_id("distributed key value")
    assert all(cid not in terms for terms in before.paper_terms.values())
    defines = extract("A distributed key value (DKV) store shards a cache across machines.")
    after = _check(resolver, {**bare, "new": defines})
    # the old papers that wrote DKV alone now point at the long form the new paper gave
    assert all(cid in after.paper_terms[p] for p in bare)
    assert set(bare) <= resolver.changed_papers
    # and go back when it leaves
    _same(_check(resolver, bare), before)


def test_a_changed_text_is_a_remove_and_an_add(seed_extractions: dict[str, Extraction]) -> None:
    ids = sorted(seed_extractions)
    current = {p: seed_extractions[p] for p in ids[:40]}
    resolver = Resolver()
    _check(resolver, current)
    current[ids[0]] = seed_extractions[ids[60]]  # same id, another abstract
    _check(resolver, current)
    assert ids[0] in resolver.changed_papers
    assert resolver.update(dict(current)) is resolver.update(dict(current))  # nothing to do


def test_many_steps_of_the_standalone_threshold(
    seed_extractions: dict[str, Extraction], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The threshold steps every 20 papers here (at 3k it steps every 500): each step
    recomputes only the papers whose groups it flips, and still equals resolve()."""
    import importlib

    inc = importlib.import_module("graph.extract.incremental")
    res = importlib.import_module("graph.extract.resolve")  # the package's resolve() hides it

    for module in (inc, res):
        monkeypatch.setattr(module, "_STANDALONE_MIN", 1)
        monkeypatch.setattr(module, "_STANDALONE_SHARE", 0.05)
    ids = sorted(seed_extractions)
    current = {p: seed_extractions[p] for p in ids[:18]}
    resolver = Resolver()
    _check(resolver, current)
    steps = set()
    for start in range(18, len(ids), 5):  # up across 20, 40 and 60 papers
        before = resolver._common()
        current.update({p: seed_extractions[p] for p in ids[start : start + 5]})
        _check(resolver, current)
        if resolver._common() != before:
            steps.add(resolver._common())
    for p in ids[:45]:  # and down across them in one update
        del current[p]
    _check(resolver, current)
    assert steps == {2, 3, 4}


@pytest.mark.skipif(not ICLR2021.exists(), reason="ICLR 2021 reference data not present")
def test_iclr_across_the_standalone_threshold() -> None:
    """Near N = 1500 the 'used on its own' threshold steps from 3 to 4 papers and back."""
    with ICLR2021.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))[:1520]
    exs = {r["paper_id"]: extract(r["abstract"]) for r in rows if r.get("abstract")}
    edge = int(_STANDALONE_MIN / _STANDALONE_SHARE)  # the N where the threshold steps
    assert len(exs) > edge + 10
    ids = sorted(exs)
    current = {p: exs[p] for p in ids[: edge - 3]}
    resolver = Resolver()
    _check(resolver, current)
    for batch in (ids[edge - 3 : edge + 4], ids[edge + 4 : edge + 9]):
        current.update({p: exs[p] for p in batch})
        _check(resolver, current)
    for p in ids[:10]:
        del current[p]
    _check(resolver, current)


def _mentions(words: list[str], evidence: str = "S0.") -> Extraction:
    from graph.extract.base import TermMention

    ms = tuple(TermMention(w, w, 1, evidence, "concept") for w in words)
    return Extraction(ms, (), (), "")


def test_a_df_move_reranks_a_capped_paper_without_running_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A paper over the cap of concepts keeps its 18 most common (all else equal): a df
    move re-runs its step F only when the cut it makes moves, and the result is resolve()'s
    either way."""
    from graph.extract.resolve import _MAX_CONCEPTS

    words = [f"zorbex{chr(97 + i)}" for i in range(_MAX_CONCEPTS + 4)]
    current = {"big": _mentions(words)}
    for j, w in enumerate(words):  # concept j in j + 1 other papers: distinct dfs
        for k in range(j + 1):
            current[f"f{j:02d}-{k}"] = _mentions([w, f"quillon{j}x{k}"])
    resolver = Resolver()
    _check(resolver, current)
    kept = set(resolver.paper_terms("big"))
    assert len(kept) == _MAX_CONCEPTS
    ran: list[str] = []
    step_f = Resolver._step_f

    def counted(self: Resolver, p: str) -> None:
        ran.append(p)
        step_f(self, p)

    monkeypatch.setattr(Resolver, "_step_f", counted)
    # the most common concept gets more common: the cut does not move
    current["more-top"] = _mentions([words[-1], "quillontop"])
    _check(resolver, current)
    assert "big" not in ran and set(resolver.paper_terms("big")) == kept
    # the least common one overtakes the cut: big keeps another set of concepts
    ran.clear()
    for k in range(6):
        current[f"more-low-{k}"] = _mentions([words[0], f"quillonlow{k}"])
    got = _check(resolver, current)
    assert "big" in ran
    assert set(got.paper_terms["big"]) != kept
    assert concept_id(words[0]) in got.paper_terms["big"]
    # and back (a remove moves the cut back)
    for k in range(6):
        del current[f"more-low-{k}"]
    _check(resolver, current)
    assert set(resolver.paper_terms("big")) == kept


@pytest.mark.parametrize("seed", range(12))
def test_capped_papers_follow_counts_that_cross_in_one_update(seed: int) -> None:
    """Papers over the cap keep their most common concepts. A concept whose count moves
    over a span no other count holds keeps its place against every other (its capped
    papers are not re-ranked); counts that meet or cross in one update (papers removed
    and added at once) must re-rank them. Every update equals resolve()."""
    from graph.extract.resolve import _MAX_CONCEPTS

    rng = random.Random(4100 + seed)
    n = _MAX_CONCEPTS + 6
    words = [f"vorpal{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(n)]
    # concept j in 3j + 1 one-topic papers (distinct counts, gaps of 3), and a few papers
    # holding every concept: cut at the sixth least common
    current = {f"big{b}": _mentions(words) for b in range(3)}
    made = 0
    for j, w in enumerate(words):
        for _ in range(3 * j + 1):
            current[f"f{made:04d}"] = _mentions([w, f"tumtum{made}"])
            made += 1
    resolver = Resolver()
    _check(resolver, current)
    for _ in range(16):
        # around the cut: two or three concepts gain or lose 1-6 papers each, in one update
        for j in rng.sample(range(3, 9), rng.randint(2, 3)):
            mine = sorted(p for p, ex in current.items()
                          if p.startswith("f") and ex.concepts[0].key == words[j])
            if rng.random() < 0.5 and len(mine) > 6:
                for p in rng.sample(mine, rng.randint(1, 6)):
                    del current[p]
            else:
                for _ in range(rng.randint(1, 6)):
                    current[f"f{made:04d}"] = _mentions([words[j], f"tumtum{made}"])
                    made += 1
        _check(resolver, current)


def test_two_counts_that_jump_past_each_other_move_the_cut() -> None:
    """Concept 5 (16 papers) gains four while concept 6 (19) loses four, in one update:
    each count ends outside the other's span (20 and 15), so neither alone looks moved
    past another; together they swap at the cut, and the capped papers must follow."""
    from graph.extract.resolve import _MAX_CONCEPTS

    n = _MAX_CONCEPTS + 6
    words = [f"vorpal{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(n)]
    current = {f"big{b}": _mentions(words) for b in range(2)}
    for j, w in enumerate(words):
        for k in range(3 * j + 1):
            current[f"f{j:02d}-{k:02d}"] = _mentions([w, f"tumtum{j}x{k}"])
    resolver = Resolver()
    before = _check(resolver, current)
    assert concept_id(words[6]) in before.paper_terms["big0"]
    assert concept_id(words[5]) not in before.paper_terms["big0"]
    for k in range(4):
        current[f"up-{k}"] = _mentions([words[5], f"tumtumup{k}"])
        del current[f"f06-{k:02d}"]
    after = _check(resolver, current)
    assert concept_id(words[5]) in after.paper_terms["big0"]
    assert concept_id(words[6]) not in after.paper_terms["big0"]
