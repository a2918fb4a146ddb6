"""The asv suite. Kernels are compiled in ``setup``, so timings exclude compilation
(``bench_compile`` tracks compilation itself)."""
