"""Entry points: the citegraph command (the composition root)."""
