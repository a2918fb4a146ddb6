"""The CUDA test manifest: every kind of kernel the CUDA backend generates, with concrete parameter
dtypes, so that each can be compiled to PTX on a machine without a GPU
(``numba.cuda.compile_ptx``) and checked to build for real architectures.

``entries(rows)`` yields ``(label, kernel, dtypes)``: for every row and both
float dtypes, the forward kernel (all-array arguments over a strided 2-D
iteration, and, for rows of two or more inputs, the 1-D kernel with scalar
trailing arguments that ``x * 2`` and in-place writes such as ``x.add_(1)``
use; an in-place op runs the forward kernel with ``out`` aliasing its first
input) and the fused backward kernel for all differentiable inputs; then the
reductions (every op, both kernel shapes, both passes), the tiled matmul and
the copy/fill/gather/scatter kernels; and a sample of the integer and bool
kernels (int64 arithmetic, bool comparisons, bool sums, casts, int64 matmul).
Each differentiable row also has its fused forward-mode kernel (value and
tangent in one pass). ``nbgrad.nn`` adds its own rows (GELU, binary cross
entropy with logits), the max-pooling step, and the optimizers their fused updates (SGD, Adam, RMSprop,
Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop: every ``UPDATES`` entry), generated
from the same declarations (``nbgrad.declarations.optimizer_updates``) as their
CPU versions.
"""
import numpy as np

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _row_dtypes(row, dtype, names):
    dtypes = {}
    for k, name in enumerate(names):
        dtypes[name] = np.dtype(np.bool_) if k in row.bool_inputs else dtype
    return dtypes


def _integral_only(row):
    """A row PyTorch computes on integers only (the bitwise ops): its check refuses floats."""
    import nbgrad
    try:
        row.check and row.check([nbgrad.float32] * len(row.inputs))
    except NotImplementedError:
        return True
    except Exception:  # noqa: BLE001 - another refusal: not about the dtype
        pass
    return False


def row_entries(row, dtype):
    from nbgrad.backends.cuda.elementwise import (backward_kernel, backward_reads, forward_kernel,
                                                  jvp_kernel)
    label = dtype
    if _integral_only(row):  # its int64 kernels, under each float label
        dtype = np.dtype(np.int64)
    n = len(row.inputs)
    inputs = [f"x{k}" for k in range(n)]
    out_dtype = np.dtype(np.bool_) if row.result == "bool" else dtype
    dtypes = {"out": out_dtype, **_row_dtypes(row, dtype, inputs)}
    yield f"{row.name} forward {label.name} 2-D", forward_kernel(row, "a" * n, 2), dtypes
    if n > 1:
        yield (f"{row.name} forward {label.name} scalars", forward_kernel(row, "a" + "s" * (n - 1), 1),
               dtypes)
    if row.differentiable:
        wanted = tuple(row.differentiable)
        reads, _ = backward_reads(row, wanted)
        bdtypes = {"g": dtype, "out": dtype, **_row_dtypes(row, dtype, inputs)}
        yield (f"{row.name} backward {dtype.name} 2-D",
               backward_kernel(row, wanted, "a" * len(reads), 2), bdtypes)
        if out_dtype.kind == "f":  # forward mode: value and tangent of every differentiable input
            jdtypes = {"out": dtype, **_row_dtypes(row, dtype, inputs)}
            yield (f"{row.name} jvp {dtype.name} 2-D", jvp_kernel(row, wanted, "a" * n, 2), jdtypes)


def reduction_entries(dtype):
    from nbgrad.backends.cuda.reductions import _kernel
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


def scan_entries(dtype):
    """Issue 15: cumsum/cumprod (both shapes, accumulating in float64/int64),
    cummax/cummin, median/mode along a dim, and the product reduction."""
    from nbgrad.backends.cuda import reductions, scans
    idx = np.dtype(np.int64)
    for acc in (np.dtype(np.float64),) + ((idx,) if dtype == FLOATS[0] else ()):  # int64 once
        value = dtype if acc.kind == "f" else idx
        for op in ("sum", "prod"):
            for mode in ("thread", "block"):
                yield (f"cum{op} {value.name} {mode}", scans._scan_kernel(op, acc, 1, mode),
                       {"x": value, "out": value, "acc": acc})
    for op in ("max", "min"):
        yield f"cum{op} {dtype.name}", scans._extremum_kernel(op, 1), {
            "x": dtype, "out": dtype, "idx": idx}
    for which in ("median", "mode"):
        yield f"{which} lines {dtype.name}", scans._select_kernel(which, 1), {
            "x": dtype, "out": dtype, "idx": idx}
    yield (f"prod {dtype.name} block", reductions._kernel("prod", dtype, 1, 2, "block"),
           {"out": dtype, "x": dtype})


def matmul_entries(dtype):
    from nbgrad.backends.cuda.gemm import _kernel
    yield f"matmul {dtype.name} batched", _kernel(dtype, 1), {"a": dtype, "b": dtype, "out": dtype}


def memory_entries(dtype):
    from nbgrad.backends.cuda import memory
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
    from nbgrad.backends.cuda import indexing  # issue 15: scatter_add along an axis (atomics)
    yield (f"scatter_add_along {dtype.name}", indexing._scatter_add_kernel(2),
           {"dst": dtype, "idx": idx, "val": dtype})


def sorting_entries(dtype):
    """Issue 15 on the device: the bitonic sort (lines in shared memory; long
    lines in scratch: fill, shared tiles, global passes, write-back), topk's
    selection rounds, the int64 scan, nonzero, unique, searchsorted and histc
    (shared and global bins)."""
    from nbgrad.backends.cuda import sorting
    idx = np.dtype(np.int64)
    t = sorting.TILE
    yield (f"sort rows {dtype.name}", sorting._rows_kernel(dtype, 2, t),
           {"x": dtype, "out": dtype, "idx": idx})
    yield f"sort scratch init {dtype.name}", sorting._scratch_init_kernel(2), {"x": dtype}
    yield (f"sort scratch tile {dtype.name}", sorting._scratch_tile_kernel(dtype, t),
           {"x": dtype})
    yield f"sort scratch step {dtype.name}", sorting._scratch_step_kernel(), {"x": dtype}
    yield (f"sort scratch write {dtype.name}", sorting._scratch_write_kernel(2),
           {"out": dtype, "idx": idx})
    yield f"topk tile select {dtype.name}", sorting._tile_select_kernel(dtype, t), {"x": dtype}
    yield f"nonzero flags {dtype.name}", sorting._nonzero_flags_kernel(2), {"x": dtype}
    yield f"unique flags {dtype.name}", sorting._unique_flags_kernel(), {"v": dtype}
    yield f"unique scatter {dtype.name}", sorting._unique_scatter_kernel(), {"v": dtype}
    yield f"searchsorted {dtype.name}", sorting._searchsorted_kernel(), {"bd": dtype}
    for shared in (0, sorting.HIST_BINS):
        yield f"histc {dtype.name} shared={shared}", sorting._histc_kernel(2, dtype, shared), {
            "x": dtype}


def sorting_index_entries():
    """The dtype-free kernels of sorting.py, and sorts of integer and byte keys."""
    from nbgrad.backends.cuda import sorting
    threads = sorting.SCAN_THREADS
    yield "scan block sums int64", sorting._block_sums_kernel(threads), {}
    yield "scan blocks int64", sorting._block_scan_kernel(threads), {}
    yield "nonzero write 3-D", sorting._nonzero_write_kernel(3), {}
    yield "unique counts", sorting._unique_counts_kernel(), {}
    for name in ("int64", "int32", "uint8"):
        dtype = np.dtype(name)
        yield (f"sort rows {name}", sorting._rows_kernel(dtype, 1, sorting.TILE),
               {"x": dtype, "out": dtype, "idx": np.dtype(np.int64)})
    yield "nonzero flags bool", sorting._nonzero_flags_kernel(1), {"x": np.dtype(np.bool_)}
    half = np.dtype(np.float16)  # (unique and searches compare float16 itself; sorts widen it)
    yield "nonzero flags float16", sorting._nonzero_flags_kernel(1), {"x": half}
    yield "unique flags float16", sorting._unique_flags_kernel(), {"v": half}
    yield "searchsorted float16", sorting._searchsorted_kernel(), {"bd": half}


def checksum_entries():
    from nbgrad.backends.cuda import checksums
    for bits in (np.uint8, np.uint32, np.uint64):  # bool, float32, float64 saved tensors
        yield (f"checksum {np.dtype(bits).name}", checksums.kernel(),
               {"bits": np.dtype(bits), "out": np.dtype(np.uint64)})


def nn_entries(dtype):
    """The rows ``nbgrad.nn`` declares and its max-pooling step kernel."""
    from nbgrad.declarations import nn_table as _rows
    from nbgrad.backends.cuda.pooling import step_kernel
    for row in (_rows.gelu, _rows.gelu_tanh, _rows.binary_cross_entropy_with_logits):
        yield from row_entries(row, dtype)
    idx = np.dtype(np.int64)
    yield (f"max_pool_step {dtype.name}", step_kernel(2, False), {"best": dtype, "value": dtype})
    yield (f"max_pool_step with indices {dtype.name}", step_kernel(2, True),
           {"best": dtype, "value": dtype, "argmax": idx})


def optim_entries(dtype):
    """The fused optimizer updates (one kernel per parameter and step)."""
    from nbgrad.backends.cuda.updates import kernel
    from nbgrad.declarations.optimizer_updates import UPDATES
    for update in UPDATES:
        yield (f"optim {update.name} {dtype.name}", kernel(update),
               {"param": dtype, "flag": np.dtype(np.bool_)})


def integer_and_bool_entries():
    """A sample of the kernels integer and bool tensors run."""
    from nbgrad.backends.cuda import gemm, memory, reductions
    from nbgrad.backends.cuda.elementwise import forward_kernel
    from nbgrad.declarations.op_table import BY_NAME
    i64, b, f32 = np.dtype(np.int64), np.dtype(np.bool_), np.dtype(np.float32)
    yield "add forward int64 2-D", forward_kernel(BY_NAME["add"], "aa", 2), {
        "out": i64, "x0": i64, "x1": i64}
    yield "where forward int64 scalars", forward_kernel(BY_NAME["where"], "aas", 1), {
        "out": i64, "x0": b, "x1": i64, "x2": i64}
    yield "lt forward bool 1-D", forward_kernel(BY_NAME["lt"], "aa", 1), {
        "out": b, "x0": b, "x1": b}
    yield "sum bool->int64 block", reductions._kernel("sum", i64, 1, 1, "block"), {"out": i64, "x": b}
    yield "max int64 thread", reductions._kernel("max", i64, 1, 1, "thread"), {"out": i64, "x": i64}
    yield "argmax int64 block", reductions._kernel("argmax", i64, 1, 1, "block"), {"out": i64, "x": i64}
    yield "cast bool->float32", memory._copy_kernel(1, False), {"dst": f32, "src": b}
    yield "cast int64->bool", memory._copy_kernel(1, True), {"dst": b, "src": i64}
    yield "atomic add int64", memory._atomic_add_kernel(1), {"dst": i64, "src": i64}
    yield "matmul int64 batched", gemm._kernel(i64, 1), {"a": i64, "b": i64, "out": i64}


def entries(rows=None):
    if rows is None:
        from nbgrad.declarations.op_table import ROWS as rows
    for dtype in FLOATS:
        for row in rows:
            yield from row_entries(row, dtype)
        yield from reduction_entries(dtype)
        yield from scan_entries(dtype)
        yield from matmul_entries(dtype)
        yield from memory_entries(dtype)
        yield from nn_entries(dtype)
        yield from optim_entries(dtype)
        yield from sorting_entries(dtype)
    yield from sorting_index_entries()
    yield from integer_and_bool_entries()
    yield from checksum_entries()
