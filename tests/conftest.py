"""Suite-wide settings.

Hypothesis profiles (choose with ``HYPOTHESIS_PROFILE``):

- ``default``: 25 examples per test, no per-example deadline (the first
  example of a new kernel specialisation waits for Numba to compile it) and
  derandomized, so every run draws the same examples. Each new combination of
  shape rank, layout, dtype and scalar positions is a new Numba
  specialisation (~0.3-1 s to compile, cached on disk afterwards); a fixed
  sequence of examples means a warm run compiles nothing, which keeps the
  suite fast on a two-core CI machine.
- ``explore``: random draws and 200 examples, for hunting bugs locally (the
  first run compiles many new kernel specialisations, so it is slow).
"""
import os
import sys

from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tests/helpers.py

_common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.differing_executors])
settings.register_profile("default", max_examples=25, derandomize=True, **_common)
settings.register_profile("explore", max_examples=200, derandomize=False, **_common)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
