# ruff: noqa: E501 - long table rows
"""Acronym resolution audited by an independent extractor (issue 13, "every LF (LF)").

The oracle is the Schwartz-Hearst algorithm (PyPI ``abbreviations``, a bench-only
dependency; nothing in graph/ uses it), run on each abstract. For every definition
"Long Form (SF)" it finds, the audit asks the project's extractor + resolver (the
pipeline's own ``graph.extract``, corpus-wide as a build runs it):

* **merged**: one of the paper's concepts/datasets carries both the long form and the
  short form among its name and aliases (compared lower-cased, punctuation as spaces, a
  plural "s" dropped, so "LDMs" and "Latent Diffusion Models" match "LDM"/"latent
  diffusion model");
* **short only / long only**: a term of the paper has one of them, not both;
* **neither**.

Then **used alone elsewhere**: for each merged short form that names one concept in the
whole corpus, the other papers that use it as a word (case-sensitive) without defining
it: the share of them whose terms include that concept.

Oracle pairs are kept when the short form has >= 2 capitals and the long form >= 2 words;
Schwartz-Hearst also pairs things like "(see Fig 2)", and those are not acronyms.

    python bench/acronyms.py [--corpus iclr|seeds] [--misses 15] [--no-report]
"""

from __future__ import annotations

import argparse
import random
import re
import time
from collections import Counter, defaultdict
from typing import Any

from common import Report, load_iclr, load_seeds, table

from graph.extract import extract, resolve

_SEP = re.compile(r"[^a-z0-9]+")


def key(text: str) -> str:
    """Lower-cased, punctuation as spaces, a final plural "s" dropped (per word)."""
    words = [w for w in _SEP.split(text.lower()) if w]
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                    for w in words)


def short_key(short: str) -> str:
    s = short[:-1] if short.endswith("s") and short[:-1].isupper() else short
    return key(s)


def oracle(text: str) -> dict[str, str]:
    from abbreviations import schwartz_hearst

    pairs = schwartz_hearst.extract_abbreviation_definition_pairs(doc_text=text)
    return {s: lf for s, lf in pairs.items()
            if sum(c.isupper() for c in s) >= 2 and len(lf.split()) >= 2}


def main() -> None:
    ap = argparse.ArgumentParser(description="Audit acronym resolution against Schwartz-Hearst definitions.")
    ap.add_argument("--corpus", choices=("iclr", "seeds"), default="iclr")
    ap.add_argument("--misses", type=int, default=15, help="misses to list (seeded sample)")
    ap.add_argument("--no-report", action="store_true", help="print only; do not append to docs/benchmarks.md")
    args = ap.parse_args()
    papers = load_iclr() if args.corpus == "iclr" else load_seeds()
    t0 = time.perf_counter()
    ex = {p.id: extract(p.abstract) for p in papers}
    res = resolve(ex)
    t_extract = time.perf_counter() - t0
    nodes: dict[str, Any] = {**res.concepts, **res.datasets}
    names = {tid: {key(n.name), *(key(a) for a in n.aliases)} for tid, n in nodes.items()}

    outcome: Counter[str] = Counter()
    misses: list[str] = []
    merged_to: dict[str, set[str]] = defaultdict(set)  # short key -> concept ids it merged into
    defined_in: dict[str, set[str]] = defaultdict(set)
    for p in papers:
        for short, long_form in oracle(p.abstract).items():
            sk, lk = short_key(short), key(long_form)
            defined_in[sk].add(p.id)
            terms = res.paper_terms.get(p.id, {})
            both = [t for t in terms if sk in names[t] and lk in names[t]]
            has_s = any(sk in names[t] for t in terms)
            has_l = any(lk in names[t] for t in terms)
            if both:
                outcome["merged"] += 1
                merged_to[sk].update(both)
            elif has_s or has_l:
                outcome["short only" if has_s else "long only"] += 1
                misses.append(f"{p.id}: {long_form!r} ({short}) -> {'short' if has_s else 'long'} form only")
            else:
                outcome["neither"] += 1
                misses.append(f"{p.id}: {long_form!r} ({short}) -> neither")
    total = sum(outcome.values())

    alone_hit = alone_all = 0
    unique = {sk: next(iter(ids)) for sk, ids in merged_to.items() if len(ids) == 1}
    shorts = {sk: re.compile(r"(?<![A-Za-z0-9-])" + re.escape(sk.upper()) + r"s?(?![A-Za-z0-9-])") for sk in unique}
    alone_miss: list[str] = []
    for p in papers:
        for sk, tid in unique.items():
            if p.id in defined_in[sk] or not shorts[sk].search(p.abstract):
                continue
            alone_all += 1
            if tid in res.paper_terms.get(p.id, {}):
                alone_hit += 1
            else:
                alone_miss.append(f"{p.id}: {sk.upper()} -> {nodes[tid].name}")

    rep = Report(f"Acronyms: Schwartz-Hearst definitions vs the extractor ({args.corpus})")
    rows = [[k, v, v / max(total, 1)] for k, v in (("merged", outcome["merged"]), ("short only", outcome["short only"]),
                                                  ("long only", outcome["long only"]), ("neither", outcome["neither"]))]
    rows.append(["used alone in another paper: resolved to the merged concept", f"{alone_hit} of {alone_all}",
                 alone_hit / max(alone_all, 1)])
    rng = random.Random(7)
    listed = sorted(rng.sample(misses, min(args.misses, len(misses))))
    listed_alone = sorted(rng.sample(alone_miss, min(args.misses, len(alone_miss))))
    rep.add(f"{len(papers)} abstracts, {total} definitions found by the oracle (short form >= 2 capitals, long "
            f"form >= 2 words); extraction + resolution {t_extract:.0f} s.\n\n"
            + table(["definition", "count", "share"], rows)
            + "\n\nA seeded sample of the misses (read them: some are the oracle's):\n\n"
            + "\n".join(f"* {m}" for m in listed)
            + "\n\nA seeded sample of short forms used alone and not resolved:\n\n"
            + "\n".join(f"* {m}" for m in listed_alone))
    if not args.no_report:
        rep.save()


if __name__ == "__main__":
    main()
