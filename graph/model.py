"""Domain types: papers, concepts, datasets and the typed edges between them.

These are plain frozen dataclasses. Stores and the API convert to and from
them at their edges; nothing here knows about GraphQL or a database driver.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from graph.schema import UNDIRECTED, NodeKind, RelType

# The kinds and types live in the registry (graph.schema); re-exported here because
# every domain type refers to them.
__all__ = ["UNDIRECTED", "NodeKind", "RelType"]


@dataclass(frozen=True, slots=True)
class Paper:
    """One paper. ``text_hash`` identifies the normalised abstract (cache key, dedup)."""

    id: str
    label: str
    abstract: str
    text_hash: str
    title: str | None = None
    venue: str | None = None
    year: int | None = None
    authors: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    references: tuple[str, ...] = ()  # reference keys (graph.refs): doi:…, arxiv:…, an id or title
    doi: str | None = None  # normalised (graph.refs.normalize_doi): lower-case, no URL prefix
    source: str | None = None  # "file:line" the record came from
    # PageRank at the last topic computation (graph.topics), written by it alone; None
    # before one, or for a paper added since. Not the paper's content: equality ignores it
    importance: float | None = field(default=None, compare=False)
    # the fields its input record gave a value for (None: all, e.g. read from a store);
    # an update of a stored paper keeps the stored value of every other field
    given: frozenset[str] | None = field(default=None, compare=False, repr=False)

    kind: NodeKind = field(default=NodeKind.PAPER, init=False)

    @property
    def name(self) -> str:
        return self.label


@dataclass(frozen=True, slots=True)
class Concept:
    """A method, task, model family or technique; ``aliases`` holds acronyms and variants."""

    id: str
    name: str
    aliases: tuple[str, ...] = ()
    category: str = "concept"  # method | task | model | technique | concept

    kind: NodeKind = field(default=NodeKind.CONCEPT, init=False)

    @property
    def label(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Dataset:
    """A named dataset or benchmark."""

    id: str
    name: str
    aliases: tuple[str, ...] = ()

    kind: NodeKind = field(default=NodeKind.DATASET, init=False)

    @property
    def label(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Work:
    """An outside work: named by a reference of a corpus paper, not itself in the corpus.

    ``id`` is ``work:`` + its reference key (graph.citations.work_id); ``name`` the title
    when the key is one, else the DOI or arXiv id. It lives while a paper cites it, and
    gives way to the paper when one that the reference names is added."""

    id: str
    name: str
    ref: str  # the reference key it stands for (graph.refs)

    kind: NodeKind = field(default=NodeKind.WORK, init=False)

    @property
    def label(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Topic:
    """A community of papers (graph.topics): ``topic:<n>``, or ``topic:<n>.<m>`` for a
    subtopic of ``topic:<n>`` (``parent``). What it shows is computed with it and stored
    on it, so a read is a node read: its label's concepts (c-TF-IDF, most distinctive
    first), its top papers (by importance), its datasets, its papers per year. ``version``
    and ``corpus``: the store version and paper count it was computed at; ``changed``:
    papers added or removed since (what the recompute rule counts)."""

    id: str
    name: str
    level: int = 1  # 1: a topic, 2: a subtopic
    parent: str | None = None
    size: int = 0
    concepts: tuple[str, ...] = ()  # concept ids, most distinctive first
    concept_names: tuple[str, ...] = ()
    papers: tuple[str, ...] = ()  # the top paper ids, most important first
    datasets: tuple[str, ...] = ()  # dataset ids, most used first
    years: tuple[int, ...] = ()  # the years its papers have, ascending
    year_counts: tuple[int, ...] = ()  # papers in each of ``years``
    version: str | None = None
    corpus: int = 0
    changed: int = 0

    kind: NodeKind = field(default=NodeKind.TOPIC, init=False)

    @property
    def label(self) -> str:
        return self.name


GraphNode = Paper | Concept | Dataset | Work | Topic


class FixedAttrs(Mapping[str, Any]):
    """Edge attributes with a fixed set of keys, held in slots, read as any Mapping.

    A build holds every edge before it writes them (millions at 100k papers); a dict per
    edge costs 100-250 bytes more than these (~0.6 GB at 100k papers). Equal to a dict
    (or any Mapping) with the same items, as the stored JSON decodes to.
    """

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()

    def __getitem__(self, key: str) -> Any:
        if key in self._fields:
            return getattr(self, key)
        raise KeyError(key)

    # Mapping's get / in go through __getitem__ and a KeyError per miss
    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in self._fields else default

    def __contains__(self, key: object) -> bool:
        return key in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def as_dict(self) -> dict[str, Any]:
        """The items as a dict (what ``dict(attrs)`` gives, without a lookup per key)."""
        return {f: getattr(self, f) for f in self._fields}

    def __eq__(self, other: object) -> bool:
        if type(other) is type(self):
            return all(getattr(self, f) == getattr(other, f) for f in self._fields)
        if isinstance(other, Mapping):
            return len(other) == len(self._fields) and all(
                f in other and other[f] == getattr(self, f) for f in self._fields
            )
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    # ``attrs | {...}`` makes a new dict, as with the dicts these replace
    def __or__(self, other: Mapping[str, Any]) -> dict[str, Any]:
        return dict(self.items()) | dict(other.items())

    def __ror__(self, other: Mapping[str, Any]) -> dict[str, Any]:
        return dict(other.items()) | dict(self.items())

    def __repr__(self) -> str:
        return repr(dict(self.items()))


class MentionAttrs(FixedAttrs):
    """MENTIONS / USES / INTRODUCES: the sentence that shows it, and how often."""

    __slots__ = ("count", "evidence")
    _fields = ("evidence", "count")

    def __init__(self, evidence: str | None, count: int) -> None:
        self.evidence = evidence
        self.count = count


class CountAttrs(FixedAttrs):
    """RELATED_TO: how many papers mention both concepts."""

    __slots__ = ("count",)
    _fields = ("count",)

    def __init__(self, count: int) -> None:
        self.count = count


class RankAttrs(FixedAttrs):
    """SIMILAR_TO below rank 1 (rank 1 carries its list's settings too, in a dict)."""

    __slots__ = ("rank", "score", "words")
    _fields = ("score", "words", "rank")

    def __init__(self, score: float, words: float, rank: int) -> None:
        self.score = score
        self.words = words
        self.rank = rank


class TermAttrs(FixedAttrs):
    """SHARES_TERM: the shared terms (names, ids, weights, heaviest first) and who kept it.

    The three lists are held as tuples (a build holds 1.3M of these at 100k papers: ~90
    MB less) and read as lists, as their stored JSON decodes to.
    """

    __slots__ = ("_term_ids", "_term_weights", "_terms", "kept_by", "weight")
    _fields = ("weight", "terms", "term_ids", "term_weights", "kept_by")

    def __init__(
        self, weight: float, terms: Sequence[str], term_ids: Sequence[str],
        term_weights: Sequence[float], kept_by: str,
    ) -> None:
        self.weight = weight
        self._terms = tuple(terms)
        self._term_ids = tuple(term_ids)
        self._term_weights = tuple(term_weights)
        self.kept_by = kept_by

    @property
    def terms(self) -> list[str]:
        return list(self._terms)

    @property
    def term_ids(self) -> list[str]:
        return list(self._term_ids)

    @property
    def term_weights(self) -> list[float]:
        return list(self._term_weights)


@dataclass(frozen=True, slots=True)
class Edge:
    """A typed edge. ``attrs`` holds the type's properties (score, rank, terms, evidence…)."""

    source: str
    target: str
    type: RelType
    weight: float = 1.0
    attrs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, RelType]:
        return (self.source, self.target, self.type)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Edge):
            return NotImplemented
        return (
            self.key == other.key
            and abs(self.weight - other.weight) < 1e-9
            and dict(self.attrs) == dict(other.attrs)
        )

    def __hash__(self) -> int:
        return hash(self.key)


def slug(text: str) -> str:
    """Lower-case ASCII-ish slug used inside concept and dataset ids."""
    norm = unicodedata.normalize("NFKC", text).casefold()
    norm = re.sub(r"[^\w]+", "-", norm).strip("-")
    return norm or hashlib.sha256(text.encode()).hexdigest()[:12]


def concept_id(canonical: str) -> str:
    return f"concept:{slug(canonical)}"


def dataset_id(canonical: str) -> str:
    return f"dataset:{slug(canonical)}"


#: Id prefixes of the kinds whose ids citegraph makes itself (see concept_id, dataset_id).
RESERVED_ID_PREFIXES: tuple[str, ...] = ("concept:", "dataset:", "work:", "topic:")


def is_global_id(value: str) -> bool:
    """Whether ``value`` reads as a global (Relay) id: base64 of ``"<Kind>:<raw id>"``.

    The same test as the API's id decoder, so that a paper id that passes here is
    never mistaken for a global id there.
    """
    if not value or len(value) % 4 or ":" in value or not value.isascii():
        return False
    try:
        text = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    kind, sep, raw = text.partition(":")
    return bool(sep and raw) and kind in {k.value for k in NodeKind}


def reserved_paper_id(value: str) -> str | None:
    """Why ``value`` cannot be a paper id (another kind's namespace, a global id), or None."""
    lowered = value.casefold()
    for prefix in RESERVED_ID_PREFIXES:
        if lowered.startswith(prefix):
            return f"ids starting with {prefix!r} are reserved for {prefix[:-1]} nodes"
    if is_global_id(value):
        return "looks like a global id (base64 of 'Kind:id'), which lookups would decode"
    return None


def _fields_of(cls: type[Any]) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.name not in ("kind", "given"))


#: the fields storage keeps of each node class (all but ``kind``), in order
_STORED_FIELDS: dict[type[Any], tuple[str, ...]] = {
    cls: _fields_of(cls) for cls in (Paper, Concept, Dataset, Work, Topic)
}


def node_to_props(node: GraphNode) -> dict[str, Any]:
    """Flat property dict for storage (tuples become lists; None values dropped)."""
    props: dict[str, Any] = {}
    for name in _STORED_FIELDS[type(node)]:
        value = getattr(node, name)
        if value is None:
            continue
        props[name] = list(value) if isinstance(value, tuple) else value
    return props


def node_from_props(kind: NodeKind | str, props: Mapping[str, Any]) -> GraphNode:
    """Inverse of :func:`node_to_props`."""
    kind = NodeKind(kind)
    cls: type[Paper] | type[Concept] | type[Dataset] | type[Work] | type[Topic] = {
        NodeKind.PAPER: Paper,
        NodeKind.CONCEPT: Concept,
        NodeKind.DATASET: Dataset,
        NodeKind.WORK: Work,
        NodeKind.TOPIC: Topic,
    }[kind]
    from dataclasses import fields

    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name == "kind" or f.name not in props:
            continue
        value = props[f.name]
        if isinstance(value, list):
            value = tuple(value)
        kwargs[f.name] = value
    return cls(**kwargs)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Subgraph:
    """Nodes and edges around some seed nodes; ``truncated`` when a node cap cut it short."""

    nodes: tuple[GraphNode, ...]
    edges: tuple[Edge, ...]
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class GraphPath:
    """An ordered path: ``nodes[i]`` and ``nodes[i+1]`` are joined by ``edges[i]``.

    Edges keep their stored direction, so ``edges[i].source`` may be ``nodes[i+1]``.
    """

    nodes: tuple[GraphNode, ...]
    edges: tuple[Edge, ...]

    @property
    def hops(self) -> int:
        return len(self.edges)

    @property
    def strength(self) -> float:
        return sum(e.weight for e in self.edges)


@dataclass(frozen=True, slots=True)
class SearchHit:
    node: GraphNode
    score: float


@dataclass(frozen=True, slots=True)
class Overlap:
    """Two nodes joined through CITES, as a store counts it (graph.store.base.Backend
    ``citation_overlap``). Coupling: ``partner`` is a paper citing works ``seed`` cites,
    ``shared`` those works, the degrees how many each cites. Co-citation: ``partner`` is
    cited by papers citing ``seed``, ``shared`` those papers, the degrees how many cite
    each."""

    seed: str
    partner: str
    shared: tuple[str, ...]  # sorted
    seed_degree: int
    partner_degree: int


@dataclass(frozen=True, slots=True)
class CitationLink:
    """A node joined to seed papers through CITES (graph.query.citations).

    Coupling and co-citation: ``strength`` is Salton's cosine, shared / sqrt(n_a x n_b),
    averaged over the seeds; ``shared`` the first few shared works (coupling) or citing
    papers (co-citation) and ``count`` how many in all. Prior works: ``count`` is how many
    seeds cite it, derivative works: how many seeds it cites; ``strength`` that count over
    the seeds, ``shared`` the first few of those seeds."""

    node: GraphNode
    strength: float
    count: int
    shared: tuple[GraphNode, ...]


@dataclass(frozen=True, slots=True)
class Reason:
    """One readable reason why a paper is recommended.

    kind: ``similar`` (embedding cosine), ``words`` (TF-IDF cosine of the wording, with
    the grams that weigh most), ``concept`` / ``dataset`` (shared term, weight = its IDF),
    ``cites`` / ``cited_by``, ``coupled`` / ``co_cited`` (weight = Salton's cosine, node_id
    = the first shared work or citer), ``path``.
    """

    kind: str
    text: str
    weight: float
    node_id: str | None = None


@dataclass(frozen=True, slots=True)
class RelatedPaper:
    paper: Paper
    score: float
    similarity: float
    reasons: tuple[Reason, ...]
    path: GraphPath | None = None


@dataclass(frozen=True, slots=True)
class GraphStats:
    nodes: Mapping[str, int]  # keyed by NodeKind value
    edges: Mapping[str, int]  # keyed by RelType value
    #: the graph holds part of a write: one committing batch by batch now, or one cut off
    #: (killed, the server gone); the next write (or the same command again) completes it.
    #: Only a server store that splits large writes (Neo4j) ever says so.
    incomplete: bool = False


@dataclass
class GraphData:
    """A whole graph in memory: what the build pipeline produces and stores persist."""

    nodes: dict[str, GraphNode] = field(default_factory=dict)
    edges: dict[tuple[str, str, RelType], Edge] = field(default_factory=dict)
    embedding_model: str | None = None
    # paper id -> row in ``embeddings`` (float32, L2-normalised, shape (n, dim))
    embedding_ids: list[str] = field(default_factory=list)
    embeddings: Any = None  # numpy.ndarray | None; Any keeps numpy out of the domain types
    # what the stored links were computed with beyond what their rows say (SHARES_TERM's
    # top_k, max_df, min_weight), as JSON text; None: not recorded (a graph written before
    # they were). An add under other values recomputes those links whole.
    link_settings: str | None = None
    # derived, never stored: the build's SIMILAR_TO pools (graph.link.SimilarPools, rows as
    # ``embedding_ids``), for the region state to rank later adds from; None: not computed
    similar_pools: Any = None
    # read, never written by the pipeline: the store says a batched write was cut off part
    # way (Neo4j), so the stored links and vectors are not to be trusted and reused
    incomplete: bool = False

    def add_edge(self, edge: Edge) -> None:
        self.edges[edge.key] = edge


@dataclass(frozen=True, slots=True)
class GraphChange:
    """A diff to apply to a store. Deleting a node deletes its edges."""

    upsert_nodes: tuple[GraphNode, ...] = ()
    delete_nodes: tuple[str, ...] = ()
    upsert_edges: tuple[Edge, ...] = ()
    delete_edges: tuple[tuple[str, str, RelType], ...] = ()
    embedding_ids: tuple[str, ...] = ()
    embeddings: Any = None  # rows for embedding_ids
    embedding_model: str | None = None
    link_settings: str | None = None  # GraphData.link_settings to record; None: unchanged

    @property
    def empty(self) -> bool:
        return not (
            self.upsert_nodes
            or self.delete_nodes
            or self.upsert_edges
            or self.delete_edges
            or self.embedding_ids
            or self.link_settings
        )
