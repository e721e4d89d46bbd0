"""Corpus-wide resolution: many papers' mentions become concepts, datasets and terms."""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Mapping

from graph.extract.base import Extraction, PaperTerm, Resolution, TermMention
from graph.extract.lexicon import _HEAD_CATEGORY, _TECH_HEADS
from graph.extract.tokens import (
    _acronym_singular,
    _category,
    _everyday_word,
    _fold,
    _head_of,
    _is_acronym,
    _key,
    _lower_acronym,
    _verb_ing,
)
from graph.model import Concept, Dataset, NodeKind, concept_id, dataset_id

logger = logging.getLogger(__name__)
_WEIGHT_CAP = 3.0
_MAX_CONCEPTS = 18  # per paper: past this, a term is one an abstract mentions in passing
_DOMINANT = 0.8  # share of a short form's definitions that one long form needs to own it
_STANDALONE_MIN, _STANDALONE_SHARE = 3, 0.002  # papers that must use a term on its own


def _weight(count: int, lead: bool, introduced: bool) -> float:
    w = 1.0 + math.log(max(count, 1))
    if lead:
        w *= 1.25
    if introduced:
        w *= 1.5
    return round(min(w, _WEIGHT_CAP), 6)


def _label_name(label: str) -> str:
    head = label.split(":", 1)[0].strip()
    return head if head and " " not in head else ""


def _canonical(surfaces: Counter[str], keys: Counter[str], acronym_keys: set[str]) -> str:
    """Most common long form (lower-case but for acronym-like words), else the acronym."""
    long_forms = [k for k in keys if k not in acronym_keys]
    if long_forms:
        best = max(long_forms, key=lambda k: (keys[k], k))
        # restore the case of acronym-like words from the most common matching surface
        matching = [s for s in surfaces if _key(s.split()) == best]
        if matching:
            surf = max(matching, key=lambda s: (surfaces[s], s)).split()
            words = best.split()
            if len(surf) == len(words):
                return " ".join(
                    (_acronym_singular(s) if i == len(words) - 1 else s) if _is_acronym(s) else w
                    for i, (s, w) in enumerate(zip(surf, words, strict=True))
                )
        return best
    single = [s for s in surfaces if _is_acronym(s)]
    if single:
        return max(single, key=lambda s: (surfaces[s], s))
    return max(keys, key=lambda k: (keys[k], k))


_Group = list[tuple[TermMention, str]]


def resolve(extractions: Mapping[str, Extraction]) -> Resolution:
    """Merge per-paper extractions into concepts, datasets and paper terms (order-free)."""
    papers = sorted(extractions)

    # acronym short key -> long key, by how many papers define it that way
    defs: dict[str, Counter[str]] = defaultdict(Counter)
    for pid in papers:
        for short, long in extractions[pid].acronyms:
            defs[short.lower()][long] += 1
    global_long = {s: max(c.items(), key=lambda kv: (kv[1], kv[0]))[0] for s, c in defs.items()}
    long_keys = set(global_long.values())
    # a short form read alone (no definition in its paper) takes the corpus's long form only
    # when the corpus means one thing by it: SAM as both "segment anything model" and
    # "sharpness-aware minimization" stays SAM
    unambiguous: dict[str, str] = {}
    for s, c in defs.items():
        by_fold: Counter[str] = Counter()
        for lg, k in c.items():
            by_fold[_fold(lg)] += k
        if by_fold[_fold(global_long[s])] >= _DOMINANT * sum(by_fold.values()):
            unambiguous[s] = global_long[s]

    def expand(m: TermMention, local: Mapping[str, str]) -> str:
        """The key with acronym words (as written: "LLMs") replaced by their long forms."""
        words = m.key.split()
        surf = m.surface.split()
        if len(surf) != len(words):
            return m.key
        return " ".join(
            (local.get(w) or unambiguous.get(w) or w)
            if _is_acronym(sw) or (_lower_acronym(sw) and _lower_acronym(w)) else w
            for w, sw in zip(words, surf, strict=True)
        )

    dataset_folds: set[str] = set()
    for pid in papers:
        dataset_folds.update(_fold(d.key) for d in extractions[pid].datasets)

    # paper -> group fold -> (mention, key with acronyms expanded)
    per_paper: dict[str, dict[str, _Group]] = {}
    df: Counter[str] = Counter()
    for pid in papers:
        ex = extractions[pid]
        local = {s.lower(): lg for s, lg in ex.acronyms}
        groups: dict[str, _Group] = defaultdict(list)
        for m in ex.concepts:
            full = expand(m, local)
            g = _fold(full)
            if g in dataset_folds or _fold(m.key) in dataset_folds:
                continue
            groups[g].append((m, full))
        per_paper[pid] = groups
        df.update(groups.keys())

    defined_folds = {_fold(k) for k in long_keys} | {_fold(s) for s in defs}

    def maximal(m: TermMention, ex: Extraction) -> bool:
        inner = f" {m.key} "
        return not any(
            o.count >= m.count and inner in f" {o.key} " and o.key != m.key for o in ex.concepts
        )

    # group-level statistics over the whole corpus
    g_keys: dict[str, Counter[str]] = defaultdict(Counter)
    g_acr: dict[str, set[str]] = defaultdict(set)  # expanded keys seen only as acronyms
    g_surf: dict[str, Counter[str]] = defaultdict(Counter)
    g_cat: dict[str, Counter[str]] = defaultdict(Counter)
    kept: dict[str, dict[str, _Group]] = {}
    inside: dict[str, set[str]] = {}  # paper -> groups it only mentions inside longer ones
    names_of: dict[str, dict[str, str]] = {}
    standalone_df: Counter[str] = Counter()
    for pid in papers:
        ex = extractions[pid]
        intro = _label_name(ex.label)
        keep: dict[str, _Group] = {}
        # its own definitions count even where the corpus means another long form by the
        # same short one ("FBB": "Foo Bar Baz" in one paper, "Fast Bilinear Blocks" here)
        mine = {_fold(lg) for _, lg in ex.acronyms}
        # each paper's groups let go as its kept ones are found (a build's peak)
        for g, ms in per_paper.pop(pid).items():
            if g in defined_folds or g in mine or df[g] >= 2 or (
                bool(intro) and any(m.surface == intro for m, _ in ms)
            ):
                keep[g] = ms
                continue
            # a one-paper phrase counts when technical and maximal in its paper
            # ("small generation" inside "small generation space" is not)
            # ... and does not open on a verb ("extracting node embedding": a verb and its object)
            if any(
                " " in full and _head_of(full) in _TECH_HEADS and maximal(m, ex)
                and not _verb_ing(full.split()[0]) for m, full in ms
            ):
                keep[g] = ms
        # a term that only occurs inside a longer kept term of the same paper
        names = {
            g: f" {max(ms, key=lambda mf: (mf[0].count, mf[1]))[1]} " for g, ms in keep.items()
        }
        totals = {g: sum(m.count for m, _ in ms) for g, ms in keep.items()}
        # Only the longer term's written-out mentions hold the shorter one: "meta-RL" used
        # five times must not swallow "reinforcement learning" written alone twice.
        held: set[str] = set()
        # a term the paper defines ("Spiking Neural Networks (SNNs)") is one of its own,
        # however often it is written inside longer ones ("deep SNNs", "sparse SNNs")
        own_defined = {_fold(lg) for _, lg in ex.acronyms}
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
        kept[pid], inside[pid], names_of[pid] = keep, held, names
        standalone_df.update(g for g in keep if g not in held)
    # A term many papers use on its own stays a term of the paper that writes it only inside a
    # longer one ("off-policy reinforcement learning" is about reinforcement learning); a
    # fragment no paper writes alone ("graph neural" of "graph neural network") goes.
    common = max(_STANDALONE_MIN, math.ceil(_STANDALONE_SHARE * len(papers)))
    for pid in papers:
        keep, names = kept[pid], names_of.pop(pid)
        for g in inside.pop(pid):
            if standalone_df[g] < common:
                del keep[g]
        # "training reinforcement learning agent": a verb in -ing before a term of the paper
        # (not a term the paper defines: "spiking neural network (SNN)" is a name)
        own_defined = {_fold(lg) for _, lg in extractions[pid].acronyms}
        for g in sorted(keep):
            if g in own_defined:
                continue
            head, _, rest = names[g].strip().partition(" ")
            verb = _verb_ing(head) or head in {"training", "learning", "fitting", "running"}
            if verb and " " in rest and _fold(rest) in keep and _fold(rest) != g:
                del keep[g]
        for g, ms in keep.items():
            for m, full in ms:
                g_keys[g][full] += m.count
                g_surf[g][m.surface] += m.count
                g_cat[g][m.category] += m.count
                if " " not in m.key and _is_acronym(m.surface) and full == m.key:
                    g_acr[g].add(full)

    short_forms: dict[str, set[str]] = defaultdict(set)
    for pid in papers:
        for sf, lg in extractions[pid].acronyms:
            short_forms[_fold(lg)].add(sf)
    concepts: dict[str, Concept] = {}
    group_id: dict[str, str] = {}
    for g in sorted(g_keys):
        canonical = _canonical(g_surf[g], g_keys[g], g_acr[g])
        cid = concept_id(canonical)
        group_id[g] = cid
        aliases = set(g_surf[g])
        aliases |= short_forms.get(g, set())
        if _head_of(canonical) in _HEAD_CATEGORY or len(canonical.split()) > 1:
            category = _category(canonical)
        else:
            category = max(g_cat[g].items(), key=lambda kv: (kv[1], kv[0]))[0]
        prev = concepts.get(cid)
        if prev is not None:
            aliases |= set(prev.aliases)
        aliases.discard(canonical)
        concepts[cid] = Concept(cid, canonical, tuple(sorted(aliases)), category)

    # datasets
    d_names: dict[str, Counter[str]] = defaultdict(Counter)
    for pid in papers:
        for d in extractions[pid].datasets:
            d_names[_fold(d.key)][d.name] += 1
    datasets: dict[str, Dataset] = {}
    dataset_group: dict[str, str] = {}
    for g in sorted(d_names):
        name = max(d_names[g].items(), key=lambda kv: (kv[1], -len(kv[0]), kv[0]))[0]
        did = dataset_id(name)
        dataset_group[g] = did
        aliases = set(d_names[g]) - {name}
        if did in datasets:
            aliases |= set(datasets[did].aliases)
        datasets[did] = Dataset(did, name, tuple(sorted(aliases)))

    defined_ids = {group_id[g] for g in group_id if g in defined_folds}
    df_of: Counter[str] = Counter()  # concept id -> papers keeping it
    for pid in papers:
        df_of.update({group_id[g] for g in kept[pid]})
    out: list[PaperTerm] = []
    paper_terms: dict[str, dict[str, float]] = {}
    for pid in papers:
        ex = extractions[pid]
        lead_sentence = ex.concepts[0].evidence if ex.concepts else ""
        intro = _label_name(ex.label)
        terms: dict[str, float] = {}
        merged: dict[str, tuple[float, str, int]] = {}
        # each paper's groups let go once its terms are made
        mine_kept = kept.pop(pid)
        for g, mfs in mine_kept.items():
            cid = group_id[g]
            mentions = [m for m, _ in mfs]
            count = sum(m.count for m in mentions)
            first = min(mentions, key=lambda m: (m.evidence != lead_sentence, -m.count, m.key))
            w = _weight(count, any(m.evidence == lead_sentence for m in mentions),
                        any(m.surface == intro for m in mentions))
            old = merged.get(cid)
            if old is None:
                merged[cid] = (w, first.evidence, count)
            else:  # two groups with one canonical name: keep the stronger evidence
                best = max((w, first.evidence), (old[0], old[1]))
                merged[cid] = (best[0], best[1], count + old[2])
        # an everyday word said once in passing ("node", "barrier", "mixture") is no concept,
        # nor a phrase no other paper uses, said once outside the lead ("large state")
        merged = {
            cid: v for cid, v in merged.items()
            if not (v[2] == 1 and v[1] != lead_sentence and cid not in defined_ids
                    and (_everyday_word(concepts[cid].name) or df_of[cid] == 1))
        }
        if len(merged) > _MAX_CONCEPTS:
            # the weakest go: mentioned once, outside the lead sentence, and the least
            # specific; never a term the paper defines with an acronym
            defined = {_fold(lg) for _, lg in ex.acronyms}
            own = {group_id[g] for g in mine_kept if g in defined}
            ranked = sorted(
                merged, key=lambda c: (c not in own, -merged[c][0], -df_of.get(c, 0), c)
            )
            merged = {c: merged[c] for c in ranked[:_MAX_CONCEPTS]}
        for cid, (w, ev, count) in sorted(merged.items()):
            out.append(PaperTerm(pid, cid, NodeKind.CONCEPT, w, ev, count))
            terms[cid] = w
        d_terms: dict[str, PaperTerm] = {}
        for d in ex.datasets:
            did = dataset_group[_fold(d.key)]
            w = 1.5 if d.introduces else 1.0
            if did in d_terms and d_terms[did].weight >= w:
                continue
            d_terms[did] = PaperTerm(pid, did, NodeKind.DATASET, w, d.evidence, 1, d.introduces)
            terms[did] = w
        out.extend(d_terms[did] for did in sorted(d_terms))
        paper_terms[pid] = dict(sorted(terms.items()))
    out.sort(key=lambda t: (t.paper, t.term))
    logger.info(
        "resolved %d papers: %d concepts, %d datasets, %d paper terms",
        len(papers), len(concepts), len(datasets), len(out),
    )
    return Resolution(
        concepts=dict(sorted(concepts.items())),
        datasets=dict(sorted(datasets.items())),
        terms=out,
        paper_terms=dict(sorted(paper_terms.items())),
    )
