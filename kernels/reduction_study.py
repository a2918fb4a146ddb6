"""Reductions and scans side by side: nbgrad vs NumPy vs PyTorch (eager,
CPU), in one run, forward and forward + backward, at a training step's size
(64 x 128, along dim -1 and dim 0), on 1000 x 10000 (dim -1) and on one line
of 1e7 elements.

    python -m kernels.reduction_study [--threads 2] [--rounds 7] [--dtype float32]
                                      [--ops cumsum,prod] [--sizes 64x128:-1,1e7]

Prints ms per call (median of rounds taken round-robin) and PyTorch's time
over nbgrad's (above 1: nbgrad is faster); values and gradients are checked
against PyTorch's before they are timed. The harness is
``kernels.indexing_study``'s (``python -m kernels.indexing_study
--reductions`` runs both tables in one command).
"""
import numpy as np

from . import indexing_study as study
from .indexing_study import Op


def near_one(shape, d, dtype):
    # values near 1, so that long products stay finite
    return (np.random.default_rng(0).uniform(0.999, 1.001, shape).astype(dtype),)


def _np_logsumexp(x, d):
    top = np.max(x, d, keepdims=True)
    return np.log(np.sum(np.exp(x - top), d)) + np.squeeze(top, d)


def _np_median(x, d):  # the lower median, as PyTorch's
    k = (x.shape[d] - 1) // 2
    return np.take(np.partition(x, k, d), k, d)


OPS = {
    "cumsum": Op(lambda L, x, d: L.cumsum(x, d), lambda x, d: np.cumsum(x, d), near_one),
    "cumprod": Op(lambda L, x, d: L.cumprod(x, d), lambda x, d: np.cumprod(x, d), near_one),
    "prod": Op(lambda L, x, d: L.prod(x, d), lambda x, d: np.prod(x, d), near_one),
    "logsumexp": Op(lambda L, x, d: L.logsumexp(x, d), _np_logsumexp, near_one),
    "var": Op(lambda L, x, d: L.var(x, d), lambda x, d: np.var(x, d, ddof=1), near_one),
    "std": Op(lambda L, x, d: L.std(x, d), lambda x, d: np.std(x, d, ddof=1), near_one),
    "median": Op(lambda L, x, d: L.median(x, d).values, _np_median, near_one, exact=True),
    "argmax": Op(lambda L, x, d: L.argmax(x, d), lambda x, d: np.argmax(x, d), near_one,
                 grad=False, exact=True),
}


def main(argv=None):
    args = study.parser(__doc__).parse_args(argv)
    ops, sizes = study.start(args, OPS)
    study.print_header()
    study.run(ops, sizes, args.dtype, args.rounds)


if __name__ == "__main__":
    main()
