"""Probe 14, B: in a fresh process that never imported torch, halfdot.usable() is False
and importing the CLI, graph.link, the store and running full_similar pulls no torch."""
import sys
import numpy as np
import citegraph.cli  # noqa: F401
from graph import halfdot
from graph.link import PaperVectors, full_similar
import graph.store.embedded  # noqa: F401
print("torch after imports:", "torch" in sys.modules)
print("usable:", halfdot.usable())
m = np.random.default_rng(0).normal(size=(50, 8)).astype(np.float32)
m /= np.linalg.norm(m, axis=1, keepdims=True)
halfdot.MIN_CELLS = 0
full_similar(PaperVectors([f"p{i}" for i in range(50)], m, pool=5), 3, 0.3)
print("torch after full_similar with MIN_CELLS=0:", "torch" in sys.modules, "usable:", halfdot.usable())
