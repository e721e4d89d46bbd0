"""Query depth and cost limits whose own cost is linear in the document's size.

strawberry's ``QueryDepthLimiter`` walks every path through the fragments, so a
chain of fragments that each spread the next one twice (1.8 kB, 2**40 paths)
kept the event loop busy for good. Here every fragment is measured once and
memoised; a spread adds the fragment's measure, so the walk visits each
selection of the document a bounded number of times (twice at most: see
``sized`` below). Arithmetic saturates at ``limit + 1``, so the numbers stay
small however the fragments multiply.

* depth: a :class:`graphql.ValidationRule` (independent of variables, so
  the validation cache may keep its result);
* cost: checked after validation and before execution (by the extension in
  :mod:`api.graphql.extension`), because the ``first:`` a query asks for is often a
  variable.

The cost estimate is fan-out times depth: each field costs 1 plus its
sub-selection's cost times the field's multiplier; ``first:``, ``limit:`` and
``k:`` are the multiplier of the field that takes them, the length of ``ids:``
that of ``nodes``, and a list without such an argument counts
``DEFAULT_LIST_SIZE`` items, unless it sits right inside a sized field (the
``edges`` of a connection, the ``nodes`` of a neighborhood: already counted).

A field whose work is not linear in what it returns (related papers, semantic and
hybrid search, paths, neighbourhoods, PageRank) also costs its call's own work
(:func:`call_cost`): a related() call reads and ranks hundreds of candidates to
return five, a SEMANTIC search encodes a text and scans every vector.

Every argument is read as execution will read it (graphql-core's own coercion): a
literal, a variable given, a variable's declared default (``$n: Int = 100`` sent
with no variables), the argument's own default, an Int sent as ``100.0``. Reading
only the variables given let a query declare ``$n: Int! = 100`` and pass at the
cost of ``first: 10`` (issue 39, finding 6).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from graphql import (
    ASTValidationRule,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLField,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValidationContext,
    get_named_type,
    value_from_ast_untyped,
)
from graphql.execution.values import VariableValues, get_argument_values, get_variable_values

from graph.errors import CitegraphError

#: items a list field without a size argument is counted as (concepts, cites, reasons…)
DEFAULT_LIST_SIZE = 10
#: arguments that say how many items a field returns
SIZE_ARGUMENTS = ("first", "limit", "k")

# The work of one call of a field that does more than list what it returns, in the
# estimate's units (an item of a list costs 1). Weighed against the default limit
# (60,000) and the default request time limit (10 s) on the slow store at scale: on
# Neo4j at ICLR 2021 (2,600 papers) one related(first: 5) took ~0.65 s and one
# related(first: 100) ~3 s, so a call weighs 4,000 plus 100 per item asked for; a
# SEMANTIC search scans every vector, a HYBRID one also encodes the keyword hits.
#: one related() call, and each paper it is asked for (its candidates grow with first)
RELATED_CALL = 4_000
RELATED_ITEM = 100
#: each paper given as positive or negative: a lookup, its vector and its edges
RELATED_SEED = 200
#: a text to encode (related(text:), the query of a SEMANTIC/HYBRID search)
ENCODE = 1_000
#: the vector scan of a SEMANTIC search; a HYBRID one adds the keyword side and encodes
#: the names of its keyword hits
SEARCH_SEMANTIC = 2_000
SEARCH_HYBRID = 4_000
#: a path search: per hop allowed (x k for paths), as the frontier grows with each
PATH_HOP = 300
#: a neighbourhood: per ring (depth); its nodes are counted by its limit
NEIGHBORHOOD_RING = 1_000
#: PageRank over the whole graph (cached until the graph changes)
CENTRAL = 2_000
#: a citation read (priorWorks, derivativeWorks, coupled, cocited): per seed, its two
#: hops over CITES (a seed citing a classic reaches all the classic's citers)
CITATION_SEED = 300
CITATION_FIELDS = frozenset({"priorWorks", "derivativeWorks", "coupled", "cocited"})
#: a ``where`` or ``sort`` (graph.query.filters): the store's filtered or sorted read, at
#: worst a pass over the papers; and each value of its lists (a concept or dataset named
#: is a lookup). A list longer than graph.query.filters.MAX_VALUES is refused, naming it.
WHERE_CALL = 200
WHERE_VALUE = 20
#: one countsBy grouping (a grouped pass over the papers under the where)
COUNTS_CALL = 500


class QueryTooCostlyError(CitegraphError):
    """A query whose estimated cost is over ``max_query_cost``; rejected unexecuted."""

    def __init__(self, cost: int, limit: int, operation: str) -> None:
        shown = f"more than {limit}" if cost > limit else str(cost)
        super().__init__(
            f"query {operation!r} is too costly: estimated cost {shown}, limit {limit} "
            "(CITEGRAPH_MAX_QUERY_COST). The estimate multiplies each list by its "
            f"first/limit/k (unsized lists count {DEFAULT_LIST_SIZE}) down the nesting, "
            "and counts the work of each call of related, SEMANTIC/HYBRID search, paths, "
            "shortestPath, neighborhood and centralConcepts; ask for fewer items per "
            "level, fewer levels or fewer of those calls"
        )
        self.cost = cost
        self.limit = limit


def _fragments(definitions: Any) -> dict[str, FragmentDefinitionNode]:
    return {d.name.value: d for d in definitions if isinstance(d, FragmentDefinitionNode)}


def _operations(definitions: Any) -> Iterator[OperationDefinitionNode]:
    return (d for d in definitions if isinstance(d, OperationDefinitionNode))


def _name(op: OperationDefinitionNode) -> str:
    return op.name.value if op.name else "anonymous"


# --------------------------------------------------------------------------- depth


class _Depth:
    """Depth as strawberry's QueryDepthLimiter counts it, each fragment measured once.

    A field with a sub-selection is 1 + its deepest child; a leaf is 0; introspection
    fields (``__schema``, ``__type``, ``__typename``) are 0, as there (the cost
    limit covers them). A fragment on a cycle counts 0: graphql-core's
    NoFragmentCycles reports the cycle itself.
    """

    def __init__(self, fragments: Mapping[str, FragmentDefinitionNode]) -> None:
        self.fragments = fragments
        self.memo: dict[str, int] = {}
        self.active: set[str] = set()

    def selections(self, node: SelectionSetNode | None) -> int:
        if node is None:
            return 0
        deepest = 0
        for sel in node.selections:
            if isinstance(sel, FieldNode):
                if sel.selection_set is None or sel.name.value.startswith("__"):
                    d = 0
                else:
                    d = 1 + self.selections(sel.selection_set)
            elif isinstance(sel, InlineFragmentNode):
                d = self.selections(sel.selection_set)
            elif isinstance(sel, FragmentSpreadNode):
                d = self.fragment(sel.name.value)
            else:  # pragma: no cover (no other selection kinds exist)
                d = 0
            deepest = max(deepest, d)
        return deepest

    def fragment(self, name: str) -> int:
        if name in self.memo:
            return self.memo[name]
        frag = self.fragments.get(name)
        if frag is None or name in self.active:
            return 0
        self.active.add(name)
        try:
            self.memo[name] = self.selections(frag.selection_set)
        finally:
            self.active.discard(name)
        return self.memo[name]


def operation_depths(definitions: Any) -> dict[str, int]:
    """Each operation's depth, in time linear in the document's size."""
    walker = _Depth(_fragments(definitions))
    return {_name(op): walker.selections(op.selection_set) for op in _operations(definitions)}


def depth_rule(max_depth: int) -> type[ASTValidationRule]:
    """A validation rule rejecting operations deeper than ``max_depth``."""

    class QueryDepthRule(ASTValidationRule):
        def __init__(self, context: ValidationContext) -> None:
            super().__init__(context)
            definitions = context.document.definitions
            walker = _Depth(_fragments(definitions))  # shared: fragments measured once
            for op in _operations(definitions):
                depth = walker.selections(op.selection_set)
                if depth > max_depth:
                    context.report_error(GraphQLError(
                        f"'{_name(op)}' exceeds maximum operation depth of {max_depth} "
                        f"(it is {depth} deep; CITEGRAPH_MAX_QUERY_DEPTH)",
                        op,
                    ))

    return QueryDepthRule


# --------------------------------------------------------------------------- aliases


class _Aliases:
    """Aliased fields, counted through every spread (as strawberry's MaxAliasesLimiter
    counts them) but with each fragment counted once, saturating at ``saturate``."""

    def __init__(self, fragments: Mapping[str, FragmentDefinitionNode], saturate: int) -> None:
        self.fragments = fragments
        self.saturate = saturate
        self.memo: dict[str, int] = {}
        self.active: set[str] = set()

    def selections(self, node: SelectionSetNode | None) -> int:
        if node is None:
            return 0
        total = 0
        for sel in node.selections:
            if isinstance(sel, FieldNode):
                total += (sel.alias is not None) + self.selections(sel.selection_set)
            elif isinstance(sel, InlineFragmentNode):
                total += self.selections(sel.selection_set)
            elif isinstance(sel, FragmentSpreadNode):
                total += self.fragment(sel.name.value)
            if total >= self.saturate:
                return self.saturate
        return total

    def fragment(self, name: str) -> int:
        if name in self.memo:
            return self.memo[name]
        frag = self.fragments.get(name)
        if frag is None or name in self.active:
            return 0
        self.active.add(name)
        try:
            self.memo[name] = self.selections(frag.selection_set)
        finally:
            self.active.discard(name)
        return self.memo[name]


def alias_rule(max_aliases: int) -> type[ASTValidationRule]:
    """A validation rule rejecting documents with more than ``max_aliases`` aliases."""

    class MaxAliasesRule(ASTValidationRule):
        def __init__(self, context: ValidationContext) -> None:
            super().__init__(context)
            definitions = context.document.definitions
            walker = _Aliases(_fragments(definitions), max_aliases + 1)
            total = 0
            for op in _operations(definitions):
                total = min(total + walker.selections(op.selection_set), max_aliases + 1)
            if total > max_aliases:
                shown = f"more than {max_aliases}" if total > max_aliases else str(total)
                context.report_error(GraphQLError(
                    f"{shown} aliases found. Allowed: {max_aliases} (CITEGRAPH_MAX_ALIASES)"
                ))

    return MaxAliasesRule


# --------------------------------------------------------------------------- cost


def _unwrap(t: Any) -> tuple[bool, GraphQLNamedType]:
    """(is a list, named type) of an output type."""
    if isinstance(t, GraphQLNonNull):
        t = t.of_type
    return isinstance(t, GraphQLList), get_named_type(t)


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def call_cost(
    parent: str, field: str, args: Mapping[str, Any], caps: Mapping[str, int]
) -> tuple[int, int]:
    """(work of one call, work per item) of ``parent.field`` called with ``args`` (its
    coerced arguments): (0, 0) for a field that only lists what it returns. A value
    counts up to its cap (``caps``: ``ids`` for a list of ids, ``k``, ``maxHops``,
    ``depth``): a larger one is refused by the resolver, naming the argument. A ``where``
    and a ``sort`` add their own work (:func:`where_cost`)."""
    if parent == "PaperAggregate" and field == "countsBy":
        return COUNTS_CALL, 0
    filtering = where_cost(args.get("where"), caps) + (WHERE_CALL if args.get("sort") else 0)
    call, per_item = _call_cost(parent, field, args, caps)
    return call + filtering, per_item


def where_cost(where: Any, caps: Mapping[str, int]) -> int:
    """The work a ``where`` adds to its field's call: WHERE_CALL, and WHERE_VALUE per value
    of its lists, counted up to ``caps["where"]`` each (more are refused by the resolver)."""
    if not where:
        return 0

    def part(value: Any, name: str) -> Any:
        return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)

    cap = caps.get("where", 100)
    values = 0
    for name in ("venue", "concept", "dataset"):
        ops = part(where, name)
        if ops:
            listed = part(ops, "in") if isinstance(ops, Mapping) else part(ops, "in_")
            n = len(listed) if isinstance(listed, list | tuple) else 0
            values += min(n, cap) + (part(ops, "eq") is not None)
    return WHERE_CALL + WHERE_VALUE * values


def _call_cost(
    parent: str, field: str, args: Mapping[str, Any], caps: Mapping[str, int]
) -> tuple[int, int]:
    def size(name: str) -> int:
        value = args.get(name)
        n = len(value) if isinstance(value, list | tuple) else 0
        return min(n, caps.get("ids", n))

    def count(name: str) -> int:
        n = max(_int(args.get(name), 1), 1)
        return min(n, caps.get(name, n))

    if field == "related" and parent in ("Query", "Paper"):
        seeds = size("positive") + size("negative")
        call = RELATED_CALL + RELATED_SEED * seeds + size("exclude")
        if args.get("text") is not None:
            call += ENCODE
        return call, RELATED_ITEM
    if parent == "Stats" and field == "centralConcepts":
        return CENTRAL, 0
    if parent != "Query":
        return 0, 0
    if field == "search":
        mode = getattr(args.get("mode"), "name", args.get("mode"))
        mode = str(mode).upper() if mode is not None else "KEYWORD"
        if mode == "SEMANTIC":
            return ENCODE + SEARCH_SEMANTIC, 0
        if mode == "HYBRID":
            return ENCODE + SEARCH_HYBRID, 0
        return 0, 0
    if field == "paths":
        return PATH_HOP * count("maxHops") * count("k"), 0
    if field == "shortestPath":
        return PATH_HOP * count("maxHops"), 0
    if field == "neighborhood":
        return NEIGHBORHOOD_RING * count("depth"), 0
    if field in CITATION_FIELDS:
        return CITATION_SEED * max(size("ids"), 1), 0
    return 0, 0


def variable_values(
    schema: GraphQLSchema, op: OperationDefinitionNode, inputs: Mapping[str, Any]
) -> VariableValues | None:
    """``op``'s variables as execution will see them: coerced, with their declared
    defaults; None when they do not coerce (execution refuses the request then)."""
    got = get_variable_values(schema, op.variable_definitions or (), dict(inputs), max_errors=1)
    return None if isinstance(got, list) else got


def raw_variables(op: OperationDefinitionNode, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The variables given, and each one not given that declares a default, as JSON-like
    values (what a check of the text sent reads: the defaults are sent text too)."""
    out = dict(inputs)
    for definition in op.variable_definitions or ():
        name = definition.variable.name.value
        if name not in out and definition.default_value is not None:
            out[name] = value_from_ast_untyped(definition.default_value)
    return out


class _Cost:
    """The cost estimate of one operation (see the module docstring)."""

    def __init__(
        self,
        schema: GraphQLSchema,
        fragments: Mapping[str, FragmentDefinitionNode],
        variables: VariableValues | None,
        caps: Mapping[str, int],
        saturate: int,
    ) -> None:
        self.schema = schema
        self.fragments = fragments
        self.variables = variables
        self.caps = caps
        self.saturate = saturate
        # keyed by (fragment, sized): two entries per fragment at most
        self.memo: dict[tuple[str, bool], int] = {}
        self.active: set[tuple[str, bool]] = set()

    def _cap(self, value: int) -> int:
        return value if value < self.saturate else self.saturate

    def _args(self, field: FieldNode, definition: GraphQLField) -> dict[str, Any]:
        """The field's arguments as its resolver will get them (defaults included);
        empty when they do not coerce (the field then fails without running)."""
        if not definition.args:
            return {}
        try:
            return get_argument_values(definition, field, self.variables)
        except GraphQLError:
            return {}

    def _multiplier(
        self, field: FieldNode, definition: GraphQLField, args: Mapping[str, Any]
    ) -> int | None:
        """How many items ``field`` returns, from its size argument; None without one."""
        if field.name.value == "nodes" and "ids" in definition.args:
            ids = args.get("ids")
            return len(ids) if isinstance(ids, list) else self.caps.get("ids", 1)
        for name in SIZE_ARGUMENTS:
            if name not in definition.args:
                continue
            value = _int(args.get(name), self.caps.get(name, 1))
            # out-of-range values are refused by the resolver with their own message
            return max(1, min(value, self.caps.get(name, value)))
        return None

    def selections(self, node: SelectionSetNode | None, parent: Any, sized: bool) -> int:
        """Cost of a selection set on type ``parent``; ``sized``: inside a sized field."""
        if node is None:
            return 0
        total = 0
        for sel in node.selections:
            if isinstance(sel, FieldNode):
                total += self.field(sel, parent, sized)
            elif isinstance(sel, InlineFragmentNode):
                inner = parent
                if sel.type_condition is not None:
                    inner = self.schema.get_type(sel.type_condition.name.value) or parent
                total += self.selections(sel.selection_set, inner, sized)
            elif isinstance(sel, FragmentSpreadNode):
                total += self.fragment(sel.name.value, sized)
            if total >= self.saturate:
                return self.saturate
        return total

    def field(self, node: FieldNode, parent: Any, sized: bool) -> int:
        definition = None
        if isinstance(parent, GraphQLObjectType | GraphQLInterfaceType):
            definition = parent.fields.get(node.name.value)
        if definition is None:  # __schema, __type and other meta fields
            if node.selection_set is None:
                return 1
            meta = {"__schema": self.schema.get_type("__Schema"),
                    "__type": self.schema.get_type("__Type")}
            child_type = meta.get(node.name.value)
            return self._cap(1 + self.selections(node.selection_set, child_type, False))
        args = self._args(node, definition)
        call, per_item = call_cost(parent.name, node.name.value, args, self.caps)
        if node.selection_set is None:
            return self._cap(1 + call)
        is_list, child_type = _unwrap(definition.type)
        mult = self._multiplier(node, definition, args)
        child_sized = mult is not None and not is_list
        if mult is None:
            mult = 1 if (sized or not is_list) else DEFAULT_LIST_SIZE
        inner = self.selections(node.selection_set, child_type, child_sized)
        return self._cap(1 + call + mult * (per_item + inner))

    def fragment(self, name: str, sized: bool) -> int:
        key = (name, sized)
        if key in self.memo:
            return self.memo[key]
        frag = self.fragments.get(name)
        if frag is None or key in self.active:
            return 0
        self.active.add(key)
        try:
            on = self.schema.get_type(frag.type_condition.name.value)
            self.memo[key] = self.selections(frag.selection_set, on, sized)
        finally:
            self.active.discard(key)
        return self.memo[key]


def operation_cost(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    variables: Mapping[str, Any] | None,
    caps: Mapping[str, int],
    limit: int,
) -> tuple[str, int]:
    """(operation name, estimated cost, saturating at ``limit + 1``) of the operation to run."""
    definitions = document.definitions
    ops = [op for op in _operations(definitions)
           if operation_name is None or _name(op) == operation_name]
    fragments = _fragments(definitions)
    worst = ("anonymous", 0)
    for op in ops:
        root = {
            "query": schema.query_type, "mutation": schema.mutation_type,
            "subscription": schema.subscription_type,
        }.get(op.operation.value)
        # one walk per operation: its variables (and their defaults) are its own
        values = variable_values(schema, op, variables or {})
        walker = _Cost(schema, fragments, values, caps, limit + 1)
        cost = walker.selections(op.selection_set, root, False)
        if cost >= worst[1]:
            worst = (_name(op), cost)
    return worst


def too_costly(
    schema: GraphQLSchema,
    document: Any,
    operation_name: str | None,
    variables: Mapping[str, Any] | None,
    caps: Mapping[str, int],
    max_cost: int,
) -> QueryTooCostlyError | None:
    """The error refusing the operation to run, before execution, when its estimated cost
    is over ``max_cost``; None when it may run (run by :mod:`api.graphql.extension`)."""
    name, cost = operation_cost(schema, document, operation_name, variables, caps, max_cost)
    return QueryTooCostlyError(cost, max_cost, name) if cost > max_cost else None
