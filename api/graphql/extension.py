"""Every per-request check and rewrite of citegraph's GraphQL, as one strawberry extension.

strawberry makes each extension afresh for every request, and wraps each hook an
extension defines in a context manager (``contextlib.contextmanager``) for every
request: with one extension per concern (eight of them) a request paid for eight
instances, seven hook context managers and 32 hook look-ups before any field
resolved. One extension with one hook per stage gives the same behaviour for four
context managers (docs/benchmarks.md, issue 11 round 8). What each stage does, in
the order the separate extensions ran:

* ``on_operation``: the depth and alias validation rules (as ``AddValidationRules``),
  the token limit of the parser (as ``MaxTokensLimiter``); when the operation ends,
  every error gets its ``extensions.code`` and unexpected ones are masked
  (:func:`api.graphql.errors.client_error`, as strawberry's ``MaskErrors``).
* ``on_parse``: an LRU cache of parsed documents (as ``ParserCache``), minus its one
  hole: a document that does not parse is left unparsed, so strawberry parses it
  again inside the operation, where the error gets its code.
* ``on_validate``: an LRU cache of validation results (as ``ValidationCache``).
* ``on_execute``, before execution: the operation to run (a document of several
  operations must name one: the spec's rule, where strawberry ran the first), the cost
  limit (:mod:`api.graphql.limits`), then valid Unicode in every argument
  (:mod:`api.graphql.arguments`); each answers with an error instead of executing. Both
  checks read the variables as execution will: given, or their declared defaults.
* when the operation ends, an error BUSY (no slot for an expensive query) makes the
  answer HTTP 503 with ``Retry-After``.
* ``get_results``: ``extensions.resolved`` when a name named several nodes
  (:mod:`api.graphql.resolutions`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any

from graphql import ASTValidationRule, GraphQLError, OperationDefinitionNode, parse
from graphql.execution import ExecutionResult as GraphQLExecutionResult
from strawberry.extensions import SchemaExtension
from strawberry.schema.schema import validate_document

from api.graphql.arguments import invalid_argument
from api.graphql.errors import client_error
from api.graphql.limits import alias_rule, depth_rule, raw_variables, too_costly
from api.graphql.resolutions import resolved_json
from api.services import BUSY_RETRY_AFTER_S
from graph.errors import CitegraphError
from graph.query.filters import MAX_VALUES
from graph.settings import Settings

#: documents (and their validation results) kept per schema, most recently used
CACHE_SIZE = 256


class OperationNameError(CitegraphError):
    """A document of several operations sent without ``operationName``."""


def _operation(document: Any, name: str | None) -> OperationDefinitionNode | Exception | None:
    """The operation to run; the error refusing the request when the document holds
    several and ``name`` is None (None when ``name`` names none: strawberry says so)."""
    ops = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if name is None:
        if len(ops) > 1:
            return OperationNameError(
                f"the document holds {len(ops)} operations and the request names none: "
                "say which to run in operationName"
            )
        return ops[0] if ops else None
    return next((op for op in ops if op.name is not None and op.name.value == name), None)


def _refused(exc: Exception) -> GraphQLExecutionResult:
    """The result of an operation refused before execution, for ``exc``."""
    return GraphQLExecutionResult(data=None, errors=[GraphQLError(str(exc), original_error=exc)])


class CitegraphExtension(SchemaExtension):
    """The limits, caches, error codes and name resolutions of one request (see the
    module docstring); made by the factory :func:`citegraph_extension` returns."""

    def __init__(
        self,
        rules: tuple[type[ASTValidationRule], ...],
        max_tokens: int,
        max_cost: int,
        caps: Mapping[str, int],
        parse_cached: Callable[..., Any],
        validate_cached: Callable[..., list[GraphQLError]],
    ) -> None:
        self.rules = rules
        self.max_tokens = max_tokens
        self.max_cost = max_cost
        self.caps = caps
        self.parse_cached = parse_cached
        self.validate_cached = validate_cached

    def on_operation(self) -> Iterator[None]:
        ctx = self.execution_context
        ctx.validation_rules = ctx.validation_rules + self.rules
        ctx.parse_options["max_tokens"] = self.max_tokens
        yield
        result = ctx.result
        errors = getattr(result, "errors", None)
        if result is not None and errors:
            result.errors = [client_error(e) for e in errors]
            if any((e.extensions or {}).get("code") == "BUSY" for e in result.errors):
                response = getattr(ctx.context, "response", None)
                if response is not None:  # HTTP: tell clients and proxies to come back
                    response.status_code = 503
                    response.headers["Retry-After"] = str(BUSY_RETRY_AFTER_S)

    def on_parse(self) -> Iterator[None]:
        ctx = self.execution_context
        try:
            ctx.graphql_document = self.parse_cached(ctx.query, **ctx.parse_options)
        except GraphQLError:
            # raised here, the error would leave the operation as an exception, and the
            # result made from it would get no code; strawberry parses the document again
            # inside the operation, where on_operation sees the error
            ctx.graphql_document = None
        yield

    def on_validate(self) -> Iterator[None]:
        ctx = self.execution_context
        ctx.pre_execution_errors = self.validate_cached(
            ctx.schema._schema, ctx.graphql_document, ctx.validation_rules
        )
        yield

    def on_execute(self) -> Iterator[None]:
        ctx = self.execution_context
        document = ctx.graphql_document
        if document is not None and ctx.result is None:
            variables = ctx.variables if isinstance(ctx.variables, dict) else {}
            # the name the client sent: strawberry's operation_name falls back to the
            # document's first operation, which is how a two-operation document without
            # one ran its first
            name = getattr(ctx, "_provided_operation_name", None)
            op = _operation(document, name)
            exc: Exception | None = op if isinstance(op, Exception) else None
            if exc is None:
                exc = too_costly(
                    ctx.schema._schema, document, ctx.operation_name, variables, self.caps,
                    self.max_cost,
                )
            if exc is None:
                given = (raw_variables(op, variables) if isinstance(op, OperationDefinitionNode)
                         else variables)
                exc = invalid_argument(document, ctx.operation_name, given)
            if exc is not None:
                ctx.result = _refused(exc)
        yield

    def get_results(self) -> dict[str, Any]:
        found = getattr(self.execution_context.context, "resolutions", None)
        return {"resolved": resolved_json(found)} if found else {}


def citegraph_extension(settings: Settings) -> Callable[[], CitegraphExtension]:
    """The extension factory for a schema with ``settings``' limits; the parse and
    validation caches belong to that schema."""
    s = settings
    rules = (depth_rule(s.max_query_depth), alias_rule(s.max_aliases))
    caps = {
        "first": s.max_page_size, "ids": s.max_page_size,
        "limit": s.max_neighborhood_nodes, "k": s.max_paths,
        "maxHops": s.max_hops, "depth": s.max_depth, "where": MAX_VALUES,
    }
    parse_cached = lru_cache(maxsize=CACHE_SIZE)(parse)
    validate_cached = lru_cache(maxsize=CACHE_SIZE)(validate_document)

    def make() -> CitegraphExtension:
        return CitegraphExtension(
            rules, s.max_tokens, s.max_query_cost, caps, parse_cached, validate_cached
        )

    return make
