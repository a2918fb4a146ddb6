"""nbgrad's performance suite.

- ``asv_bench/benchmarks/``: the airspeed-velocity suite (``asv run``; config in
  ``asv.conf.json`` at the repository root).
- ``python -m asv_bench.compare``: nbgrad, NumPy and PyTorch on the same work in
  one run, with effective bandwidth against the machine's measured triad.
- ``python -m asv_bench.bandwidth``: the measured copy/triad bandwidth alone.

This file must not import NumPy: ``compare`` may unset OpenBLAS variables
before NumPy is first imported.
"""
