"""Matrix products on the device: a tiled shared-memory kernel.

Each block computes a TILE x TILE tile of the output: it walks the inner
dimension a tile at a time, every thread loading one element of A's and one of
B's tile into shared memory, then accumulating the tile product from there.
Operands are read through their strides, so transposed views (the backward
pass's ``swap_last``) need no copy; batch dimensions broadcast (stride 0) and
are unravelled per z-block. The grid loops (grid-stride) over row tiles and
batches, so any size fits the launch limits.
"""
import math

import numpy as np

from . import _runtime, codegen
from .array import DeviceArray, _prod, empty
from .codegen import coalesce, unravel
from .reductions import _NUMBA_NAME



def _kernel(dtype, nbatch):
    dtype = np.dtype(dtype)
    tile = _runtime.tile()

    def make():
        params = [("nbatch", "int", None), ("bshape", "tuple", nbatch), ("M", "int", None),
                  ("N", "int", None), ("K", "int", None),
                  ("a", "array", "a"), ("a_o", "int", None), ("a_b", "tuple", nbatch),
                  ("a_m", "int", None), ("a_k", "int", None),
                  ("b", "array", "b"), ("b_o", "int", None), ("b_b", "tuple", nbatch),
                  ("b_k", "int", None), ("b_n", "int", None),
                  ("out", "array", "out"), ("out_o", "int", None), ("out_b", "tuple", nbatch),
                  ("out_m", "int", None), ("out_n", "int", None), ("zero", "scalar", "out")]
        acc_type = _NUMBA_NAME[dtype.name]
        names = ", ".join(p for p, _, _ in params)
        lines = [
            f"@cuda.jit({codegen.jit_options()})",
            f"def kernel({names}):",
            f"    sa = cuda.shared.array(({tile}, {tile}), numba.{acc_type})",
            f"    sb = cuda.shared.array(({tile}, {tile}), numba.{acc_type})",
            "    tx = cuda.threadIdx.x",
            "    ty = cuda.threadIdx.y",
            f"    col = cuda.blockIdx.x * {tile} + tx",
            "    z = cuda.blockIdx.z",
            "    while z < nbatch:",
        ]
        lines += unravel(nbatch, "bshape", "z", [("ap", "a_o", "a_b"), ("bp", "b_o", "b_b"),
                                                  ("op", "out_o", "out_b")], 8)
        lines += [
            f"        row_tile = cuda.blockIdx.y * {tile}",
            "        while row_tile < M:",
            "            row = row_tile + ty",
            "            acc = zero",
            "            k0 = 0",
            "            while k0 < K:",
            "                k = k0 + tx",
            "                if row < M and k < K:",
            "                    sa[ty, tx] = a[ap + row * a_m + k * a_k]",
            "                else:",
            "                    sa[ty, tx] = zero",
            "                k = k0 + ty",
            "                if k < K and col < N:",
            "                    sb[ty, tx] = b[bp + k * b_k + col * b_n]",
            "                else:",
            "                    sb[ty, tx] = zero",
            "                cuda.syncthreads()",
            f"                for j in range({tile}):",
            "                    acc += sa[ty, j] * sb[j, tx]",
            "                cuda.syncthreads()",
            f"                k0 += {tile}",
            "            if row < M and col < N:",
            "                out[op + row * out_m + col * out_n] = acc",
            f"            row_tile += cuda.gridDim.y * {tile}",
            "        z += cuda.gridDim.z",
        ]
        source = "import numba\n\n\n" + "\n".join(lines) + "\n"
        name = f"matmul_{dtype.name}_{nbatch}"
        return codegen.Kernel(name, codegen.build(name, source).kernel, params)
    return codegen.cached(("matmul", dtype.name, nbatch, tile), make)


def _batch_strides(a, batch):
    """``a``'s batch strides broadcast to the batch shape ``batch``."""
    shape, strides = a.shape[:-2], a.estrides[:-2]
    lead = len(batch) - len(shape)
    return tuple([0] * lead + [0 if n == 1 and t != 1 else s
                               for n, s, t in zip(shape, strides, batch[lead:])])


def matmul(a, b):
    """``np.matmul`` for DeviceArrays (1-D operands as NumPy treats them)."""
    if not (isinstance(a, DeviceArray) and isinstance(b, DeviceArray)):
        raise TypeError("matmul: both operands must be DeviceArrays")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a_vector, b_vector = a.ndim == 1, b.ndim == 1
    if a_vector:
        a = a.reshape(1, -1)
    if b_vector:
        b = b.reshape(-1, 1)
    M, K = a.shape[-2:]
    K2, N = b.shape[-2:]
    if K != K2:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature (n?,k),(k,m?)->(n?,m?) (size {K2} is different from {K})")
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    dtype = np.result_type(a.dtype, b.dtype)
    if dtype == np.bool_:
        raise TypeError("matmul of bool arrays is not supported on the CUDA backend")
    a = a if a.dtype == dtype else a.astype(dtype)
    b = b if b.dtype == dtype else b.astype(dtype)
    out = empty(batch + (M, N), dtype)
    if out.size:
        _launch(a, b, out, batch, M, N, K)
    if b_vector:
        out = out.squeeze(-1)
    if a_vector:
        out = out.squeeze(-1 if b_vector else -2)
    return out


def _launch(a, b, out, batch, M, N, K):
    if K == 0:
        from .memory import fill
        fill(out, 0)
        return
    a_b, b_b = _batch_strides(a, batch), _batch_strides(b, batch)
    out_b = out.estrides[:-2]
    bshape, (a_b, b_b, out_b) = coalesce(batch, [a_b, b_b, out_b]) if batch else (
        (1,), [(0,), (0,), (0,)])
    nbatch = _prod(bshape)
    tile = _runtime.tile()
    limit = _runtime.max_grid_yz()
    grid = (math.ceil(N / tile), min(math.ceil(M / tile), limit), min(nbatch, limit))
    kernel = _kernel(out.dtype, len(bshape))
    kernel.launch(grid, (tile, tile), [
        nbatch, bshape, M, N, K,
        a._buf, a.offset, a_b, a.estrides[-2], a.estrides[-1],
        b._buf, b.offset, b_b, b.estrides[-2], b.estrides[-1],
        out._buf, out.offset, out_b, out.estrides[-2], out.estrides[-1], out.dtype.type(0)])
