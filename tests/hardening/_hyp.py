"""Hypothesis settings for the hardening suite (applied per test, never globally).

By default (and in CI) the examples are derandomized and bounded, so a run is
repeatable and quick; the long profile, ``CITEGRAPH_TEST_PROFILE=long`` (or the older
``HYPOTHESIS_PROFILE=fuzz``), draws ten times as many fresh random examples.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

from tests.support.profile import LONG as FUZZ

_BASE = settings(
    derandomize=not FUZZ,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def fuzz_settings(max_examples: int) -> settings:
    """Settings for one fuzz test: ``max_examples`` in CI, 10x under the fuzz profile."""
    return settings(_BASE, max_examples=max_examples * (10 if FUZZ else 1))
