"""Sensitivity check of the probe-16 harness (not a finding): run a scenario with one
piece of the new code broken by monkeypatching (nothing under graph/ is edited), and
expect failures. Usage: mutation_check.py MUTATION SCENARIO [args...]

  applied-noop     PaperColumns.applied does nothing (kept numbers go stale when the
                   commit moves the set in place)
  no-apply         the commit's DeltaSet.apply leaves the state's set as it was
  moved-no-minus   PaperColumns._moved forgets the papers a view takes away
  spellings-off    graph.build._stored_spellings returns the ids as given
  product-self     near_block given update_csls_pools' shared product does not set each
                   row's own column to -inf
"""
import sys

import graph.build as gb
import graph.link as gl
import graph.overlay as go

mutation = sys.argv.pop(1)
scenario = sys.argv.pop(1)

if mutation == "applied-noop":
    gl.PaperColumns.applied = lambda self, term, view: self._views.pop(term, None) and None
elif mutation == "no-apply":
    go.DeltaSet.apply = lambda self: self.base
elif mutation == "moved-no-minus":
    real = gl.PaperColumns._moved

    def moved(self, numbers, view):
        import numpy as np
        if view.plus:
            numbers = np.concatenate((numbers, self._numbers(view.plus, len(view.plus))))
        return numbers
    gl.PaperColumns._moved = moved
elif mutation == "spellings-off":
    gb._stored_spellings = lambda store, remove: remove
elif mutation == "product-self":
    real_nb = gl._Scorer.near_block

    def near_block(self, block, size, min_score, product=None):
        if product is None:
            return real_nb(self, block, size, min_score)
        # the shared product's rows used as they are: each row's own column not set to
        # -inf (a paper may be its own neighbour)
        return [self.near(r, product[bi], size, min_score) for bi, r in enumerate(block)]
    gl._Scorer.near_block = near_block
else:
    raise SystemExit(f"unknown mutation {mutation}")

import runpy  # noqa: E402
sys.argv[0] = scenario
runpy.run_path(scenario, run_name="__main__")
