"""Checksums of device arrays (``declarations.checksum``): one grid-stride
pass on the device, per-thread sums added atomically; only the sum comes back."""
import numpy as np

from ...declarations.checksum import BITS, element_hash
from . import _runtime, codegen, memory

_SOURCE = '''
@cuda.jit
def checksum(bits, n, out):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    acc = np.uint64(0)
    while i < n:
        acc += element_hash(np.uint64(bits[i]), i)
        i += step
    cuda.atomic.add(out, 0, acc)
'''


def kernel():
    """The checksum kernel: ``(bits, n, out)``, ``bits`` a 1-D unsigned view."""
    return codegen.cached("checksum", lambda: codegen.Kernel("checksum", codegen.build(
        "checksum", "import numpy as np\n" + _SOURCE, {"element_hash": element_hash}).checksum,
        [("bits", "array", "bits"), ("n", "int", None), ("out", "array", "out")]))


def checksum(a):
    """The checksum of ``a``'s elements (their bits, in C order)."""
    a = a if a.flags.c_contiguous else memory.copy(a)
    n = a.size
    cuda = _runtime.cuda()
    out = cuda.to_device(np.zeros(1, np.uint64))
    if n:
        flat = a._buf[a.offset:a.offset + n].view(BITS[a.itemsize])
        kernel().grid_stride(n, (flat, n, out))
    return int(out.copy_to_host()[0])
