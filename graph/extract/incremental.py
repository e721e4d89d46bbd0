"""Resolution kept current as papers come and go: :func:`~graph.extract.resolve.resolve`'s
answer for the cost of what a change can reach.

:func:`resolve` is a chain of per-paper steps joined by corpus-wide counts (acronym
definitions, dataset names, a group's document frequency, how many papers use a term
on its own, the corpus size, each concept's paper count). Each per-paper step reads
those counts only at keys its own paper names, so a :class:`Resolver` keeps every
paper's intermediate result and, for each count, the papers that read it. An update
retracts the changed papers' contributions, adds the new ones, and recomputes a step
of an old paper only when a value that step read has changed; a change to the corpus
size's threshold (``common``) recomputes only the papers holding a group whose flag it
flips. The steps are those of ``resolve``, in the same order;
``tests/unit/test_incremental_resolve.py``
checks the result against ``resolve`` after random adds and removes.

Steps per paper, and what each reads besides its own extraction:

* A (groups): mentions grouped by their fold with acronyms expanded; reads the
  corpus's unambiguous long form of each acronym word, and whether a fold names a
  dataset;
* B (keep): which groups the paper keeps; reads whether a group is defined as an
  acronym's long or short form, and whether its document frequency is >= 2;
* C (final): drops terms only written inside longer ones; reads whether a term is
  used on its own by >= ``common`` papers (``common`` grows with N);
* E (concept ids): the concepts of its final groups; reads each group's concept id;
* F (terms): weights and filters; reads each concept's paper count (only whether it is
  1, unless the paper has more than the cap of concepts), whether it is defined, its
  name, and each dataset's id.

Between C and E, each touched group's concept is recomputed from the group's summed
mentions, and a concept id that several groups share is rebuilt from all of them.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping

import numpy as np
from numpy.typing import NDArray

from graph.extract.base import Extraction, PaperTerm, Resolution, TermMention
from graph.extract.lexicon import _HEAD_CATEGORY, _TECH_HEADS
from graph.extract.resolve import (
    _DOMINANT,
    _MAX_CONCEPTS,
    _STANDALONE_MIN,
    _STANDALONE_SHARE,
    _canonical,
    _label_name,
    _weight,
)
from graph.extract.tokens import (
    _category,
    _everyday_word,
    _fold,
    _head_of,
    _is_acronym,
    _lower_acronym,
    _verb_ing,
)
from graph.model import Concept, Dataset, NodeKind, concept_id, dataset_id

_Group = list[tuple[TermMention, str]]
_A, _B, _C, _E, _F = range(5)


class _Tally:
    """Sums per key with the number of contributions, so a key vanishes only when its
    last contribution is retracted (a zero count keeps a key, as a Counter += 0 does)."""

    __slots__ = ("sums",)

    def __init__(self) -> None:
        self.sums: dict[str, list[int]] = {}

    def add(self, key: str, amount: int, sign: int) -> None:
        cell = self.sums.get(key)
        if cell is None:
            cell = self.sums[key] = [0, 0]
        cell[0] += sign * amount
        cell[1] += sign
        if cell[1] == 0:
            del self.sums[key]

    def counter(self) -> Counter[str]:
        return Counter({k: v[0] for k, v in self.sums.items()})

    def __bool__(self) -> bool:
        return bool(self.sums)


def _index(index: dict[str, set[str]], keys: Iterable[str], pid: str, add: bool) -> None:
    for k in keys:
        if add:
            index.setdefault(k, set()).add(pid)
        else:
            ps = index.get(k)
            if ps is not None:
                ps.discard(pid)
                if not ps:
                    del index[k]


class _Watch:
    """Values of a count before this update touched them (to tell which flags moved)."""

    def __init__(self) -> None:
        self.before: dict[str, int] = {}

    def note(self, key: str, value: int) -> None:
        if key not in self.before:
            self.before[key] = value


class Resolver:
    """:func:`resolve` of a set of papers, updated in place as the set changes."""

    def __init__(self) -> None:
        self.ex: dict[str, Extraction] = {}
        # corpus-wide inputs, summed over papers
        self.defs: dict[str, Counter[str]] = {}  # short (lower) -> long key -> definitions
        self.dfolds: Counter[str] = Counter()  # dataset fold -> mentions
        self.sforms: dict[str, Counter[str]] = {}  # fold of a long form -> short form -> n
        self.d_names: dict[str, Counter[str]] = {}  # dataset fold -> name -> mentions
        self.unamb: dict[str, str] = {}
        self.global_long: dict[str, str] = {}
        self.defined_refs: Counter[str] = Counter()  # fold -> shorts naming it defined
        # step A
        self.groups: dict[str, dict[str, _Group]] = {}
        self.read_words: dict[str, set[str]] = {}
        self.read_folds: dict[str, set[str]] = {}
        self.by_word: dict[str, set[str]] = {}
        self.by_fold: dict[str, set[str]] = {}
        self.by_group: dict[str, set[str]] = {}
        self.df: Counter[str] = Counter()
        # step B
        self.keep: dict[str, dict[str, _Group]] = {}
        self.held: dict[str, set[str]] = {}
        self.names: dict[str, dict[str, str]] = {}
        self.by_held: dict[str, set[str]] = {}
        self.standalone: Counter[str] = Counter()
        # step C
        self.final: dict[str, dict[str, _Group]] = {}
        self.by_final: dict[str, set[str]] = {}
        self.g_keys: dict[str, _Tally] = {}
        self.g_surf: dict[str, _Tally] = {}
        self.g_cat: dict[str, _Tally] = {}
        self.g_acr: dict[str, _Tally] = {}
        # groups -> concepts
        self.group_id: dict[str, str] = {}
        self.group_info: dict[str, tuple[str, frozenset[str], str]] = {}
        self.cid_groups: dict[str, set[str]] = {}
        self.concepts: dict[str, Concept] = {}
        self.defined_ids: set[str] = set()
        # datasets
        self.dataset_group: dict[str, str] = {}
        self.did_folds: dict[str, set[str]] = {}
        self.datasets: dict[str, Dataset] = {}
        # step E
        self.pcids: dict[str, set[str]] = {}
        self.by_cid: dict[str, set[str]] = {}
        self.df_of: Counter[str] = Counter()
        # step F
        self.terms: dict[str, list[PaperTerm]] = {}
        self.pterms: dict[str, dict[str, float]] = {}
        self.ranked: dict[str, set[str]] = {}  # papers that ranked by df_of (over the cap)
        self.by_ranked: dict[str, set[str]] = {}
        # a ranked paper's concepts before the cut (id -> weight, evidence, count), the
        # ones it defines, and the ones the cut kept: a df_of move alone re-ranks these
        # instead of running step F again
        self.cut: dict[str, tuple[dict[str, tuple[float, str, int]], set[str], set[str]]] = {}
        self.by_dfold: dict[str, set[str]] = {}
        self._result: Resolution | None = None
        # how many concepts have each df_of count, as of the last update's end (None: not
        # known; counted when next needed)
        self._dof_hist: NDArray[np.int64] | None = None
        # per update: counts' values before it, and the groups it touched
        self._df_w, self._sa_w, self._dof_w = _Watch(), _Watch(), _Watch()
        self._defined_w, self._dfold_w = _Watch(), _Watch()
        self._touched: set[str] = set()
        #: papers whose terms the last update changed, new and removed ones included
        self.changed_papers: set[str] = set()
        #: concept and dataset ids whose node the last update may have changed (name,
        #: aliases, category, existence): a superset
        self.changed_terms: set[str] = set()

    # ------------------------------------------------------------------ public
    def update(self, extractions: Mapping[str, Extraction]) -> Resolution:
        """The resolution of ``extractions``, reusing what the previous call computed."""
        if self.advance(extractions) or self._result is None:
            self._result = self._resolution()
        return self._result

    def advance(
        self, extractions: Mapping[str, Extraction], touched: Collection[str] | None = None
    ) -> bool:
        """Bring the state to ``extractions`` without assembling the whole resolution
        (O(N)): read the result through :meth:`paper_terms`, :meth:`terms_of` and
        :meth:`term`. False when nothing changed. ``touched``: the only ids whose
        extraction may differ from the last call's, or be new or gone (None: any); then
        the others are not compared (two passes over every paper: ~60 ms an add at 100k)."""
        ex = self.ex
        if touched is None:
            gone = sorted(
                p for p, e in ex.items()
                if p not in extractions or (extractions[p] is not e and extractions[p] != e)
            )
            gone_set = set(gone)
            new = sorted(p for p in extractions if p not in ex or p in gone_set)
        else:
            gone = sorted(
                p for p in set(touched)
                if (e := ex.get(p)) is not None
                and (p not in extractions or (extractions[p] is not e and extractions[p] != e))
            )
            gone_set = set(gone)
            new = sorted(p for p in set(touched)
                         if p in extractions and (p not in ex or p in gone_set))
        if not gone and not new and (self.ex or self._result is not None):
            self.changed_papers = set()
            self.changed_terms = set()
            return False
        self._df_w, self._sa_w, self._dof_w = _Watch(), _Watch(), _Watch()
        self._defined_w, self._dfold_w = _Watch(), _Watch()
        # kept again only if this update runs to its end
        dof_hist, self._dof_hist = self._dof_hist, None
        old_common = self._common()
        shorts: set[str] = set()
        sform_folds: set[str] = set()
        d_folds: set[str] = set()
        self._touched = set()
        for p in gone:
            self._retract(p, _A)
            self._raw(p, -1, shorts, sform_folds, d_folds)
            del self.ex[p]
        for p in new:
            self.ex[p] = extractions[p]
            self._raw(p, +1, shorts, sform_folds, d_folds)
        words = self._redefine(shorts)
        folds_moved = {
            f for f, was in self._dfold_w.before.items() if (was > 0) != (self.dfolds[f] > 0)
        }
        # step A
        dirty = set(new)
        for w in words:
            dirty |= self.by_word.get(w, set())
        for f in folds_moved:
            dirty |= self.by_fold.get(f, set())
        for p in sorted(dirty):
            self._retract(p, _A)
            self._step_a(p)
        # step B
        moved = {g for g, was in self._df_w.before.items() if (was >= 2) != (self.df[g] >= 2)}
        moved |= {
            f for f, was in self._defined_w.before.items()
            if (was > 0) != (self.defined_refs[f] > 0)
        }
        defined_moved = {f for f in moved if f in self._defined_w.before}
        for g in moved:
            dirty |= self.by_group.get(g, set())
        for p in sorted(dirty):
            self._retract(p, _B)
            self._step_b(p)
        # step C
        common = self._common()
        if common != old_common:
            # the threshold moved (N crossed a step): only papers holding a group whose
            # "used on its own often enough" flag flipped, not every paper (~1 s at 3k)
            sa_before = self._sa_w.before
            for g, ps in self.by_held.items():
                now = self.standalone[g]
                if (sa_before.get(g, now) >= old_common) != (now >= common):
                    dirty |= ps
        else:
            for g, was in self._sa_w.before.items():
                if (was >= old_common) != (self.standalone[g] >= common):
                    dirty |= self.by_held.get(g, set())
        for p in sorted(dirty):
            self._retract(p, _C)
            self._step_c(p, common)
        # groups -> concepts
        self.changed_terms = set()
        id_moved, cids_moved = self._regroup(self._touched | sform_folds, defined_moved)
        for g in id_moved:
            dirty |= self.by_final.get(g, set())
        for p in sorted(dirty):
            self._retract(p, _E)
            self._step_e(p)
        dids_moved = self._redatasets(d_folds)
        # step F
        for c in cids_moved:
            dirty |= self.by_cid.get(c, set())
        rerank: set[str] = set()
        # df_of is final for this update from here (step F does not move it)
        dof_hist = self._dof_hist_now(dof_hist)
        quiet = self._quiet_moves(dof_hist)
        for c, was in self._dof_w.before.items():
            now = self.df_of[c]
            if (was == 1) != (now == 1):
                dirty |= self.by_cid.get(c, set())
            elif was != now and c not in quiet:
                rerank |= self.by_ranked.get(c, set())
        for f in dids_moved:
            dirty |= self.by_dfold.get(f, set())
        # a paper reached only through a count it ranks by: every other input of its step
        # F is as it was, so its concepts before the cut are too; it runs again only if
        # the cut now keeps others (most of the ~800 an add of 10 reaches on ICLR 2021 do not)
        for p in sorted(rerank - dirty):
            merged, own, kept = self.cut[p]
            if set(self._rank(merged, own)) != kept:
                dirty.add(p)
        changed = gone_set | set(new)
        for p in sorted(dirty):
            before = self.terms.get(p)
            self._retract(p, _F)
            self._step_f(p)
            if self.terms[p] != before:
                changed.add(p)
        self.changed_papers = changed
        self._result = None
        self._dof_hist = dof_hist
        return True

    def paper_terms(self, pid: str) -> dict[str, float]:
        """One paper's term ids and weights (as Resolution.paper_terms)."""
        return self.pterms[pid]

    def terms_of(self, pid: str) -> list[PaperTerm]:
        """One paper's PaperTerms, by term id (as in Resolution.terms)."""
        return self.terms[pid]

    def term(self, tid: str) -> Concept | Dataset | None:
        """The concept or dataset of that id in the current resolution, if any."""
        return self.concepts.get(tid) or self.datasets.get(tid)

    # ------------------------------------------------------------------ corpus inputs
    def _common(self) -> int:
        return max(_STANDALONE_MIN, math.ceil(_STANDALONE_SHARE * len(self.ex)))

    def _raw(
        self, p: str, sign: int, shorts: set[str], sform_folds: set[str], d_folds: set[str]
    ) -> None:
        ex = self.ex[p]
        for short, long in ex.acronyms:
            s = short.lower()
            c = self.defs.setdefault(s, Counter())
            c[long] += sign
            if c[long] <= 0:
                del c[long]
            if not c:
                del self.defs[s]
            shorts.add(s)
            lf = _fold(long)
            sc = self.sforms.setdefault(lf, Counter())
            sc[short] += sign
            if sc[short] <= 0:
                del sc[short]
            if not sc:
                del self.sforms[lf]
            sform_folds.add(lf)
        for d in ex.datasets:
            f = _fold(d.key)
            self._dfold_w.note(f, self.dfolds[f])
            self.dfolds[f] += sign
            if self.dfolds[f] <= 0:
                del self.dfolds[f]
            names = self.d_names.setdefault(f, Counter())
            names[d.name] += sign
            if names[d.name] <= 0:
                del names[d.name]
            if not names:
                del self.d_names[f]
            d_folds.add(f)

    def _redefine(self, shorts: set[str]) -> set[str]:
        """Global and unambiguous long forms of ``shorts``; the words whose expansion moved."""
        moved: set[str] = set()
        for s in shorts:
            old_long = self.global_long.get(s)
            old_unamb = self.unamb.get(s)
            if old_long is not None:
                self._defined(s, -1)
                self._defined(old_long, -1)
            c = self.defs.get(s)
            if c:
                gl = max(c.items(), key=lambda kv: (kv[1], kv[0]))[0]
                self.global_long[s] = gl
                by_fold: Counter[str] = Counter()
                for lg, k in c.items():
                    by_fold[_fold(lg)] += k
                if by_fold[_fold(gl)] >= _DOMINANT * sum(by_fold.values()):
                    self.unamb[s] = gl
                else:
                    self.unamb.pop(s, None)
                self._defined(s, +1)
                self._defined(gl, +1)
            else:
                self.global_long.pop(s, None)
                self.unamb.pop(s, None)
            if self.unamb.get(s) != old_unamb:
                moved.add(s)
        return moved

    def _defined(self, key: str, sign: int) -> None:
        f = _fold(key)
        self._defined_w.note(f, self.defined_refs[f])
        self.defined_refs[f] += sign
        if self.defined_refs[f] <= 0:
            del self.defined_refs[f]

    # ------------------------------------------------------------------ retract
    def _retract(self, p: str, level: int) -> None:
        """Take back paper ``p``'s contributions of step ``level`` and the later ones."""
        if p in self.terms:  # F
            _index(self.by_ranked, self.ranked.pop(p), p, add=False)
            self.cut.pop(p, None)
            _index(self.by_dfold, {_fold(d.key) for d in self.ex[p].datasets}, p, add=False)
            del self.terms[p], self.pterms[p]
        if level <= _E and p in self.pcids:
            cids = self.pcids.pop(p)
            for c in cids:
                self._dof_w.note(c, self.df_of[c])
                self.df_of[c] -= 1
                if self.df_of[c] <= 0:
                    del self.df_of[c]
            _index(self.by_cid, cids, p, add=False)
        if level <= _C and p in self.final:
            final = self.final.pop(p)
            self._tally(final, -1)
            _index(self.by_final, final, p, add=False)
        if level <= _B and p in self.keep:
            keep, held = self.keep.pop(p), self.held.pop(p)
            del self.names[p]
            for g in keep:
                if g not in held:
                    self._sa_w.note(g, self.standalone[g])
                    self.standalone[g] -= 1
                    if self.standalone[g] <= 0:
                        del self.standalone[g]
            _index(self.by_held, held, p, add=False)
        if level <= _A and p in self.groups:
            groups = self.groups.pop(p)
            for g in groups:
                self._df_w.note(g, self.df[g])
                self.df[g] -= 1
                if self.df[g] <= 0:
                    del self.df[g]
            _index(self.by_group, groups, p, add=False)
            _index(self.by_word, self.read_words.pop(p), p, add=False)
            _index(self.by_fold, self.read_folds.pop(p), p, add=False)

    # ------------------------------------------------------------------ steps
    def _step_a(self, p: str) -> None:
        ex = self.ex[p]
        local = {s.lower(): lg for s, lg in ex.acronyms}
        words: set[str] = set()
        folds: set[str] = set()
        groups: dict[str, _Group] = defaultdict(list)
        unamb, dfolds = self.unamb, self.dfolds
        for m in ex.concepts:
            ws = m.key.split()
            surf = m.surface.split()
            if len(surf) != len(ws):
                full = m.key
            else:
                parts = []
                for w, sw in zip(ws, surf, strict=True):
                    if _is_acronym(sw) or (_lower_acronym(sw) and _lower_acronym(w)):
                        words.add(w)
                        parts.append(local.get(w) or unamb.get(w) or w)
                    else:
                        parts.append(w)
                full = " ".join(parts)
            g = _fold(full)
            mk = _fold(m.key)
            folds.add(g)
            folds.add(mk)
            if g in dfolds or mk in dfolds:
                continue
            groups[g].append((m, full))
        self.groups[p] = dict(groups)
        for g in groups:
            self._df_w.note(g, self.df[g])
            self.df[g] += 1
        _index(self.by_group, groups, p, add=True)
        self.read_words[p], self.read_folds[p] = words, folds
        _index(self.by_word, words, p, add=True)
        _index(self.by_fold, folds, p, add=True)

    def _step_b(self, p: str) -> None:
        ex = self.ex[p]
        intro = _label_name(ex.label)
        defined = self.defined_refs

        def maximal(m: TermMention) -> bool:
            inner = f" {m.key} "
            return not any(
                o.count >= m.count and inner in f" {o.key} " and o.key != m.key
                for o in ex.concepts
            )

        keep: dict[str, _Group] = {}
        mine = {_fold(lg) for _, lg in ex.acronyms}  # as resolve(): its own definitions
        for g, ms in self.groups[p].items():
            if g in defined or g in mine or self.df[g] >= 2 or (
                bool(intro) and any(m.surface == intro for m, _ in ms)
            ):
                keep[g] = ms
                continue
            if any(
                " " in full and _head_of(full) in _TECH_HEADS and maximal(m)
                and not _verb_ing(full.split()[0]) for m, full in ms
            ):
                keep[g] = ms
        names = {
            g: f" {max(ms, key=lambda mf: (mf[0].count, mf[1]))[1]} " for g, ms in keep.items()
        }
        totals = {g: sum(m.count for m, _ in ms) for g, ms in keep.items()}
        held: set[str] = set()
        own_defined = {_fold(lg) for _, lg in ex.acronyms}  # as resolve(): never held
        # a name written inside no other name of the paper is held by none (most are):
        # one substring count over all of them instead of a pass over every other term
        every = "\x00".join(names.values())
        for g in sorted(keep):
            if g in own_defined:
                continue
            inner = names[g]
            if every.count(inner) > 1 and any(
                o != g and o not in held and inner in names[o]
                and totals[g] <= sum(m.count for m, _ in keep[o] if inner in f" {m.key} ")
                for o in keep
            ):
                held.add(g)
        self.keep[p], self.held[p], self.names[p] = keep, held, names
        for g in keep:
            if g not in held:
                self._sa_w.note(g, self.standalone[g])
                self.standalone[g] += 1
        _index(self.by_held, held, p, add=True)

    def _step_c(self, p: str, common: int) -> None:
        keep = dict(self.keep[p])
        names = self.names[p]
        for g in self.held[p]:
            if self.standalone[g] < common:
                del keep[g]
        own_defined = {_fold(lg) for _, lg in self.ex[p].acronyms}
        for g in sorted(keep):
            if g in own_defined:
                continue
            head, _, rest = names[g].strip().partition(" ")
            verb = _verb_ing(head) or head in {"training", "learning", "fitting", "running"}
            if verb and " " in rest and _fold(rest) in keep and _fold(rest) != g:
                del keep[g]
        self.final[p] = keep
        self._tally(keep, +1)
        _index(self.by_final, keep, p, add=True)

    def _tally(self, final: Mapping[str, _Group], sign: int) -> None:
        self._touched.update(final)
        tables = (self.g_keys, self.g_surf, self.g_cat, self.g_acr)
        for g, ms in final.items():
            keys, surf, cat = (t.get(g) or t.setdefault(g, _Tally()) for t in tables[:3])
            for m, full in ms:
                keys.add(full, m.count, sign)
                surf.add(m.surface, m.count, sign)
                cat.add(m.category, m.count, sign)
                if " " not in m.key and _is_acronym(m.surface) and full == m.key:
                    (self.g_acr.get(g) or self.g_acr.setdefault(g, _Tally())).add(full, 0, sign)
            for table in tables:
                t = table.get(g)
                if t is not None and not t:
                    del table[g]

    def _regroup(
        self, groups: set[str], defined_moved: set[str]
    ) -> tuple[set[str], set[str]]:
        """Concepts of touched groups; (groups whose id moved, concepts that changed)."""
        id_moved: set[str] = set()
        cids: set[str] = set()
        for g in groups:
            old_id = self.group_id.get(g)
            old_info = self.group_info.get(g)
            if g not in self.g_keys:
                info = None
            else:
                keys = self.g_keys[g].counter()
                surf = self.g_surf[g].counter()
                acr = set(self.g_acr[g].sums) if g in self.g_acr else set()
                canonical = _canonical(surf, keys, acr)
                aliases = set(surf) | set(self.sforms.get(g, ()))
                if _head_of(canonical) in _HEAD_CATEGORY or len(canonical.split()) > 1:
                    category = _category(canonical)
                else:
                    cat = self.g_cat[g].counter()
                    category = max(cat.items(), key=lambda kv: (kv[1], kv[0]))[0]
                info = (canonical, frozenset(aliases), category)
            if info == old_info:
                continue
            if old_id is not None:
                cids.add(old_id)
                self.cid_groups[old_id].discard(g)
                del self.group_id[g], self.group_info[g]
            if info is not None:
                cid = concept_id(info[0])
                self.group_id[g], self.group_info[g] = cid, info
                self.cid_groups.setdefault(cid, set()).add(g)
                cids.add(cid)
                if cid != old_id:
                    id_moved.add(g)
            elif old_id is not None:
                id_moved.add(g)
        for f in defined_moved:
            if f in self.group_id:
                cids.add(self.group_id[f])
        self.changed_terms |= cids
        changed: set[str] = set()
        for cid in cids:
            old = self.concepts.get(cid)
            was_defined = cid in self.defined_ids
            members = sorted(self.cid_groups.get(cid, ()))
            concept: Concept | None = None
            for g in members:
                canonical, group_aliases, category = self.group_info[g]
                a = set(group_aliases)
                if concept is not None:
                    a |= set(concept.aliases)
                a.discard(canonical)
                concept = Concept(cid, canonical, tuple(sorted(a)), category)
            if concept is None:
                self.concepts.pop(cid, None)
                self.cid_groups.pop(cid, None)
                self.defined_ids.discard(cid)
            else:
                self.concepts[cid] = concept
                if any(g in self.defined_refs for g in members):
                    self.defined_ids.add(cid)
                else:
                    self.defined_ids.discard(cid)
            if (
                (old is None) != (concept is None)
                or (old is not None and concept is not None and old.name != concept.name)
                or was_defined != (cid in self.defined_ids)
            ):
                changed.add(cid)
        return id_moved, changed

    def _redatasets(self, folds: set[str]) -> set[str]:
        """Datasets of the touched folds; the folds whose dataset id moved."""
        dids: set[str] = set()
        moved: set[str] = set()
        for g in folds:
            old = self.dataset_group.get(g)
            if old is not None:
                dids.add(old)
                self.did_folds[old].discard(g)
            names = self.d_names.get(g)
            if names:
                name = max(names.items(), key=lambda kv: (kv[1], -len(kv[0]), kv[0]))[0]
                did = dataset_id(name)
                self.dataset_group[g] = did
                self.did_folds.setdefault(did, set()).add(g)
                dids.add(did)
            else:
                did = None
                self.dataset_group.pop(g, None)
            if did != old:
                moved.add(g)
        self.changed_terms |= dids
        for did in dids:
            folds_of = sorted(self.did_folds.get(did, ()))
            ds: Dataset | None = None
            for g in folds_of:
                names = self.d_names[g]
                name = max(names.items(), key=lambda kv: (kv[1], -len(kv[0]), kv[0]))[0]
                aliases = set(names) - {name}
                if ds is not None:
                    aliases |= set(ds.aliases)
                ds = Dataset(did, name, tuple(sorted(aliases)))
            if ds is None:
                self.datasets.pop(did, None)
                self.did_folds.pop(did, None)
            else:
                self.datasets[did] = ds
        return moved

    def _step_e(self, p: str) -> None:
        cids = {self.group_id[g] for g in self.final[p]}
        self.pcids[p] = cids
        for c in cids:
            self._dof_w.note(c, self.df_of[c])
            self.df_of[c] += 1
        _index(self.by_cid, cids, p, add=True)

    def _step_f(self, p: str) -> None:
        ex = self.ex[p]
        lead_sentence = ex.concepts[0].evidence if ex.concepts else ""
        intro = _label_name(ex.label)
        df_of = self.df_of
        terms: dict[str, float] = {}
        out: list[PaperTerm] = []
        merged: dict[str, tuple[float, str, int]] = {}
        for g, mfs in self.final[p].items():
            cid = self.group_id[g]
            mentions = [m for m, _ in mfs]
            count = sum(m.count for m in mentions)
            first = min(mentions, key=lambda m: (m.evidence != lead_sentence, -m.count, m.key))
            w = _weight(count, any(m.evidence == lead_sentence for m in mentions),
                        any(m.surface == intro for m in mentions))
            old = merged.get(cid)
            if old is None:
                merged[cid] = (w, first.evidence, count)
            else:
                best = max((w, first.evidence), (old[0], old[1]))
                merged[cid] = (best[0], best[1], count + old[2])
        merged = {
            cid: v for cid, v in merged.items()
            if not (v[2] == 1 and v[1] != lead_sentence and cid not in self.defined_ids
                    and (_everyday_word(self.concepts[cid].name) or df_of[cid] == 1))
        }
        ranked: set[str] = set()
        if len(merged) > _MAX_CONCEPTS:
            ranked = set(merged)
            defined = {_fold(lg) for _, lg in ex.acronyms}
            own = {self.group_id[g] for g in self.final[p] if g in defined}
            order = self._rank(merged, own)
            self.cut[p] = (merged, own, set(order))
            merged = {c: merged[c] for c in order}
        for cid, (w, ev, count) in sorted(merged.items()):
            out.append(PaperTerm(p, cid, NodeKind.CONCEPT, w, ev, count))
            terms[cid] = w
        d_terms: dict[str, PaperTerm] = {}
        for d in ex.datasets:
            did = self.dataset_group[_fold(d.key)]
            dw = 1.5 if d.introduces else 1.0
            if did in d_terms and d_terms[did].weight >= dw:
                continue
            d_terms[did] = PaperTerm(p, did, NodeKind.DATASET, dw, d.evidence, 1, d.introduces)
            terms[did] = dw
        out.extend(d_terms[did] for did in sorted(d_terms))
        out.sort(key=lambda t: t.term)
        self.terms[p] = out
        self.pterms[p] = dict(sorted(terms.items()))
        self.ranked[p] = ranked
        _index(self.by_ranked, ranked, p, add=True)
        _index(self.by_dfold, {_fold(d.key) for d in ex.datasets}, p, add=True)

    def _dof_hist_now(self, kept: NDArray[np.int64] | None) -> NDArray[np.int64]:
        """How many concepts have each paper count (df_of) now: ``kept`` (as of the last
        update's end) moved by this update's changes, or counted again when None."""
        if kept is None:
            return np.bincount(np.fromiter(self.df_of.values(), dtype=np.int64,
                                           count=len(self.df_of)), minlength=1)
        moves = [(was, self.df_of[c]) for c, was in self._dof_w.before.items()]
        top = max([len(kept) - 1, *(now for _, now in moves)])
        hist = np.zeros(top + 1, dtype=np.int64)
        hist[: len(kept)] = kept
        for was, now in moves:  # a count of 0 is no entry (df_of drops it)
            if was > 0:
                hist[was] -= 1
            if now > 0:
                hist[now] += 1
        return hist

    def _quiet_moves(self, dof_hist: NDArray[np.int64]) -> set[str]:
        """The concepts whose paper count moved in this update without passing another
        concept's: no other count lies in the span it moved over (old to new), nor does
        another moved one's span overlap it. Ranking by count puts such a concept exactly
        where it was against every other one, so a paper over the cap keeps its cut (a hub
        held by half the papers moves on nearly every add, and was a re-rank of every
        paper over the cap that holds it). ``dof_hist``: how many concepts have each
        count now (sorting every count, ~15 ms an add at 100k papers, counted them)."""
        spans: dict[str, tuple[int, int]] = {}
        for c, was in self._dof_w.before.items():
            now = self.df_of[c]
            if was != now:
                spans[c] = (min(was, now), max(was, now))
        if not spans:
            return set()
        quiet: set[str] = set()
        for c, (lo, hi) in spans.items():
            inside = int(dof_hist[lo : hi + 1].sum())
            if inside - (1 if c in self.df_of else 0) > 0:  # c's own count now, if any
                continue
            if any(o != c and o_lo <= hi and lo <= o_hi for o, (o_lo, o_hi) in spans.items()):
                continue
            quiet.add(c)
        return quiet

    def _rank(
        self, merged: Mapping[str, tuple[float, str, int]], own: set[str]
    ) -> list[str]:
        """The concepts a paper over the cap keeps (as resolve(): its own definitions
        first, then by weight, then the more common, then by id)."""
        df_of = self.df_of
        order = sorted(merged, key=lambda c: (c not in own, -merged[c][0], -df_of.get(c, 0), c))
        return order[:_MAX_CONCEPTS]

    # ------------------------------------------------------------------ output
    def _resolution(self) -> Resolution:
        pids = sorted(self.ex)
        return Resolution(
            concepts=dict(sorted(self.concepts.items())),
            datasets=dict(sorted(self.datasets.items())),
            terms=[t for p in pids for t in self.terms[p]],
            paper_terms={p: self.pterms[p] for p in pids},
        )
