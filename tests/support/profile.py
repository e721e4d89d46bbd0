"""The test profile: short by default (CI), long with ``CITEGRAPH_TEST_PROFILE=long``.

The short profile runs each fuzz test's bounded, derandomized examples and each soak test
(the same race or shutdown tried several times) once; the long one draws ten times the
fuzz examples and repeats the soak runs as often as the probe that found the bug did.
``HYPOTHESIS_PROFILE=fuzz`` is the long profile's older name.
"""

from __future__ import annotations

import os

LONG = (os.environ.get("CITEGRAPH_TEST_PROFILE") == "long"
        or os.environ.get("HYPOTHESIS_PROFILE") == "fuzz")


def repeats(long: int, short: int = 1) -> int:
    """How many times a soak test repeats its run: ``long`` in the long profile."""
    return long if LONG else short
