"""Completing lists of flat rows in one pass instead of one resolver call per field.

graphql-core completes every field of every object on its own (build a resolve
info, call the resolver, complete the value): ~5 µs a field, which makes a
200-node / 2,000-edge neighborhood cost several times the store call that made
it. The rows of the graph payloads (``GraphNode``, ``GraphEdge``, ``PathHop``)
are plain attributes with no resolvers and no arguments, so a list of them can be
completed directly: collect the selection once (graphql-core's own
``collect_subfields``, so fragments, aliases, ``@skip``/``@include`` and
``__typename`` keep their meaning), then read and serialize each attribute.

Anything unusual (``@defer``/``@stream``, a null in a non-null field, a field
with arguments) falls back to the standard path, which then reports errors the
usual way. ``tests/api/test_fastpath.py`` checks both paths give equal results.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
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


class _FallbackError(Exception):
    """This list needs the standard completion."""


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
            and isinstance(result, list | tuple)
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
        columns = []
        for key, details in collected.grouped_field_set.items():
            node = details[0].node
            if node.arguments:
                raise _FallbackError
            columns.append(_column(key, node.name.value, attrs, obj_type))
        typename = obj_type.name
        rows: list[dict[str, Any]] = []
        append = rows.append
        for item in items:
            row: dict[str, Any] = {}
            for key, get, ser, same, nonnull, is_list in columns:
                if get is None:
                    row[key] = typename
                    continue
                value = get(item)
                if value is None:
                    if nonnull:
                        raise _FallbackError  # the standard path reports the error
                    row[key] = None
                elif is_list:
                    row[key] = [v if type(v) is same else ser(v) for v in value]
                else:
                    row[key] = value if type(value) is same else ser(value)
            append(row)
        return rows


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
