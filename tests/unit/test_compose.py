"""docker-compose.yml cannot run here (no Docker engine): check it agrees with the code.

The API service's environment must build a Settings that points at the neo4j service,
with the credentials that service is started with, on the ports it publishes.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

from graph.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
_VAR = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")


def _resolve(value: Any) -> str:
    """Compose's ${VAR:-default} with an empty environment: the default."""
    return _VAR.sub(lambda m: m.group(2) or "", str(value))


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: _resolve(v) for k, v in env.items()}


def _bindings(service: dict[str, Any]) -> dict[int, tuple[str, int]]:
    """container port -> (host address, host port); no address means every interface."""
    out = {}
    for p in service.get("ports", []):
        parts = str(p).split("#")[0].strip().split(":")
        address = parts[0] if len(parts) == 3 else "0.0.0.0"
        out[int(parts[-1])] = (address, int(parts[-2]))
    return out


def _published(service: dict[str, Any]) -> dict[int, int]:
    """container port -> host port."""
    return {c: port for c, (_, port) in _bindings(service).items()}


def test_services_and_image(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) >= {"neo4j", "api"}
    neo = services["neo4j"]
    assert re.fullmatch(r"neo4j:5[\w.\-]*", neo["image"]) and "enterprise" not in neo["image"]
    assert "test" in neo["healthcheck"]
    assert any(str(v).endswith(":/data") for v in neo["volumes"])
    assert set(compose["volumes"]) >= {str(v).split(":")[0] for v in neo["volumes"]}
    api = services["api"]
    assert api["build"] in (".", {"context": "."})
    assert (ROOT / "Dockerfile").is_file()
    assert api["depends_on"]["neo4j"]["condition"] == "service_healthy"


def test_api_environment_matches_settings(
    compose: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    services = compose["services"]
    env = _env(services["api"])
    # every variable is one Settings reads (NEO4J_* aliases or CITEGRAPH_<field>)
    known = {f"CITEGRAPH_{name.upper()}" for name in Settings.model_fields}
    known |= {"NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD", "NEO4J_DATABASE", "HF_HUB_OFFLINE"}
    assert set(env) <= known, set(env) - known
    # the container's environment, read the way the app reads it
    for name in list(os.environ):
        if name.startswith(("CITEGRAPH_", "NEO4J_")):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.store == "neo4j"
    uri = urlparse(settings.neo4j_uri)
    assert uri.scheme in {"bolt", "neo4j"} and uri.hostname == "neo4j"
    neo = services["neo4j"]
    assert uri.port in _published(neo) or uri.port == 7687
    user, password = _env(neo)["NEO4J_AUTH"].split("/", 1)
    assert settings.neo4j_user == user
    assert settings.neo4j_password.get_secret_value() == password
    assert settings.neo4j_database == "neo4j"  # the community edition's one database
    assert settings.host == "0.0.0.0"  # inside the container
    assert settings.port in _published(services["api"])
    assert 7687 in _published(neo)


def test_ports_bind_to_loopback_only(compose: dict[str, Any]) -> None:
    """Neo4j's Browser (7474), Bolt (7687) and the API are not on every interface."""
    services = compose["services"]
    neo = _bindings(services["neo4j"])
    assert set(neo) == {7474, 7687}
    for service in services.values():
        for container, (address, _) in _bindings(service).items():
            assert address == "127.0.0.1", (container, address)


def test_initial_password_rules_are_met_and_documented(compose: dict[str, Any]) -> None:
    """NEO4J_AUTH is neo4j/<password>: the default must be one Neo4j accepts (>= 8
    characters, no '/'), and the file must say it only sets the initial password."""
    user, password = _env(compose["services"]["neo4j"])["NEO4J_AUTH"].split("/", 1)
    assert user == "neo4j" and len(password) >= 8 and "/" not in password
    text = (ROOT / "docker-compose.yml").read_text()
    assert "*initial* password only" in text
    assert "at least\n# 8 characters, no '/'" in text
    hc = compose["services"]["neo4j"]["healthcheck"]
    assert "cypher-shell" in " ".join(hc["test"]) and hc["retries"] >= 1
