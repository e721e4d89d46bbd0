"""Stores: the GraphStore protocol and its implementations; ``open_store`` picks one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graph.store.base import GraphStore

if TYPE_CHECKING:
    from graph.settings import Settings


def open_store(settings: Settings) -> GraphStore:
    """The store the settings name: the embedded file (default) or Neo4j over Bolt.

    Raises StoreUnavailableError when a server store cannot be reached.
    """
    if settings.store == "neo4j":
        from graph.store.neo4j import Neo4jStore, open_driver

        driver = open_driver(settings)
        return Neo4jStore(
            driver, settings.neo4j_database, batch_size=settings.neo4j_batch_size, owns_driver=True
        )
    from graph.store.memory import NetworkxStore

    return NetworkxStore(settings.graph_file)


__all__ = ["GraphStore", "open_store"]
