"""Stores: the GraphStore protocol and its implementations; ``open_store`` picks one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graph.store.base import GraphStore

if TYPE_CHECKING:
    from graph.settings import Settings


def open_store(settings: Settings, *, one_shot: bool = False) -> GraphStore:
    """The store the settings name: the embedded database (default) or Neo4j over Bolt.

    ``one_shot``: the process answers a query or two and exits (the CLI), so the
    embedded store reads only what each query needs from the database instead of
    loading the whole graph into memory first.

    Raises StoreUnavailableError when a server store cannot be reached.
    """
    if settings.store == "neo4j":
        from graph.store.neo4j import open_driver, store_from_settings

        driver = open_driver(settings)
        try:
            return store_from_settings(settings, driver, owns_driver=True)
        except BaseException:
            driver.close()
            raise
    from graph.store.embedded import EmbeddedStore

    return EmbeddedStore(
        settings.graph_db,
        legacy_file=settings.legacy_graph_file,
        lock_timeout_s=settings.write_lock_timeout_s,
        reads="sql" if one_shot else "memory",
    )


__all__ = ["GraphStore", "open_store"]
