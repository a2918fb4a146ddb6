"""Checksums of arrays (``declarations.checksum``): one compiled pass, in
parallel over blocks for large C-contiguous arrays."""
import numba
import numpy as np

from ...declarations.checksum import BITS, element_hash

_hash = numba.njit(inline="always")(element_hash)


@numba.njit(parallel=True, cache=True)
def _contiguous(bits):
    n = bits.shape[0]
    blocks = (n + 65535) // 65536
    total = np.uint64(0)
    for b in numba.prange(blocks):
        acc = np.uint64(0)
        for i in range(b * 65536, min(n, (b + 1) * 65536)):
            acc += _hash(np.uint64(bits[i]), i)
        total += acc
    return total


@numba.njit(cache=True)
def _strided(bits):
    acc = np.uint64(0)
    i = 0
    for value in bits.flat:  # C order, whatever the layout
        acc += _hash(np.uint64(value), i)
        i += 1
    return acc


def checksum(a):
    """The checksum of ``a``'s elements (their bits, in C order)."""
    bits = a.view(BITS[a.itemsize]) if a.ndim else a.reshape(1).view(BITS[a.itemsize])
    if bits.flags.c_contiguous:
        return int(_contiguous(bits.reshape(-1)))
    return int(_strided(bits))
