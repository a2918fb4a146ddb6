"""The checksum of saved tensors (``nbgrad.autograd.detect_mutation``),
declared once for every backend: each element's bits, mixed with its
position (so a swap of two elements changes the sum), hashed by SplitMix64's
finalizer and summed modulo 2**64 (so blocks can be summed in any order, in
parallel)."""
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def element_hash(bits, i):
    """The hash of an element's bits (as uint64) at flat position ``i``."""
    x = bits ^ (np.uint64(i) * _GOLDEN)
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}  # itemsize -> unsigned type
