"""How errors reach clients: citegraph's own errors with their message and a code,
everything else masked (and logged with its traceback here, never sent).

The store's own failures are citegraph errors, but their text is written for whoever
runs the server: a Neo4j error's element ids and index names, the Bolt host and port,
a database path. A client gets the code and a clean message
(:func:`client_message`); the server log gets the detail.
"""

from __future__ import annotations

import logging

from graphql import GraphQLError

from api.graphql.context import ForbiddenError
from api.graphql.limits import QueryTooCostlyError
from api.services import BusyError
from graph.errors import (
    CitegraphError,
    InvalidArgumentError,
    ModelUnavailableError,
    NotFoundError,
    QueryCancelledError,
    StoreError,
    StoreReplacedError,
    StoreUnavailableError,
    StoreWriteError,
    WriteLockTimeoutError,
)

log = logging.getLogger(__name__)

MASKED_MESSAGE = "Internal server error; the server log has the details."
#: what a client is told of a store error (the detail goes to the server log)
STORE_ERROR_MESSAGE = "the graph store failed to answer; the server log has the detail"
STORE_UNAVAILABLE_MESSAGE = (
    "graph store unavailable: the server cannot reach it now; try again shortly "
    "(the server log has the detail)"
)


def error_code(exc: BaseException | None) -> str | None:
    """A stable ``extensions.code`` for an error raised by a resolver."""
    codes: list[tuple[type[BaseException], str]] = [
        (InvalidArgumentError, "INVALID_ARGUMENT"),
        (NotFoundError, "NOT_FOUND"),
        (ForbiddenError, "FORBIDDEN"),
        (StoreReplacedError, "STORE_REPLACED"),
        (StoreUnavailableError, "STORE_UNAVAILABLE"),
        (WriteLockTimeoutError, "WRITE_BUSY"),
        (StoreWriteError, "STORE_WRITE_FAILED"),
        (ModelUnavailableError, "MODEL_UNAVAILABLE"),
        (QueryTooCostlyError, "QUERY_TOO_COSTLY"),
        (QueryCancelledError, "TIMEOUT"),
        (BusyError, "BUSY"),
        (StoreError, "STORE_ERROR"),
        (CitegraphError, "BAD_REQUEST"),
    ]
    for cls, code in codes:
        if isinstance(exc, cls):
            return code
    return None


def client_message(exc: CitegraphError) -> str:
    """What a client is told of ``exc``: its own text, except for the store's failures
    (a clean sentence; the detail is logged here, once)."""
    if isinstance(exc, StoreReplacedError | StoreWriteError | WriteLockTimeoutError):
        return str(exc)  # written for the client: what to do, nothing internal
    if isinstance(exc, StoreUnavailableError):
        log.info("answered STORE_UNAVAILABLE: %s", exc)
        return STORE_UNAVAILABLE_MESSAGE
    if isinstance(exc, StoreError):
        log.error("answered STORE_ERROR: %s", exc)
        return STORE_ERROR_MESSAGE
    return str(exc)


def should_mask(error: GraphQLError) -> bool:
    """Mask unexpected exceptions; keep GraphQL's own (validation) and citegraph's errors."""
    original = error.original_error
    return original is not None and not isinstance(original, CitegraphError | GraphQLError)


def is_client_error(error: GraphQLError) -> bool:
    """Errors meant for the client (bad query, unknown id): not worth a traceback here."""
    return error.original_error is None or isinstance(error.original_error, CitegraphError)


def client_error(error: GraphQLError) -> GraphQLError:
    """``error`` with its code (and ``argument``), or the masked error that replaces it.

    Every error of a result is rewritten so when the operation ends (by the extension in
    :mod:`api.graphql.extension`), as strawberry's ``MaskErrors`` does: after
    ``Schema.process_errors`` has logged the originals.
    """
    if should_mask(error):
        return GraphQLError(
            MASKED_MESSAGE, nodes=error.nodes, source=error.source,
            positions=error.positions, path=error.path,
            extensions={"code": "INTERNAL_SERVER_ERROR"},
        )
    original = error.original_error
    code = error_code(original)
    if code is None:
        if original is not None and error.path:
            return error  # GraphQL's own error from a resolver: left as graphql-core made it
        code = "GRAPHQL_VALIDATION_FAILED"  # a document or variable the schema refuses
    ext = dict(error.extensions or {})
    ext["code"] = code
    if isinstance(original, InvalidArgumentError):
        ext["argument"] = original.argument
    if isinstance(original, CitegraphError):
        message = client_message(original)
        if message != error.message:
            return GraphQLError(
                message, nodes=error.nodes, source=error.source, positions=error.positions,
                path=error.path, original_error=original, extensions=ext,
            )
    error.extensions = ext
    return error


def check_range(argument: str, value: int, low: int, high: int) -> int:
    """``value`` when low <= value <= high, else InvalidArgumentError naming ``argument``."""
    if value < low or value > high:
        raise InvalidArgumentError(argument, f"must be between {low} and {high} (got {value})")
    return value
