"""Topics: communities of papers (Leiden), their labels (c-TF-IDF over concept mentions)
and paper importance (PageRank); :mod:`graph.topics.cluster` holds the algorithm as plain
functions, :mod:`graph.topics.update` reads a store's graph and writes them back."""

from graph.topics.cluster import TopicInputs, TopicResult, compute_topics
from graph.topics.update import TopicsUpdate, after_write, recompute, stored_topics

__all__ = [
    "TopicInputs",
    "TopicResult",
    "TopicsUpdate",
    "after_write",
    "compute_topics",
    "recompute",
    "stored_topics",
]
