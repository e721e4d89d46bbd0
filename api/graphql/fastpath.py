"""Completing lists of flat rows in one pass instead of one resolver call per field.

graphql-core completes every field of every object on its own (build a resolve
info, call the resolver, complete the value): ~5 µs a field, which makes a
200-node / 2,000-edge neighborhood cost several times the store call that made
it. The rows of the graph payloads (``GraphNode``, ``GraphEdge``, ``PathHop``)
are plain attributes with no resolvers and no arguments, so a list of them can be
completed directly: collect the selection once (graphql-core's own
``collect_subfields``, so fragments, aliases, ``@skip``/``@include`` and
``__typename`` keep their meaning), then read and serialize each attribute.

A resolver may also hand over :class:`RawRows`: the domain objects the rows would
be made from, with getters that read each field straight from them. The fast path
then makes no row objects at all (a depth-2 neighbourhood has thousands of edges,
and making a row per edge cost about as much as completing it); the standard path
reads the rows, made one by one as it iterates. Columns are read a field at a
time (``map`` over the items), not a row at a time.

Anything unusual (``@defer``/``@stream``, a null in a non-null field, a field
with arguments) falls back to the standard path, which then reports errors the
usual way. ``tests/api/test_fastpath.py`` checks both paths give equal results.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from operator import attrgetter
from typing import Any, ClassVar

from graphql import (
    GraphQLBoolean,
    GraphQLEnumType,
    GraphQLFloat,
    GraphQLID,
    GraphQLInt,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLSchema,
    GraphQLString,
    is_leaf_type,
)
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

Getter = Callable[[Any], Any]
# GraphQL type name -> {GraphQL field name: Python attribute, or a method taking the row
# alone (a field computed only when a query selects it)}
FlatPlan = Mapping[str, Mapping[str, str | Getter]]

_IDENTITY: dict[Any, type] = {
    GraphQLString: str,
    GraphQLID: str,
    GraphQLFloat: float,
    GraphQLInt: int,
    GraphQLBoolean: bool,
}


_NONE = type(None)


class _FallbackError(Exception):
    """This list needs the standard completion."""


class RawRows(Sequence[Any]):
    """Flat rows held as the objects they are made from (``raw``), made by ``make``
    only when read one by one; ``direct`` reads GraphQL fields from a raw item."""

    __slots__ = ("direct", "make", "raw")

    def __init__(
        self, raw: Sequence[Any], make: Getter, direct: Mapping[str, Getter]
    ) -> None:
        self.raw, self.make, self.direct = raw, make, direct

    def __len__(self) -> int:
        return len(self.raw)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.make(x) for x in self.raw[i]]
        return self.make(self.raw[i])

    def __iter__(self) -> Iterator[Any]:
        return map(self.make, self.raw)


# (response key, getter, serializer, identity type, non-null, is list)
Column = tuple[str, Getter | None, Getter, type | None, bool, bool]


def _column(
    key: str, name: str, attrs: Mapping[str, str | Getter], obj_type: GraphQLObjectType
) -> Column:
    """(response key, getter, serializer, identity type, non-null, is list) for one field."""
    if name == "__typename":
        return (key, None, str, None, True, False)
    if name not in attrs:
        raise _FallbackError
    ftype: Any = obj_type.fields[name].type
    nonnull = isinstance(ftype, GraphQLNonNull)
    if nonnull:
        ftype = ftype.of_type
    is_list = isinstance(ftype, GraphQLList)
    if is_list:
        inner = ftype.of_type
        if isinstance(inner, GraphQLNonNull):
            inner = inner.of_type
        ftype = inner
    if not is_leaf_type(ftype):
        raise _FallbackError
    serialize: Getter = ftype.serialize
    if isinstance(ftype, GraphQLEnumType):
        serialize = _memo(serialize)  # enum members are few and hashable
    source = attrs[name]
    get = attrgetter(source) if isinstance(source, str) else source
    return (key, get, serialize, _IDENTITY.get(ftype), nonnull, is_list)


def _memo(serialize: Getter) -> Getter:
    seen: dict[Any, Any] = {}

    def cached(value: Any) -> Any:
        out = seen.get(value)
        if out is None:
            out = seen[value] = serialize(value)
        return out

    return cached


class FlatListExecutionContext(StrawberryGraphQLCoreExecutionContext):
    """Strawberry's execution context, plus one-pass completion of flat-row lists."""

    #: set on the subclass made for one schema by :func:`execution_context_for`
    flat_plan: ClassVar[FlatPlan] = {}

    def complete_list_value(
        self,
        return_type: GraphQLList[GraphQLOutputType],
        field_details_list: Any,
        info: Any,
        path: Any,
        result: Any,
        position_context: Any,
    ) -> Any:
        item_type = return_type.of_type
        if isinstance(item_type, GraphQLNonNull):
            item_type = item_type.of_type
        if (
            isinstance(item_type, GraphQLObjectType)
            and item_type.name in self.flat_plan
            and isinstance(result, list | tuple | RawRows)
            and not any(fd.node.directives for fd in field_details_list)
        ):
            try:
                return self._complete_flat(item_type, field_details_list, result)
            except _FallbackError:
                pass
        return super().complete_list_value(
            return_type, field_details_list, info, path, result, position_context
        )

    def _complete_flat(
        self, obj_type: GraphQLObjectType, field_details_list: Any, items: Sequence[Any]
    ) -> list[dict[str, Any]]:
        collected = self.collect_subfields(obj_type, field_details_list)
        if collected.new_defer_usages:
            raise _FallbackError
        attrs = self.flat_plan[obj_type.name]
        raw = items.raw if isinstance(items, RawRows) else items
        columns = []
        for key, details in collected.grouped_field_set.items():
            node = details[0].node
            if node.arguments:
                raise _FallbackError
            name = node.name.value
            column = _column(key, name, attrs, obj_type)
            if isinstance(items, RawRows) and column[1] is not None:
                get = items.direct.get(name)
                if get is None:  # read from the row: make it (for this field only)
                    get = _through(items.make, column[1])
                column = (key, get, *column[2:])
            columns.append(column)
        typename = obj_type.name
        values: list[list[Any]] = []
        for _key, get, ser, same, nonnull, is_list in columns:
            if get is None:
                values.append([typename] * len(raw))
                continue
            col = list(map(get, raw))
            # one pass for both questions (a null? anything to serialize?): ``None in col``
            # was a second pass of equality tests, ~0.13 ms a column of 4,000 edges
            kinds = set(map(type, col))
            if _NONE in kinds:
                if nonnull:
                    raise _FallbackError  # the standard path reports the error
                col = [None if v is None else _leaf(v, ser, same, is_list) for v in col]
            elif is_list:
                col = [_leaf(v, ser, same, True) for v in col]
            elif kinds - {same}:  # some need serializing (enums: all)
                if same is None:  # an enum: few members, each serialized once
                    table = {v: ser(v) for v in set(col)}
                    col = list(map(table.__getitem__, col))
                else:
                    col = [v if type(v) is same else ser(v) for v in col]
            values.append(col)
        if not values:  # every field skipped by a directive
            return [{} for _ in raw]
        return _row_maker(len(values))(values, *(c[0] for c in columns))


@functools.cache
def _row_maker(n: int) -> Callable[..., list[dict[str, Any]]]:
    """``f(columns, key_0, ..., key_n-1)``: the rows as dicts, made by a dict display (a
    third of the time of ``dict(zip(keys, row))``). The code names only positions; the
    keys (the query's own aliases) are arguments, never part of the code."""
    keys = ", ".join(f"k{i}" for i in range(n))
    row = ", ".join(f"k{i}: v{i}" for i in range(n))
    names = ", ".join(f"v{i}" for i in range(n)) + ("," if n == 1 else "")
    code = f"lambda columns, {keys}: [{{{row}}} for {names} in zip(*columns)]"
    made: Callable[..., list[dict[str, Any]]] = eval(code, {"zip": zip})  # noqa: S307
    return made


def _through(make: Getter, get: Getter) -> Getter:
    return lambda item: get(make(item))


def _leaf(value: Any, ser: Getter, same: type | None, is_list: bool) -> Any:
    if is_list:
        return [v if type(v) is same else ser(v) for v in value]
    return value if type(value) is same else ser(value)


def flat_plan(schema: GraphQLSchema, types: FlatPlan) -> FlatPlan:
    """Check the plan against the built schema: every field a leaf, read from an attribute
    or computed by a method of the row that takes no arguments."""
    for type_name, attrs in types.items():
        obj = schema.get_type(type_name)
        if not isinstance(obj, GraphQLObjectType):
            raise TypeError(f"{type_name} is not an object type")
        missing = set(obj.fields) - set(attrs)
        if missing:
            raise TypeError(f"{type_name}: no attribute for fields {sorted(missing)}")
        for name, source in attrs.items():
            if not isinstance(source, str) and (
                obj.fields[name].args or len(inspect.signature(source).parameters) != 1
            ):
                raise TypeError(f"{type_name}.{name}: a flat row's method takes only the row")
    return types


def execution_context_for(plan: FlatPlan) -> type[FlatListExecutionContext]:
    """A FlatListExecutionContext subclass bound to ``plan``."""
    return type("CitegraphExecutionContext", (FlatListExecutionContext,), {"flat_plan": plan})
