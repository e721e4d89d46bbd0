"""ShortNames, the cheap "no paper has this short name" of graph.lookup, against the
keyword-search answer it stands in for: same matches with and without it, before and
after the graph changes, on a real in-memory store."""

from __future__ import annotations

import pytest

from graph import lookup
from graph.model import Concept, GraphChange, Paper
from graph.store.memory import NetworkxStore


def _paper(pid: str, label: str) -> Paper:
    return Paper(pid, label, f"{label}. An abstract about {label.lower()}.", f"h-{pid}")


@pytest.fixture
def store() -> NetworkxStore:
    s = NetworkxStore()
    s.apply(GraphChange(upsert_nodes=(
        _paper("p1", "LocoVR: Multiuser Indoor Locomotion Dataset in Virtual Reality"),
        _paper("p2", "PaRa: Personalizing Text-to-Image Diffusion via Parameter Rank Reduction"),
        _paper("p3", "A: B: two colons in one label"),
        _paper("p4", "Diffusion models without a short name"),
        Concept("concept:para", "PaRa"),
        Concept("concept:diffusion model", "diffusion model"),
    )))
    return s


NAMES = ["LocoVR", "locovr", "  LocoVR ", "PaRa", "A", "A: B", "a: b", "diffusion model",
         "Diffusion models without a short name", "nothing at all", "B", "p1", ":"]


def test_same_matches_as_the_keyword_search(store: NetworkxStore) -> None:
    short = lookup.ShortNames()
    for name in NAMES:
        plain = [n.id for n in lookup.matches(store, name)]
        fast = [n.id for n in lookup.matches(store, name, short_names=short)]
        assert fast == plain, name
        assert lookup.find(store, name, short_names=short) == lookup.find(store, name), name


def test_short_names_found(store: NetworkxStore) -> None:
    short = lookup.ShortNames()
    assert [n.id for n in lookup.matches(store, "LocoVR", short_names=short)] == ["p1"]
    # a concept and a paper of one short name: the concept first, the paper offered
    assert [n.id for n in lookup.matches(store, "PaRa", short_names=short)] == [
        "concept:para", "p2"]
    assert [n.id for n in lookup.matches(store, "a: b", short_names=short)] == ["p3"]
    assert short.may_name(store, "a:") and short.may_name(store, "a: b:")
    assert not short.may_name(store, "diffusion model:")


def test_follows_the_graph_as_it_changes(store: NetworkxStore) -> None:
    short = lookup.ShortNames()
    assert lookup.matches(store, "NewNet", short_names=short) == []
    store.apply(GraphChange(upsert_nodes=(_paper("p5", "NewNet: a paper added later"),)))
    assert [n.id for n in lookup.matches(store, "NewNet", short_names=short)] == ["p5"]
    store.apply(GraphChange(delete_nodes=("p1",)))
    assert lookup.matches(store, "LocoVR", short_names=short) == []
    assert lookup.matches(store, "LocoVR") == []


class _Unversioned(NetworkxStore):
    """A store that cannot say when it changed (as Neo4j written by others)."""

    def version(self) -> str:  # type: ignore[override]
        return None  # type: ignore[return-value]


def test_unversioned_store_always_asks() -> None:
    s = _Unversioned()
    short = lookup.ShortNames()
    assert short.may_name(s, "anything:")
    s.apply(GraphChange(upsert_nodes=(_paper("p1", "LocoVR: a dataset"),)))
    assert [n.id for n in lookup.matches(s, "LocoVR", short_names=short)] == ["p1"]
