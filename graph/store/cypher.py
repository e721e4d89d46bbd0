"""Every Cypher statement the Neo4j store runs, in one place.

Rules kept here:

* Values always travel as parameters (``$ids``, ``$rows``…), never inside the text.
* The only names put into query text are labels and relationship types, and they come
  from :class:`~graph.model.NodeKind` / :class:`~graph.model.RelType` members (checked by
  :func:`label` and :func:`rel_type`), never from user input.
* Neo4j 5 syntax only (runs unchanged on 5.26 and 2025.x). No APOC, no GDS.
* User text reaches the fulltext index only as a parameter built by :func:`lucene_query`.
* The vector index DDL is the one statement with a number in its text (index options
  cannot be parameters): the dimension, checked by :func:`vector_dims`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graph.errors import InvalidArgumentError
from graph.model import NodeKind, RelType
from graph.query.filters import CountBy, PaperFilter, PaperOrder, PaperSort
from graph.query.text import COLUMN_WEIGHTS, fold
from graph.schema import endpoints, target_kinds

#: Neo4j 5 refuses a vector index over more dimensions ("must be between 1 and 4096").
MAX_VECTOR_DIMS = 4096
#: The cosine vector index on ``Paper.embedding``.
VECTOR_INDEX = "paper_embedding"

META_LABEL = "CitegraphMeta"
_PAPER = NodeKind.PAPER.value
META_ID = "meta"

#: Endpoint labels of each relationship type (source label, target label).
ENDPOINTS: dict[RelType, tuple[NodeKind, NodeKind]] = {t: endpoints(t) for t in RelType}


def label(kind: NodeKind) -> str:
    """A label for query text; only enum members are accepted."""
    if not isinstance(kind, NodeKind):
        raise InvalidArgumentError("kind", f"not a node kind: {kind!r}")
    return kind.value


def rel_type(t: RelType) -> str:
    """A relationship type for query text; only enum members are accepted."""
    if not isinstance(t, RelType):
        raise InvalidArgumentError("rel_types", f"not a relationship type: {t!r}")
    return t.value


# --------------------------------------------------------------------------- schema


#: The properties a range index holds, by kind (the id's unique constraint is one too).
INDEXED_PROPS: dict[NodeKind, tuple[str, str]] = {
    k: ("id", "label" if k is NodeKind.PAPER else "name") for k in NodeKind
}
#: The largest value a range index holds, in UTF-8 bytes: 8,164 on 5.26 (measured: one
#: byte more and the write fails with "Property value is too large to index"), less a
#: margin. The store refuses a change with a longer value before it writes anything.
INDEX_VALUE_MAX_BYTES = 8_000


def schema_statements() -> list[str]:
    """Idempotent constraints and lookup indexes (the vector index: :func:`create_vector_index`)."""
    stmts: list[str] = []
    for kind in NodeKind:
        lab = label(kind)
        low = lab.lower()
        stmts.append(
            f"CREATE CONSTRAINT {low}_id IF NOT EXISTS FOR (n:{lab}) REQUIRE n.id IS UNIQUE"
        )
        prop = INDEXED_PROPS[kind][1]
        stmts.append(f"CREATE INDEX {low}_{prop} IF NOT EXISTS FOR (n:{lab}) ON (n.{prop})")
    stmts.append(
        f"CREATE CONSTRAINT citegraphmeta_id IF NOT EXISTS "
        f"FOR (n:{META_LABEL}) REQUIRE n.id IS UNIQUE"
    )
    stmts.append(create_text_index())
    stmts.append(create_name_index())
    return stmts


def vector_dims(dims: int) -> int:
    """``dims`` checked to be a plain int the vector index accepts (it goes into DDL text)."""
    if isinstance(dims, bool) or not isinstance(dims, int) or not 1 <= dims <= MAX_VECTOR_DIMS:
        raise InvalidArgumentError(
            "embeddings",
            f"dimension {dims!r} is outside Neo4j's vector index range 1..{MAX_VECTOR_DIMS}",
        )
    return dims


def create_vector_index(dims: int) -> str:
    """The cosine vector index on ``Paper.embedding``.

    ``IF NOT EXISTS`` is a no-op whenever *any* vector index covers ``Paper.embedding``,
    whatever its name or dimension, so the store first drops an index that does not fit
    (see :data:`VECTOR_INDEXES`).
    """
    return (
        f"CREATE VECTOR INDEX {VECTOR_INDEX} IF NOT EXISTS "
        f"FOR (n:{_PAPER}) ON (n.embedding) OPTIONS {{indexConfig: {{"
        f"`vector.dimensions`: {vector_dims(dims)}, `vector.similarity_function`: 'cosine'}}}}"
    )


def drop_index(name: str) -> str:
    """DROP INDEX for a name the server listed (quoted, so any name is taken literally)."""
    if not isinstance(name, str) or not name:
        raise InvalidArgumentError("index", f"not an index name: {name!r}")
    return "DROP INDEX `" + name.replace("`", "``") + "` IF EXISTS"


#: Vector indexes (ours by name, or any on ``Paper.embedding``) with their configuration.
VECTOR_INDEXES = """
SHOW INDEXES YIELD name, type, state, populationPercent, labelsOrTypes, properties, options
WHERE type = 'VECTOR' OR name = $name
RETURN name, type, state, populationPercent, labelsOrTypes, properties, options
"""

#: Blocks until the index is online or ``$timeout`` seconds have passed (then fails).
AWAIT_INDEX = "CALL db.awaitIndex($name, $timeout)"


# --------------------------------------------------------------------------- node projection

# Nodes come back as a property map without the (large) embedding, plus their label.
_NODE_MAP = (
    "{alias} {{.*, embedding: null, _search_name: null, _search_title: null, "
    "_search_abstract: null, _name_keys: null}}"
)
_NODE = _NODE_MAP + " AS {alias}_props, labels({alias}) AS {alias}_labels"


def _node_cols(alias: str) -> str:
    return _NODE.format(alias=alias)


def _rel_cols(alias: str) -> str:
    return (
        f"startNode({alias}).id AS {alias}_source, endNode({alias}).id AS {alias}_target, "
        f"type({alias}) AS {alias}_type, properties({alias}) AS {alias}_props"
    )


def _union_over_kinds(template: str) -> str:
    """One indexed branch per label, joined with UNION ALL (``{label}`` is filled in)."""
    return "\nUNION ALL\n".join(template.replace("{label}", label(k)) for k in NodeKind)


# --------------------------------------------------------------------------- writes


def upsert_nodes(kind: NodeKind) -> str:
    """Replace each node's properties, keeping its embedding (set separately)."""
    return (
        f"UNWIND $rows AS row\n"
        f"MERGE (n:{label(kind)} {{id: row.id}})\n"
        f"WITH n, row, n.embedding AS keep\n"
        f"SET n = row.props, n.embedding = keep\n"
        f"RETURN count(n) AS written"
    )


def delete_nodes_rows(kind: NodeKind) -> str:
    """DETACH DELETE the nodes of one label whose ids are in ``$rows``."""
    return (
        f"UNWIND $rows AS row\n"
        f"MATCH (n:{label(kind)} {{id: row.id}})\n"
        f"DETACH DELETE n\n"
        f"RETURN count(*) AS deleted"
    )


def _target(t: RelType) -> str:
    """Binds ``b`` to the target: one label's index, or (a type whose target may be of two
    kinds: CITES, a Paper or a Work) each label's index, the one that finds it."""
    kinds = target_kinds(t)
    if len(kinds) == 1:
        return f"MATCH (b:{label(kinds[0])} {{id: row.target}})\n"
    found = "".join(
        f"OPTIONAL MATCH (b{i}:{label(k)} {{id: row.target}})\n" for i, k in enumerate(kinds)
    )
    either = ", ".join(f"b{i}" for i in range(len(kinds)))
    return found + f"WITH row, a, coalesce({either}) AS b WHERE b IS NOT NULL\n"


def upsert_edges(t: RelType) -> str:
    """MERGE edges of one type between existing endpoints; replaces their properties."""
    src, _ = ENDPOINTS[t]
    return (
        f"UNWIND $rows AS row\n"
        f"MATCH (a:{label(src)} {{id: row.source}})\n"
        f"{_target(t)}"
        f"MERGE (a)-[r:{rel_type(t)}]->(b)\n"
        f"SET r = row.props\n"
        f"RETURN count(r) AS written"
    )


def delete_edges(t: RelType) -> str:
    src, dst = ENDPOINTS[t]
    # a target of either kind (CITES): found from the source's index, then by id
    end = f"(b:{label(dst)} {{id: row.target}})" if len(target_kinds(t)) == 1 else (
        "(b) WHERE b.id = row.target"
    )
    return (
        f"UNWIND $rows AS row\n"
        f"MATCH (a:{label(src)} {{id: row.source}})-[r:{rel_type(t)}]->{end}\n"
        f"DELETE r\n"
        f"RETURN count(*) AS deleted"
    )


SET_EMBEDDINGS = f"""
UNWIND $rows AS row
MATCH (n:{label(NodeKind.PAPER)} {{id: row.id}})
SET n.embedding = row.embedding
RETURN count(n) AS written
"""

#: ``$rows`` holds one row; a null model, dim or link settings keeps the stored one.
SET_META_ROWS = f"""
UNWIND $rows AS row
MERGE (m:{META_LABEL} {{id: '{META_ID}'}})
SET m.embedding_model = coalesce(row.model, m.embedding_model),
    m.embedding_dim = coalesce(row.dim, m.embedding_dim),
    m.link_settings = coalesce(row.link_settings, m.link_settings)
RETURN count(m) AS written
"""

#: The writers' lock: taken (and held) by a transaction that is never committed. MERGE
#: under the ``CitegraphMeta.id`` constraint makes a second writer wait for the first's
#: transaction to end (rolled back: nothing is ever stored; a killed process's ends with
#: its connection).
WRITER_LOCK_ID = "writer-lock"
WRITER_LOCK = f"""
MERGE (l:{META_LABEL} {{id: '{WRITER_LOCK_ID}'}})
SET l._lock = true
RETURN l.id AS id
"""

#: The writers' fence. The lock above lives as long as its transaction, and the server
#: can end that transaction while the writer still works (``db.transaction.timeout``,
#: ``TERMINATE TRANSACTIONS``, a dropped connection): a second writer then takes the lock
#: at once. So each writer that takes the lock writes its own token here (committed), and
#: each of its write transactions first locks this node and reads the token back: another
#: writer's token means the lock was lost, and that transaction is rolled back. A holder
#: token's write waits for a running write transaction's commit (the node's lock), so a
#: new writer reads the graph only after the old writer's last commit.
WRITER_FENCE_ID = "writer-fence"
WRITER_FENCE_TAKE = f"""
MERGE (f:{META_LABEL} {{id: '{WRITER_FENCE_ID}'}})
SET f.holder = $token
RETURN f.holder AS holder
"""
WRITER_FENCE_CHECK = f"""
MERGE (f:{META_LABEL} {{id: '{WRITER_FENCE_ID}'}})
SET f.checked = $token
RETURN f.holder AS holder
"""

#: other citegraph writers' lock transactions (their pids), for the waiting message
WRITER_LOCK_HOLDERS = """
SHOW TRANSACTIONS YIELD metaData
WHERE metaData.role = 'writer lock' AND metaData.token <> $token
RETURN metaData.pid AS pid
"""

#: this writer's own waiting lock transaction, to end it at the lock timeout
WRITER_LOCK_MINE = """
SHOW TRANSACTIONS YIELD transactionId, metaData
WHERE metaData.token = $token
RETURN transactionId AS id
"""

TERMINATE_TRANSACTIONS = "TERMINATE TRANSACTIONS $ids"

GET_META = f"""
MATCH (m:{META_LABEL} {{id: '{META_ID}'}})
RETURN m.embedding_model AS model, m.embedding_dim AS dim,
       m.link_settings AS link_settings, coalesce(m.incomplete, false) AS incomplete
"""

#: Set before the first batch of a change that commits batch by batch, removed after its
#: last: still set, the graph holds part of a change (the next write recomputes it whole).
MARK_INCOMPLETE = f"""
MERGE (m:{META_LABEL} {{id: '{META_ID}'}})
SET m.incomplete = true
RETURN count(m) AS written
"""
MARK_COMPLETE = f"""
OPTIONAL MATCH (m:{META_LABEL} {{id: '{META_ID}'}})
REMOVE m.incomplete
RETURN count(m) AS written
"""

#: The graph's version (Neo4jStore.version): a fresh random token written by every
#: transaction that changes the graph, in that transaction, so a reader that sees the
#: token sees the change. Per-process caches of results derived from the graph (PageRank,
#: term counts, the word index) are keyed by it, so a change by any process or replica
#: shows at the next read that looks at it.
GRAPH_VERSION_ID = "version"
BUMP_VERSION = f"""
MERGE (v:{META_LABEL} {{id: '{GRAPH_VERSION_ID}'}})
SET v.token = randomUUID()
RETURN count(v) AS written
"""
GET_VERSION = f"""
MATCH (v:{META_LABEL} {{id: '{GRAPH_VERSION_ID}'}})
RETURN v.token AS token
"""

#: Deletes at most ``$limit`` nodes; run until it returns 0 (keeps each transaction small).
CLEAR_BATCH = """
MATCH (n)
WITH n LIMIT $limit
DETACH DELETE n
RETURN count(*) AS deleted
"""

PING = "RETURN 1 AS ok"

# --------------------------------------------------------------------------- reads

GET_NODES = _union_over_kinds(
    "MATCH (n:{label}) WHERE n.id IN $ids RETURN " + _node_cols("n")
)

#: Paper ids with a character outside printable ASCII (a space included): a superset of
#: the ids that are not their own key (graph.ids.odd_spellings narrows it).
ODD_PAPER_IDS = f"MATCH (n:{_PAPER}) WHERE n.id =~ '(?s).*[^!-~].*' RETURN n.id AS id"

#: The fulltext index of each node's name keys (``_name_keys``: its label/name, title and
#: aliases as graph.query.search.names_of folds them), each key one term (the keyword
#: analyzer): a lookup by name is an index seek, not a scan of every node.
NAME_INDEX = "citegraph_names"


def create_name_index() -> str:
    """``CREATE FULLTEXT INDEX`` of the name keys over every node kind."""
    labels = "|".join(label(k) for k in NodeKind)
    return (
        f"CREATE FULLTEXT INDEX {NAME_INDEX} IF NOT EXISTS FOR (n:{labels}) "
        "ON EACH [n._name_keys] OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}}"
    )


def names_query(keys: Sequence[str]) -> str:
    """The Lucene query for name keys: each one quoted and escaped (one whole term)."""
    return " OR ".join(f'"{lucene_escape(k)}"' for k in keys)


#: Name lookup through :data:`NAME_INDEX` (``$text`` from :func:`names_query`).
FIND_BY_NAME_KEYS = (
    "CALL db.index.fulltext.queryNodes($index, $text) YIELD node\n"
    "WITH node AS n\nRETURN " + _node_cols("n")
)

#: Nodes written before the name keys were (no ``_name_keys``): filled once on open.
def nameless_nodes(kind: NodeKind) -> str:
    """A page (``$limit``) of ``kind``'s nodes without ``_name_keys``."""
    return (
        f"MATCH (n:{label(kind)}) WHERE n._name_keys IS NULL "
        f"RETURN {_node_cols('n')} LIMIT $limit"
    )


#: Name lookup candidates by a scan (keys too long for the index): label/name, title or
#: alias lower-cased equal to one of ``$names``.
FIND_BY_NAME = _union_over_kinds(
    "MATCH (n:{label})\n"
    "WHERE toLower(coalesce(n.label, n.name, '')) IN $names\n"
    "   OR toLower(coalesce(n.title, '')) IN $names\n"
    "   OR any(a IN coalesce(n.aliases, []) WHERE toLower(a) IN $names)\n"
    "RETURN " + _node_cols("n")
)


def _list_where(*, venue: bool, year: bool, neighbor: bool) -> str:
    conds = []
    if venue:
        conds.append("n.venue = $venue")
    if year:
        conds.append("n.year = $year")
    if neighbor:
        conds.append("EXISTS { MATCH (n)--(m) WHERE m.id = $neighbor }")
    return f"WHERE {' AND '.join(conds)}\n" if conds else ""


def list_nodes(kind: NodeKind, *, venue: bool, year: bool, neighbor: bool) -> str:
    """A page of one kind ordered by id, with the filters that are in use."""
    where = _list_where(venue=venue, year=year, neighbor=neighbor)
    return (
        f"MATCH (n:{label(kind)})\n{where}"
        f"RETURN {_node_cols('n')}\n"
        f"ORDER BY n.id SKIP $offset LIMIT $limit"
    )


def count_list_nodes(kind: NodeKind, *, venue: bool, year: bool, neighbor: bool) -> str:
    """The total that goes with :func:`list_nodes`."""
    where = _list_where(venue=venue, year=year, neighbor=neighbor)
    return f"MATCH (n:{label(kind)})\n{where}RETURN count(n) AS total"


# ---- filters (graph.query.filters): one query each, values always parameters

def paper_where(where: PaperFilter, *, within: bool = False) -> tuple[str, dict[str, Any]]:
    """The papers ``where`` admits (``within``: and whose id is in ``$ids``) as ``n``, and
    the parameters. Without ids to start from, the first linked field (a concept's
    papers) drives the match from the named nodes' id index; labels and types come from
    the registry, every value is a parameter."""
    conds: list[str] = []
    params: dict[str, Any] = {}
    paper = label(NodeKind.PAPER)
    if where.year_from is not None:
        conds.append("n.year >= $year_from")
        params["year_from"] = where.year_from
    if where.year_to is not None:
        conds.append("n.year <= $year_to")
        params["year_to"] = where.year_to
    if where.venue_set:
        conds.append("n.venue IN $venues")
        params["venues"] = list(where.venue_set)
    head = f"MATCH (n:{paper})\n"
    for i, (ids, types) in enumerate(where.links()):
        kinds = "|".join(rel_type(t) for t in sorted(types))
        params[f"link{i}"] = list(ids)
        ends = {ENDPOINTS[t][1] for t in types}
        if i == 0 and not within and len(ends) == 1:
            end = label(ends.pop())
            head = (f"MATCH (m:{end}) WHERE m.id IN $link0\n"
                    f"MATCH (n:{paper})-[:{kinds}]->(m)\nWITH DISTINCT n\n")
            continue
        conds.append(f"EXISTS {{ MATCH (n)-[:{kinds}]->(m) WHERE m.id IN $link{i} }}")
    if within:
        conds.append("n.id IN $ids")
    return head + (f"WHERE {' AND '.join(conds)}\n" if conds else ""), params


def _sort_value(by: PaperOrder) -> str:
    if by is PaperOrder.YEAR:
        return "n.year"
    if by is PaperOrder.TITLE:
        return "coalesce(n.title, n.label)"
    if by is PaperOrder.IMPORTANCE:
        return "n.importance"
    cites, paper = rel_type(RelType.CITES), label(NodeKind.PAPER)
    return f"COUNT {{ (n)<-[:{cites}]-(:{paper}) }}"


def match_papers(where: str, sort: PaperSort | None) -> str:
    """The ids of ``where``'s papers sorted (ties by id), ``$offset`` on, ``$limit`` of them
    (null: all), and how many match: one round trip."""
    if sort is None:
        order = "n.id"
        with_key = "n"
    else:
        direction = "DESC" if sort.descending else "ASC"
        order = f"k IS NULL, k {direction}, n.id"
        with_key = f"n, {_sort_value(sort.by)} AS k"
    return (
        f"{where}WITH {with_key}\nORDER BY {order}\n"
        "WITH collect(n.id) AS ids\n"
        "RETURN size(ids) AS total,\n"
        "  CASE WHEN $limit IS NULL THEN ids[$offset..] ELSE ids[$offset..$offset + $limit] END"
        " AS page"
    )


def paper_counts(where: str, by: CountBy) -> str:
    """Papers grouped by year (ascending), venue, concept or top-level topic (by count,
    then key), the first ``$limit`` groups."""
    if by is CountBy.CONCEPT:
        mentions, concept = rel_type(RelType.MENTIONS), label(NodeKind.CONCEPT)
        return (f"{where}MATCH (n)-[:{mentions}]->(m:{concept})\n"
                "WITH m.id AS k, count(DISTINCT n) AS c\n"
                "RETURN k, c ORDER BY c DESC, k LIMIT $limit")
    if by is CountBy.TOPIC:  # top-level topics: level 1
        in_topic, topic = rel_type(RelType.IN_TOPIC), label(NodeKind.TOPIC)
        return (f"{where}MATCH (n)-[:{in_topic}]->(t:{topic}) WHERE t.level = 1\n"
                "WITH t.id AS k, count(DISTINCT n) AS c\n"
                "RETURN k, c ORDER BY c DESC, k LIMIT $limit")
    key = "n.year" if by is CountBy.YEAR else "n.venue"
    ranked = "k" if by is CountBy.YEAR else "c DESC, k"
    return (f"{where}WITH {key} AS k WHERE k IS NOT NULL\n"
            f"WITH k, count(*) AS c\nRETURN k, c ORDER BY {ranked} LIMIT $limit")


#: Node and edge counts, one row per label and per type (each branch reads the counts store).
STATS = "\nUNION ALL\n".join(
    [f"MATCH (n:{label(k)}) RETURN 'node' AS what, '{label(k)}' AS name, count(n) AS c"
     for k in NodeKind]
    + [f"MATCH ()-[r:{rel_type(t)}]->() RETURN 'edge' AS what, '{rel_type(t)}' AS name,"
       " count(r) AS c" for t in RelType]
    # the mark of a write committing (or cut off) batch by batch: see MARK_INCOMPLETE
    + [f"MATCH (m:{META_LABEL} {{id: '{META_ID}'}}) WHERE m.incomplete "
       "RETURN 'mark' AS what, 'incomplete' AS name, 1 AS c"]
)

#: One neighbourhood ring: for each node next to ``$ids`` (of a label in ``$kinds``, not
#: in ``$exclude``), the summed weight of the ``$types`` edges joining it to the ring.
RING_WEIGHTS = _union_over_kinds(
    "MATCH (a:{label})-[r]-(b)\n"
    "WHERE a.id IN $ids AND type(r) IN $types AND NOT b.id IN $exclude\n"
    "  AND any(x IN labels(b) WHERE x IN $kinds)\n"
    "RETURN b.id AS id, sum(coalesce(r.weight, 1.0)) AS w"
)

def _nodes_of(ids: str) -> str:
    """A ``CALL`` yielding ``n``, the nodes whose id is in ``ids`` (each label's id index)."""
    return "CALL {\n" + _union_over_kinds(
        "MATCH (n:{label}) WHERE n.id IN " + ids + " RETURN n"
    ) + "\n}\n"


#: The top of one neighbourhood ring (``Backend.ring_top``), ranked in the database: of the
#: nodes next to ``$ids`` (of a label in ``$kinds``, not in ``$exclude``), by the summed
#: weight of the ``$types`` edges joining them to the ring, how many there are and those
#: that may rank in the first ``$room``: every one weighing at least the ``$room``-th
#: heaviest less 1e-8 (the query layer's own cut, graph.query.traverse._near_top), all of
#: them when a weight is not finite. Python ranks those exactly (ties by id in Python's
#: string order, not the server's UTF-16 one), so a ring of 3,000 nodes sends ~room rows.
RING_TOP = (
    _nodes_of("$ids")
    + "MATCH (n)-[r]-(b)\n"
    "WHERE type(r) IN $types AND NOT b.id IN $exclude\n"
    "  AND any(x IN labels(b) WHERE x IN $kinds)\n"
    "WITH b.id AS id, sum(coalesce(r.weight, 1.0)) AS w\n"
    "ORDER BY w DESC\n"
    "WITH collect([id, w]) AS reach\n"
    "WITH reach, size(reach) AS reached,\n"
    "     all(x IN reach WHERE x[1] - x[1] = 0.0) AS finite\n"
    "WITH reach, reached, CASE WHEN $room > 0 AND $room < reached AND finite\n"
    "     THEN reach[$room - 1][1] - 1.0e-8 END AS cut\n"
    "RETURN reached, CASE WHEN $room = 0 THEN [] WHEN cut IS NULL THEN reach\n"
    "     ELSE [x IN reach WHERE x[1] >= cut] END AS top"
)

def _ring(name: str, near: str, before: str) -> str:
    """A ``CALL`` giving ``{name}`` ([[node, summed weight]] by weight, heaviest first:
    the nodes next to the node list ``near`` not in ``before``) and ``{name}_top`` (those
    that may rank in ``$limit`` less ``size(before)``: RING_TOP's cut)."""
    return (
        f"CALL {{\n  WITH {near if near == before else near + ', ' + before}\n"
        f"  UNWIND {near} AS a\n"
        "  MATCH (a)-[r]-(b)\n"
        "  WHERE type(r) IN $types AND any(x IN labels(b) WHERE x IN $kinds)\n"
        f"  WITH {before}, b, sum(coalesce(r.weight, 1.0)) AS w\n"
        f"  WHERE NOT b IN {before}\n"
        "  WITH b, w ORDER BY w DESC\n"
        f"  RETURN collect([b, w]) AS {name}\n}}\n"
        f"WITH *, $limit - size({before}) AS {name}_room,\n"
        f"     all(x IN {name} WHERE x[1] - x[1] = 0.0) AS {name}_finite\n"
        f"WITH *, CASE WHEN {name}_room > 0 AND {name}_room < size({name}) AND {name}_finite\n"
        f"     THEN {name}[{name}_room - 1][1] - 1.0e-8 END AS {name}_cut\n"
        f"WITH *, CASE WHEN {name}_room <= 0 THEN [] WHEN {name}_cut IS NULL THEN {name}\n"
        f"     ELSE [x IN {name} WHERE x[1] >= {name}_cut] END AS {name}_top\n"
    )


#: A neighbourhood's first two rings in one round trip (``Backend.walk``): the seeds of
#: ``$ids`` that exist; ring 1 from all of them, ring 2 (when ``$depth`` >= 2 and ring 1
#: fits in ``$limit``: the only case in which the query layer walks on) from all of ring
#: 1; each ring's candidates cut as RING_TOP cuts, with how many it reached; the seeds'
#: and the candidates' nodes with their ``$types`` edges among them, unless there are more
#: than ``$hold_max`` of them (weights tied at a cut through a hub: then null, and the kept
#: nodes are read apart).
WALK = (
    _nodes_of("$ids")
    + "WITH collect(n) AS seeds\n"
    + _ring("ring1", "seeds", "seeds")
    + "WITH *, CASE WHEN $depth >= 2 AND size(ring1) <= ring1_room\n"
    "     THEN [x IN ring1 | x[0]] ELSE [] END AS whole1\n"
    "WITH *, seeds + whole1 AS before2\n"
    + _ring("ring2", "whole1", "before2")
    + "WITH seeds, ring1, ring1_top, ring2, ring2_top, whole1,\n"
    "     seeds + [x IN ring1_top | x[0]] + [x IN ring2_top | x[0]] AS held\n"
    "RETURN [s IN seeds | s.id] AS present,\n"
    "  [x IN ring1_top | [x[0].id, x[1]]] AS top1, size(ring1) AS reached1,\n"
    "  [x IN ring2_top | [x[0].id, x[1]]] AS top2, size(ring2) AS reached2,\n"
    "  size(whole1) > 0 AS walked2,\n"
    "  CASE WHEN size(held) <= $hold_max THEN\n"
    "  [n IN held | [" + _NODE_MAP.format(alias="n") + ", labels(n),\n"
    "    [(n)-[r]->(m) WHERE m IN held AND type(r) IN $types\n"
    "     | [m.id, type(r), properties(r)]]]] END AS nodes"
)

#: The nodes of ``$ids`` and the ``$types`` edges among them (``Backend.nodes_and_edges``):
#: one row per node, with its edges out to the others as [target, type, properties].
NODES_AND_EDGES = (
    _nodes_of("$ids")
    + "RETURN " + _node_cols("n") + ",\n"
    "  [(n)-[r]->(b) WHERE b.id IN $ids AND type(r) IN $types\n"
    "   | [b.id, type(r), properties(r)]] AS out"
)

#: The ``$types`` edges touching ``$ids`` with the nodes at both ends
#: (``Backend.incident_with_ends``: a node with its neighbours in one round trip): one row
#: per node of ``$ids``, its edges as [source, target, type, properties, far end's
#: properties, far end's labels].
INCIDENT_WITH_ENDS = (
    _nodes_of("$ids")
    + "RETURN " + _node_cols("n") + ",\n"
    "  [(n)-[r]-(b) WHERE type(r) IN $types | [startNode(r).id, endNode(r).id, type(r),\n"
    "   properties(r), " + _NODE_MAP.format(alias="b") + ", labels(b)]] AS adj\n"
)

#: The neighbour ids of each node of a ring (one breadth-first layer of a path search).
RING_NEIGHBORS = _union_over_kinds(
    "MATCH (a:{label})-[r]-(b)\n"
    "WHERE a.id IN $ids AND type(r) IN $types\n"
    "RETURN a.id AS near, collect(DISTINCT b.id) AS ids"
)

#: Edges with both ends in ``$ids`` (edges among kept nodes).
EDGES_AMONG = _union_over_kinds(
    "MATCH (a:{label})-[r]->(b)\n"
    "WHERE a.id IN $ids AND b.id IN $ids AND type(r) IN $types\n"
    "RETURN " + _rel_cols("r")
)


#: Edges (type-filtered) touching ``$ids``, without node data: one BFS layer.
ADJACENT = _union_over_kinds(
    "MATCH (a:{label})-[r]-(b)\n"
    "WHERE a.id IN $ids AND type(r) IN $types\n"
    "RETURN a.id AS near, " + _rel_cols("r")
)


# --------------------------------------------------------------------------- keyword search

#: The fulltext (Lucene) index keyword search reads: every node kind, over the columns of
#: :func:`graph.query.text.search_fields` (papers: label, title, abstract; concepts and
#: datasets: name and aliases) as :func:`graph.query.text.index_text` splits them into
#: words (graph.store.neo4j_values.SEARCH_PROPS), so that Lucene finds the words FTS5
#: finds in the other stores. The English analyzer stems (Porter, as FTS5's porter
#: tokenizer) and drops the stop words query_terms drops too.
TEXT_INDEX = "citegraph_words"
#: the index of releases before the words were split as FTS5 splits them: the store fills
#: the new index's properties of an older graph once, then drops it
OLD_TEXT_INDEX = "citegraph_text"

#: (property, boost): the Lucene spelling of graph.query.text.COLUMN_WEIGHTS
TEXT_FIELDS: tuple[tuple[str, float], ...] = (
    ("_search_name", COLUMN_WEIGHTS[0]),
    ("_search_title", COLUMN_WEIGHTS[1]),
    ("_search_abstract", COLUMN_WEIGHTS[2]),
)


def create_text_index() -> str:
    """``CREATE FULLTEXT INDEX`` over every node kind (Neo4j 5 and 2025.x syntax)."""
    labels = "|".join(label(k) for k in NodeKind)
    props = ", ".join(f"n.{p}" for p, _ in TEXT_FIELDS)
    return (
        f"CREATE FULLTEXT INDEX {TEXT_INDEX} IF NOT EXISTS FOR (n:{labels}) ON EACH [{props}] "
        "OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}"
    )


#: Lucene's query syntax characters, escaped with a backslash wherever they occur
_LUCENE_SPECIAL = frozenset('+-&|!(){}[]^"~*?:\\/')


def lucene_escape(text: str) -> str:
    """``text`` with every Lucene operator character escaped (read as a literal)."""
    return "".join("\\" + c if c in _LUCENE_SPECIAL else c for c in text)


def lucene_query(terms: Sequence[str]) -> str:
    """The Lucene query for query_terms: each term, quoted and escaped, in each field with
    its boost, OR-joined (at most 32 terms x 3 fields, below Lucene's 1,024 clauses)."""
    return " OR ".join(
        f'{prop}:"{lucene_escape(fold(t))}"^{boost:g}'
        for t in terms for prop, boost in TEXT_FIELDS
    )


def unsearchable_nodes(kind: NodeKind) -> str:
    """A page (``$limit``) of ``kind``'s nodes written before their search properties were
    (graph.store.neo4j_values.SEARCH_PROPS): filled once when the store opens."""
    return (
        f"MATCH (n:{label(kind)}) WHERE n._search_name IS NULL "
        f"RETURN {_node_cols('n')} LIMIT $limit"
    )


def set_search_props(kind: NodeKind) -> str:
    """Set ``$rows``' search properties (``{id, props}``, props: the SEARCH_PROPS)."""
    return (
        f"UNWIND $rows AS row MATCH (n:{label(kind)} {{id: row.id}}) "
        "SET n += row.props RETURN count(n) AS written"
    )


#: Keyword hits: ``$text`` from :func:`lucene_query`, nodes of ``$labels``, best ``$limit``.
KEYWORD_QUERY = """
CALL db.index.fulltext.queryNodes($index, $text) YIELD node, score
WHERE any(l IN labels(node) WHERE l IN $labels)
WITH node.id AS id, round(score, 9) AS score
RETURN id, score ORDER BY score DESC, id LIMIT $limit
"""


COUNT_EMBEDDED = f"""
MATCH (n:{_PAPER}) WHERE n.embedding IS NOT NULL RETURN count(n) AS c
"""

#: Exact scan: every embedding, for an exact cosine in Python (small graphs).
ALL_EMBEDDINGS = f"""
MATCH (n:{_PAPER}) WHERE n.embedding IS NOT NULL AND NOT n.id IN $exclude
RETURN n.id AS id, n.embedding AS embedding
"""

GET_EMBEDDINGS = f"""
MATCH (n:{_PAPER}) WHERE n.id IN $ids AND n.embedding IS NOT NULL
RETURN n.id AS id, n.embedding AS embedding
"""

#: Approximate candidates from the vector index (``$index`` is :data:`VECTOR_INDEX`).
VECTOR_QUERY = """
CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score
WHERE NOT node.id IN $exclude
RETURN node.id AS id, node.embedding AS embedding
"""

ALL_NODES = _union_over_kinds("MATCH (n:{label}) RETURN " + _node_cols("n"))

ALL_EDGES = "MATCH (a)-[r]->(b) RETURN " + _rel_cols("r")


# --------------------------------------------------------------------------- pages (exports)
# The whole graph a page at a time (graph.store.base.PagedReads), for exports. Each label's
# id constraint is a range index read in id order from the last id of the page before (a
# keyset page, never SKIP), so a page costs its own size whatever its place in the graph.


def _first_per_kind(where: str, extra: str = "") -> str:
    """The first ``$limit`` nodes by id of each label that satisfy ``where``, by id."""
    branches = _union_over_kinds(
        f"MATCH (n:{{label}}) WHERE {where}{extra} RETURN n ORDER BY n.id LIMIT $limit"
    )
    return f"CALL {{\n{branches}\n}}\nWITH n ORDER BY n.id LIMIT $limit\n"


def _node_page(where: str) -> str:
    return _first_per_kind(where) + "RETURN " + _node_cols("n")


def _edge_page(where: str) -> str:
    # sources with an edge out, in id order; of those, as many as it takes to reach $limit
    # edges (each source's edges whole), found from their degrees before any edge is read
    return (
        _first_per_kind(where, " AND EXISTS { (n)-->() }")
        + "WITH n, COUNT { (n)-->() } AS out\n"
        "WITH collect(n) AS sources, collect(out) AS outs\n"
        "WITH sources, reduce(acc = [0, 0], d IN outs | CASE WHEN acc[0] < $limit\n"
        "     THEN [acc[0] + d, acc[1] + 1] ELSE acc END)[1] AS taken\n"
        "UNWIND sources[0..taken] AS a\n"
        "MATCH (a)-[r]->(b)\n"
        "RETURN " + _rel_cols("r") + "\nORDER BY a.id, b.id, type(r)"
    )


#: The first ``$limit`` nodes by id (``PagedReads.node_page``)
NODE_PAGE_FIRST = _node_page("n.id IS NOT NULL")
#: The ``$limit`` nodes by id after ``$after``
NODE_PAGE_AFTER = _node_page("n.id > $after")
#: The edges out of the first nodes by id, about ``$limit`` (``PagedReads.edge_page``)
EDGE_PAGE_FIRST = _edge_page("n.id IS NOT NULL")
#: The same after the node ``$after``
EDGE_PAGE_AFTER = _edge_page("n.id > $after")


# --------------------------------------------------------------------------- citations
# Co-citation and coupling (Backend.citation_overlap): two hops over CITES, counted in
# the database; only each pair's shared ids and the two degrees come back.
_CITES = rel_type(RelType.CITES)

#: coupling: papers citing a work a seed cites; shared: those works
COUPLING = f"""
UNWIND $ids AS sid
MATCH (s:{_PAPER} {{id: sid}})-[:{_CITES}]->(w)<-[:{_CITES}]-(q:{_PAPER})
WHERE q <> s
WITH s, q, collect(DISTINCT w.id) AS shared
RETURN s.id AS seed, q.id AS partner, shared,
       COUNT {{ (s)-[:{_CITES}]->() }} AS ns, COUNT {{ (q)-[:{_CITES}]->() }} AS nq
"""

#: co-citation: what a paper citing a seed (a Paper or a Work) cites too; shared: the
#: citing papers (each label's id index finds the seed)
COCITATION = f"""
UNWIND $ids AS sid
CALL {{
  WITH sid MATCH (s:{_PAPER} {{id: sid}}) RETURN s
  UNION
  WITH sid MATCH (s:{label(NodeKind.WORK)} {{id: sid}}) RETURN s
}}
MATCH (s)<-[:{_CITES}]-(c:{_PAPER})-[:{_CITES}]->(q)
WHERE q <> s
WITH s, q, collect(DISTINCT c.id) AS shared
RETURN s.id AS seed, q.id AS partner, shared,
       COUNT {{ ()-[:{_CITES}]->(s) }} AS ns, COUNT {{ ()-[:{_CITES}]->(q) }} AS nq
"""
