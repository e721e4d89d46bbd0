"""The extractor's protocol and the types it trades in.

An :class:`Extractor` turns one abstract into an :class:`Extraction` (mentions, acronym
definitions, a label), and many papers' extractions into a :class:`Resolution`: the
corpus's concepts and datasets, and each paper's :class:`PaperTerm` links to them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from graph.model import Concept, Dataset, NodeKind


@dataclass(frozen=True, slots=True)
class TermMention:
    """A candidate concept in one abstract (before corpus resolution)."""

    key: str  # normalised surface key: lower-case, head singular ("large language model")
    surface: str  # as written ("Large Language Models")
    count: int  # occurrences in this abstract
    evidence: str  # the first sentence it occurs in, <= 300 chars
    category: str  # method | task | model | technique | concept


@dataclass(frozen=True, slots=True)
class DatasetMention:
    """A named dataset or benchmark in one abstract."""

    name: str  # as written ("CelebA-HQ")
    key: str  # normalised key
    introduces: bool  # the paper presents / releases / builds it
    evidence: str


@dataclass(frozen=True, slots=True)
class Extraction:
    """Everything taken from one abstract; depends only on the text.

    ``concepts`` are ordered by first occurrence, so ``concepts[0].evidence`` is the
    first sentence that mentions any term (``resolve`` uses this as the lead sentence).
    """

    concepts: tuple[TermMention, ...]
    datasets: tuple[DatasetMention, ...]
    acronyms: tuple[tuple[str, str], ...]  # (short, long key), e.g. ("LLM", "large language model")
    label: str  # readable label for a paper with no title


@dataclass(frozen=True, slots=True)
class PaperTerm:
    """One paper's resolved link to a concept or a dataset (graph.link makes the edge)."""

    paper: str
    term: str  # the concept or dataset id
    kind: NodeKind  # CONCEPT or DATASET
    weight: float
    evidence: str  # the sentence that shows the link
    count: int  # mentions in the paper (1 for a dataset)
    introduces: bool = False  # a dataset the paper presents, rather than uses


@dataclass(frozen=True, slots=True)
class Resolution:
    """Corpus-wide concepts and datasets, and each paper's terms among them."""

    concepts: dict[str, Concept]
    datasets: dict[str, Dataset]
    terms: list[PaperTerm]  # sorted by (paper, term)
    paper_terms: dict[str, dict[str, float]]  # paper -> term id -> weight


class Extractor(Protocol):
    """What the build pipeline needs from a concept extractor.

    ``extract`` reads one text and nothing else, so the pipeline caches its result by
    (``version``, text hash) and calls it only for texts it has not seen. ``resolve``
    sees every paper's extraction at once (acronyms defined in one paper resolve
    another's; a term's weight may depend on the corpus) and must give the same result
    for the same papers in any order.

    ``version`` names the extractor and the state of its rules and data: when ``extract``
    may answer differently for some text, ``version`` must change, or the pipeline will
    keep serving cached extractions made by the old rules.
    """

    @property
    def version(self) -> str:
        """Cache key of this extractor's output (changes whenever that output may)."""
        ...

    def extract(self, text: str) -> Extraction:
        """Concept, dataset and acronym mentions of one text, and a label for it."""
        ...

    def resolve(self, extractions: Mapping[str, Extraction]) -> Resolution:
        """Concepts, datasets and per-paper terms for papers keyed by id."""
        ...


class IncrementalResolution(Protocol):
    """A resolution kept current across calls (see :mod:`graph.extract.incremental`).

    ``update`` must return exactly what the extractor's ``resolve`` returns for the same
    extractions, whatever sets it was given before.
    """

    changed_papers: set[str]  # papers whose terms the last update changed (or removed)
    changed_terms: set[str]  # concept/dataset ids whose node it may have changed

    def update(self, extractions: Mapping[str, Extraction]) -> Resolution:
        """The resolution of ``extractions``, reusing the previous call's work."""
        ...

    def advance(
        self, extractions: Mapping[str, Extraction], touched: Collection[str] | None = None
    ) -> bool:
        """As :meth:`update`, without assembling the whole Resolution (False: no change).
        ``touched``: the only ids whose extraction may differ from the last call's, or be
        new or gone (None: any)."""
        ...

    def paper_terms(self, pid: str) -> dict[str, float]:
        """One paper's term ids and weights, after the last update."""
        ...

    def terms_of(self, pid: str) -> list[PaperTerm]:
        """One paper's PaperTerms by term id, after the last update."""
        ...

    def term(self, tid: str) -> Concept | Dataset | None:
        """The concept or dataset of that id, after the last update (None: none)."""
        ...


def extraction_to_json(e: Extraction) -> str:
    """An Extraction as JSON (field names only: no module path, no pickle)."""
    return json.dumps(dataclasses.asdict(e), ensure_ascii=False)


def extraction_from_json(data: str) -> Extraction:
    """The Extraction that :func:`extraction_to_json` wrote."""
    raw = json.loads(data)
    # the JSON holds one copy of a string per mention; equal ones (a sentence that is the
    # evidence of several mentions, a name that is its own surface form) become one
    # object again, as the extractor made them: a build holds every paper's mentions
    # until they are edges (~400 MB of repeated evidence at 100k papers)
    one: dict[str, str] = {}

    def shared(fields: dict[str, Any]) -> dict[str, Any]:
        return {k: one.setdefault(v, v) if type(v) is str else v for k, v in fields.items()}

    return Extraction(
        concepts=tuple(TermMention(**shared(c)) for c in raw["concepts"]),
        datasets=tuple(DatasetMention(**shared(d)) for d in raw["datasets"]),
        acronyms=tuple((a, b) for a, b in raw["acronyms"]),
        label=raw["label"],
    )
