"""Every kind of kernel the CUDA backend generates, with concrete parameter
dtypes, so that each can be compiled to PTX on a machine without a GPU
(``numba.cuda.compile_ptx``) and checked to build for real architectures.

``entries(rows)`` yields ``(label, kernel, dtypes)``: for every row and both
float dtypes, the forward kernel (all-array arguments over a strided 2-D
iteration, and, for rows of two or more inputs, the 1-D kernel with scalar
trailing arguments that ``x * 2`` and in-place writes such as ``x.add_(1)``
use; an in-place op runs the forward kernel with ``out`` aliasing its first
input) and the fused backward kernel for all differentiable inputs; then the
reductions (every op, both kernel shapes, both passes), the tiled matmul and
the copy/fill/gather/scatter kernels.
"""
import numpy as np

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _row_dtypes(row, dtype, names):
    dtypes = {}
    for k, name in enumerate(names):
        dtypes[name] = np.dtype(np.bool_) if k in row.bool_inputs else dtype
    return dtypes


def row_entries(row, dtype):
    from .elementwise import backward_kernel, backward_reads, forward_kernel
    n = len(row.inputs)
    inputs = [f"x{k}" for k in range(n)]
    out_dtype = np.dtype(np.bool_) if row.result == "bool" else dtype
    dtypes = {"out": out_dtype, **_row_dtypes(row, dtype, inputs)}
    yield f"{row.name} forward {dtype.name} 2-D", forward_kernel(row, "a" * n, 2), dtypes
    if n > 1:
        yield (f"{row.name} forward {dtype.name} scalars", forward_kernel(row, "a" + "s" * (n - 1), 1),
               dtypes)
    if row.differentiable:
        wanted = tuple(row.differentiable)
        reads, _ = backward_reads(row, wanted)
        bdtypes = {"g": dtype, "out": dtype, **_row_dtypes(row, dtype, inputs)}
        yield (f"{row.name} backward {dtype.name} 2-D",
               backward_kernel(row, wanted, "a" * len(reads), 2), bdtypes)


def reduction_entries(dtype):
    from .reductions import _kernel
    for op in ("sum", "max", "min"):
        for mode in ("block", "thread"):
            yield (f"{op} {dtype.name} {mode}", _kernel(op, dtype, 1, 2, mode),
                   {"out": dtype, "x": dtype})
    for op in ("argmax", "argmin"):
        idx = np.dtype(np.int64)
        for mode in ("block", "thread"):
            yield (f"{op} {dtype.name} {mode}", _kernel(op, dtype, 1, 2, mode),
                   {"out": idx, "x": dtype})
        yield (f"{op} {dtype.name} combine", _kernel(op, dtype, 1, 1, "block", True),
               {"out": idx, "x": dtype})


def matmul_entries(dtype):
    from .gemm import _kernel
    yield f"matmul {dtype.name} batched", _kernel(dtype, 1), {"a": dtype, "b": dtype, "out": dtype}


def memory_entries(dtype):
    from . import memory
    idx = np.dtype(np.int64)
    yield f"copy {dtype.name}", memory._copy_kernel(2, False), {"dst": dtype, "src": dtype}
    yield (f"cast {dtype.name}->bool", memory._copy_kernel(2, True),
           {"dst": np.dtype(np.bool_), "src": dtype})
    yield f"fill {dtype.name}", memory._fill_kernel(2), {"dst": dtype}
    yield f"atomic add {dtype.name}", memory._atomic_add_kernel(2), {"dst": dtype, "src": dtype}
    yield f"gather {dtype.name}", memory._gather_kernel(), {"out": dtype, "addr": idx, "src": dtype}
    for kind in ("a", "s"):
        for accumulate in (False, True):
            yield (f"scatter{'-add' if accumulate else ''} {kind} {dtype.name}",
                   memory._scatter_kernel(kind, accumulate, 1),
                   {"dst": dtype, "addr": idx, "value": dtype})
    yield (f"take_along_axis {dtype.name}", memory._along_kernel(2, False),
           {"src": dtype, "idx": idx, "out": dtype})
    yield (f"put_along_axis {dtype.name}", memory._along_kernel(2, True),
           {"dst": dtype, "idx": idx, "val": dtype})


def entries(rows=None):
    if rows is None:
        from ...ops.table import ROWS as rows
    for dtype in FLOATS:
        for row in rows:
            yield from row_entries(row, dtype)
        yield from reduction_entries(dtype)
        yield from matmul_entries(dtype)
        yield from memory_entries(dtype)
