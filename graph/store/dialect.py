"""The small per-server adapter: what differs between Neo4j 5 and ArcadeDB over Bolt.

Everything else (all queries in :mod:`graph.store.cypher`) is plain Neo4j 5 Cypher that
both servers run unchanged. The differences isolated here:

* Vector index DDL. Neo4j takes ``CREATE VECTOR INDEX``; ArcadeDB rejects it ("Only
  standard, RANGE and TEXT index types are supported") and needs SQL over its HTTP API:
  ``CREATE PROPERTY Paper.embedding ARRAY_OF_FLOATS`` then ``CREATE INDEX ON Paper
  (embedding) LSM_VECTOR METADATA {...}``. ArcadeDB names that index ``Paper[embedding]``,
  so the Neo4j index gets the same name and one ``db.index.vector.queryNodes`` call
  serves both servers.
* Server detection from the Bolt agent string (ArcadeDB says
  ``"Neo4j/5.26.0 compatible (ArcadeDB 26.10.2)"``).
"""

from __future__ import annotations

import base64
import json
import logging
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Protocol

import neo4j

from graph.errors import StoreError, StoreUnavailableError

log = logging.getLogger(__name__)

#: Name of the vector index on ``Paper.embedding`` (ArcadeDB's own naming scheme).
VECTOR_INDEX = "Paper[embedding]"
DEFAULT_ARCADEDB_HTTP_PORT = 2480


class Dialect(Protocol):
    """What a server needs done differently."""

    @property
    def name(self) -> str: ...

    def create_vector_index(self, driver: neo4j.Driver, database: str, dims: int) -> None:
        """Create the cosine vector index on ``Paper.embedding`` if it is missing."""


def _dims(dims: int) -> int:
    # The one number put into DDL text: checked to be a plain positive int.
    if isinstance(dims, bool) or not isinstance(dims, int) or not 1 <= dims <= 8192:
        raise StoreError(f"embedding dimension out of range: {dims!r}")
    return dims


@dataclass(frozen=True)
class Neo4jDialect:
    """Neo4j 5 (community, enterprise, Aura)."""

    name: str = "neo4j"

    def create_vector_index(self, driver: neo4j.Driver, database: str, dims: int) -> None:
        # Index options cannot be parameters in Neo4j 5 DDL; dims is a checked int.
        ddl = (
            f"CREATE VECTOR INDEX `{VECTOR_INDEX}` IF NOT EXISTS "
            f"FOR (n:Paper) ON (n.embedding) OPTIONS {{indexConfig: {{"
            f"`vector.dimensions`: {_dims(dims)}, `vector.similarity_function`: 'cosine'}}}}"
        )
        driver.execute_query(ddl, database_=database)


@dataclass(frozen=True)
class ArcadeDBDialect:
    """ArcadeDB with its Bolt plugin; DDL it lacks in Cypher goes over HTTP as SQL."""

    http_url: str
    user: str
    password: str
    name: str = "arcadedb"
    timeout_s: float = 30.0

    def sql(self, database: str, command: str) -> list[dict[str, Any]]:
        """Run one SQL command through ``POST /api/v1/command/{database}``."""
        url = f"{self.http_url.rstrip('/')}/api/v1/command/{urllib.parse.quote(database)}"
        if not url.startswith(("http://", "https://")):
            raise StoreError(f"ArcadeDB HTTP URL must be http(s): {self.http_url!r}")
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        request = urllib.request.Request(  # noqa: S310 - scheme checked above
            url,
            data=json.dumps({"language": "sql", "command": command}).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Basic {token}"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as resp:  # noqa: S310
                body = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:300]
            raise StoreError(f"ArcadeDB SQL failed ({exc.code}): {detail}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise StoreUnavailableError(
                f"ArcadeDB HTTP API at {self.http_url} unreachable: {exc}"
            ) from exc
        result = body.get("result", [])
        return list(result) if isinstance(result, list) else []

    def create_vector_index(self, driver: neo4j.Driver, database: str, dims: int) -> None:
        n = _dims(dims)
        self.sql(database, "CREATE PROPERTY Paper.embedding IF NOT EXISTS ARRAY_OF_FLOATS")
        self.sql(
            database,
            "CREATE INDEX IF NOT EXISTS ON Paper (embedding) LSM_VECTOR "
            f'METADATA {{"dimensions": {n}, "similarity": "COSINE"}}',
        )


def is_arcadedb(driver: neo4j.Driver) -> bool:
    """True when the Bolt server is ArcadeDB (from its agent string)."""
    agent = driver.get_server_info().agent or ""
    return "arcadedb" in agent.lower()


def detect_dialect(
    driver: neo4j.Driver,
    *,
    user: str | None = None,
    password: str | None = None,
    arcadedb_http: str | None = None,
) -> Dialect:
    """Pick the dialect for the server behind ``driver``.

    ``arcadedb_http`` is ArcadeDB's HTTP base URL; default: the Bolt host on port 2480.
    """
    if not is_arcadedb(driver):
        return Neo4jDialect()
    if arcadedb_http is None:
        address = driver.get_server_info().address
        arcadedb_http = f"http://{address.host}:{DEFAULT_ARCADEDB_HTTP_PORT}"
    log.info("ArcadeDB detected; schema DDL it lacks goes to %s", arcadedb_http)
    return ArcadeDBDialect(arcadedb_http, user or "root", password or "")
