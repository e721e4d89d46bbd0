"""How errors reach clients: citegraph's own errors with their message and a code,
everything else masked (and logged with its traceback here, never sent)."""

from __future__ import annotations

import logging
from typing import Any

from graphql import GraphQLError
from strawberry.extensions import MaskErrors

from api.context import ForbiddenError
from api.limits import QueryTooCostlyError
from graph.errors import (
    CitegraphError,
    InvalidArgumentError,
    ModelUnavailableError,
    NotFoundError,
    StoreUnavailableError,
)

log = logging.getLogger(__name__)

MASKED_MESSAGE = "Internal server error; the server log has the details."


def error_code(exc: BaseException | None) -> str | None:
    """A stable ``extensions.code`` for an error raised by a resolver."""
    codes: list[tuple[type[BaseException], str]] = [
        (InvalidArgumentError, "INVALID_ARGUMENT"),
        (NotFoundError, "NOT_FOUND"),
        (ForbiddenError, "FORBIDDEN"),
        (StoreUnavailableError, "STORE_UNAVAILABLE"),
        (ModelUnavailableError, "MODEL_UNAVAILABLE"),
        (QueryTooCostlyError, "QUERY_TOO_COSTLY"),
        (CitegraphError, "BAD_REQUEST"),
    ]
    for cls, code in codes:
        if isinstance(exc, cls):
            return code
    return None


def should_mask(error: GraphQLError) -> bool:
    """Mask unexpected exceptions; keep GraphQL's own (validation) and citegraph's errors."""
    original = error.original_error
    return original is not None and not isinstance(original, CitegraphError | GraphQLError)


def is_client_error(error: GraphQLError) -> bool:
    """Errors meant for the client (bad query, unknown id): not worth a traceback here."""
    return error.original_error is None or isinstance(error.original_error, CitegraphError)


def masking_extension() -> MaskErrors:
    return MaskErrors(should_mask_error=should_mask, error_message=MASKED_MESSAGE)


def annotate(formatted: dict[str, Any], error: GraphQLError) -> dict[str, Any]:
    """Add ``extensions.code`` (and ``argument``) to one formatted error."""
    code = error_code(error.original_error)
    if code is None:
        if error.message == MASKED_MESSAGE:
            code = "INTERNAL_SERVER_ERROR"
        elif error.original_error is None or not error.path:
            # not from a resolver: a document or variable the schema refuses
            code = "GRAPHQL_VALIDATION_FAILED"
        else:
            return formatted
    ext = dict(formatted.get("extensions") or {})
    ext["code"] = code
    if isinstance(error.original_error, InvalidArgumentError):
        ext["argument"] = error.original_error.argument
    formatted["extensions"] = ext
    return formatted


def check_range(argument: str, value: int, low: int, high: int) -> int:
    """``value`` when low <= value <= high, else InvalidArgumentError naming ``argument``."""
    if value < low or value > high:
        raise InvalidArgumentError(argument, f"must be between {low} and {high} (got {value})")
    return value
