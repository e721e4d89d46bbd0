"""citegraph: a knowledge graph of papers, concepts and datasets built from abstracts."""

__version__ = "0.1.0"
