"""Which bytes of memory an array covers, and whether two arrays share one:
the test behind region-aware version checks.

A region is what a strided array addresses: ``(address, shape, strides,
itemsize)``, strides in bytes, on any device (only the numbers are used,
never the memory). Whether two regions share a byte is an integer problem
(a bounded linear Diophantine equation) that NumPy's ``shares_memory``
solves exactly; for views of one tensor (slices, steps, transposes,
selections, diagonals) it answers in a few operations. Its work is bounded
here: a problem that needs more (strides that interleave in ways views of
one tensor do not, ``as_strided`` layouts) counts as an overlap, so a check
built on this may raise where PyTorch's per-storage check raises, and never
misses a write.
"""
import numpy as np

MAX_WORK = 100_000  # NumPy's unit of work: candidate solutions examined


class _Header:
    """An array header over ``region``'s numbers (its memory is never read)."""

    __slots__ = ("__array_interface__",)

    def __init__(self, region):
        address, shape, strides, itemsize = region
        self.__array_interface__ = {"data": (address, True), "shape": shape, "strides": strides,
                                    "typestr": f"|V{itemsize}", "version": 3}


def region(backend, a):
    """The region ``a`` (an array of ``backend``) addresses."""
    return backend.data_pointer(a), tuple(a.shape), tuple(a.strides), a.itemsize


def overlaps(a, b):
    """Whether regions ``a`` and ``b`` share a byte of some element (True
    also where deciding it would take more than ``MAX_WORK``)."""
    try:
        return bool(np.shares_memory(np.asarray(_Header(a)), np.asarray(_Header(b)),
                                     max_work=MAX_WORK))
    except np.exceptions.TooHardError:
        return True
