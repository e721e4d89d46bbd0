"""Relay connections from strawberry, filled from one page of the store.

strawberry.relay types its connections for ``relay.Node`` items; ours are not (see
:class:`Connection`), so mypy's bound check is off in this module only.
"""

# mypy: disable-error-code="untyped-decorator,type-var"

from __future__ import annotations

from typing import Generic, TypeVar

import strawberry
from strawberry import relay

from api.ids import encode_cursor

#: named as strawberry.relay's own type variable, which its generic fields are keyed by
NodeType = TypeVar("NodeType")


@strawberry.type(description="A Relay connection; cursors are opaque offsets.")
class Connection(relay.Connection[NodeType], Generic[NodeType]):
    """strawberry's Relay connection, plus the total; built from one page of the store.

    Its items are not ``relay.Node`` types: their global ids keep this API's own codec
    (:mod:`api.ids`: raw ids accepted wherever an id is, and ids stored before text
    was checked still encode), which ``relay.GlobalID`` does not offer.
    """

    total_count: int


def connection(items: list[NodeType], offset: int, total: int) -> Connection[NodeType]:
    """The page ``items`` starting at ``offset`` of ``total``, with offset cursors."""
    edges = [
        relay.Edge(cursor=encode_cursor(offset + i + 1), node=n) for i, n in enumerate(items)
    ]
    return Connection(
        edges=edges,
        page_info=relay.PageInfo(
            has_next_page=offset + len(items) < total,
            has_previous_page=offset > 0,
            start_cursor=edges[0].cursor if edges else None,
            end_cursor=edges[-1].cursor if edges else None,
        ),
        total_count=total,
    )
