"""The input boundary through the API: ``addPapers`` with issue 15's hostile records.

A real app (TestClient, real model, an embedded store in a temporary folder) is sent
records whose id is in the concept or dataset namespace or is a global id, whose
fields hold a lone surrogate, and whose title and abstract hold every control
character. The oracles: each bad record is one problem naming its input index and
field, and nothing of it is stored; every good one is stored, can be looked up by the
id it was sent with, survives a reload of the graph file, and every export parses.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.ids import to_global_id
from graph.model import NodeKind, Paper
from graph.settings import Settings
from graph.store.embedded import EmbeddedStore

pytestmark = pytest.mark.slow

KEY = "input-key-2b7d"
ADD = "mutation($in: [PaperInput!]!) { addPapers(input: $in) { added problems } }"
ABSTRACT = (
    "We study retrieval-augmented generation with large language models and show that "
    "rerankers improve answer accuracy on open-domain question answering benchmarks."
)
CONTROLS = "".join(chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)] if chr(c) not in "\t\n\r")


def post(client: TestClient, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    # ASCII JSON, so that a lone surrogate travels as the escape "\udfff" (as a client's may)
    body = json.dumps({"query": query, "variables": variables})
    r = client.post("/graphql", content=body.encode("ascii"),
                    headers={"content-type": "application/json", "X-API-Key": KEY})
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def test_add_papers_refuses_reserved_ids_and_surrogates_and_strips_controls(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path / "data", api_key=KEY,  # type: ignore[arg-type,call-arg]
                        request_timeout_s=120.0)
    store = EmbeddedStore(settings.graph_db)
    bad = [
        {"id": "concept:large-language-model", "abstract": ABSTRACT + " One."},
        {"id": "Dataset:locovr", "abstract": ABSTRACT + " Two."},
        {"id": to_global_id(NodeKind.PAPER, "p-x"), "abstract": ABSTRACT + " Three."},
        {"id": "bad\udfff", "abstract": ABSTRACT + " Four."},
        {"id": "s-authors", "authors": ["A\udfff"], "abstract": ABSTRACT + " Five."},
        {"id": "s-venue", "venue": "\ud800", "abstract": ABSTRACT + " Six."},
        {"id": "s-url", "url": "https://x.org/\udfff", "abstract": ABSTRACT + " Seven."},
        {"id": "s-kw", "keywords": ["\udfff"], "abstract": ABSTRACT + " Eight."},
        {"id": "s-refs", "references": ["\udfff"], "abstract": ABSTRACT + " Nine."},
        {"id": "nul\x00id", "abstract": ABSTRACT + " Ten."},
    ]
    fields = ["id", "id", "id", "id", "authors", "venue", "url", "keywords", "references", "id"]
    good = [
        {"id": "good-1", "title": "Rerankers for RAG", "abstract": ABSTRACT},
        {"id": "ctl-1", "title": f"Controls{CONTROLS}everywhere",
         "abstract": f"Diffusion{CONTROLS} models can be personalised with very few images.",
         "venue": f"ICLR{CONTROLS}2025", "authors": [f"Ada{CONTROLS}Lovelace"]},
    ]
    app = create_app(settings, opener=lambda _s: store)
    with TestClient(app) as c:
        body = post(c, ADD, {"in": [*bad, *good]})
        assert "errors" not in body, body
        report = body["data"]["addPapers"]
        assert sorted(report["added"]) == ["ctl-1", "good-1"]
        problems = report["problems"]
        assert len(problems) == len(bad), problems
        for i, (field, problem) in enumerate(zip(fields, problems, strict=True)):
            assert problem.startswith(f"input[{i}]: field '{field}': "), problem
        found = post(c, '{ paper(id: "ctl-1") { key title venue } }', {})["data"]["paper"]
        assert found == {"key": "ctl-1", "title": "Controls everywhere", "venue": "ICLR 2025"}
        for fmt in ("graphml", "gexf"):
            r = c.get(f"/export/{fmt}")
            assert r.status_code == 200, r.text[:500]
            ET.fromstring(r.content)
        r = c.get("/export/cytoscape.json")
        assert r.status_code == 200 and json.loads(r.content)
        # a later write still saves (issue 15: one bad id once stopped all saving)
        again = post(c, ADD, {"in": [{"id": "good-2", "abstract": ABSTRACT + " Later."}]})
        assert again["data"]["addPapers"]["added"] == ["good-2"]
    again_store = EmbeddedStore(settings.graph_db)  # a fresh open reads what was saved
    try:
        reloaded = again_store.snapshot().nodes
    finally:
        again_store.close()
    papers = sorted(k for k, n in reloaded.items() if isinstance(n, Paper))
    assert papers == ["ctl-1", "good-1", "good-2"]
