"""Every generated CUDA kernel compiles to PTX for sm_90 (and a sample for sm_80), in an
ordinary (non-simulator) process and without a GPU: numba-cuda[cu13] brings
NVVM, and ``numba.cuda.compile_ptx`` needs no driver.

The kernels are ``cuda_catalog``'s (the manifest beside this file): for every op row and
both float dtypes, the forward kernel (strided all-array; the 1-D kernel with
scalar trailing arguments that in-place and ``x * 2`` style calls use, sampled)
and the fused backward kernel (the forward-mode jvp kernel, sampled); the
reductions (sum/max/min/argmax/argmin, both kernel shapes and the combining pass); the tiled matmul; copy, cast, fill,
atomic add, gather, scatter(-add) and the along-axis kernels. An in-place op
runs its row's forward kernel with ``out`` aliasing the first input, so it is
covered by the forward entries.

The compilations run in a pool of forked worker processes (the compiler is
CPU-bound Python holding a global lock), one per core up to four.
"""
import collections
import multiprocessing
import os

import pytest

import cuda_catalog as catalog


def _compile_ptx_works():
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return "the CUDA simulator is on (PTX needs the real compiler)"
    try:
        from numba import cuda
        from numba import types

        def probe(x):
            x[0] = 1.0

        ptx, _ = cuda.compile_ptx(probe, (types.float32[::1],), cc=(9, 0))
        return None if ".target sm_90" in ptx else "compile_ptx gave no sm_90 PTX"
    except Exception as error:  # numba-cuda or NVVM missing
        return f"numba.cuda cannot compile PTX here: {error}"


# A row's scalar math is compiled by its 2-D forward and backward entries; its jvp kernel
# (the backward's derivatives in another loop) and its forward kernel with scalar
# arguments (the forward's math in another loop) differ from those in their loop only,
# so every 4th of each is compiled (all of them took a quarter of the CI's PTX time).
SAMPLE_LOOPS = 4


def _sampled(entries):
    kept, seen = [], collections.Counter()
    for entry in entries:
        label = entry[0]
        family = "jvp" if " jvp " in label else "scalars" if label.endswith(" scalars") else None
        if family is not None:
            seen[family] += 1
            if (seen[family] - 1) % SAMPLE_LOOPS:
                continue
        kept.append(entry)
    return kept


REASON = _compile_ptx_works()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")
ENTRIES = _sampled(catalog.entries()) if REASON is None else []


def test_the_catalog_covers_every_row_and_kernel_family():
    from nbgrad.declarations.op_table import ROWS
    labels = [label for label, _, _ in ENTRIES]
    for row in ROWS:
        for dtype in ("float32", "float64"):
            assert f"{row.name} forward {dtype} 2-D" in labels
            if row.differentiable:
                assert f"{row.name} backward {dtype} 2-D" in labels
    for family in ("sum", "max", "min", "argmax", "argmin", "matmul", "copy", "gather",
                   "scatter-add", "take_along_axis", "put_along_axis"):
        assert any(label.startswith(family + " ") for label in labels), family
    for dtype in ("float32", "float64"):  # the sampled loops, in both dtypes
        assert any(f" jvp {dtype} " in label for label in labels)
        assert any(label.endswith(f" {dtype} scalars") for label in labels)
    assert len(ENTRIES) > 150


# sm_90 for every kernel; sm_80 for every 8th (the code is not architecture-
# specific, and compiling the ~650 kernels twice would double the CI time)
SAMPLE_80 = 8


def _ccs(index):
    return ((9, 0), (8, 0)) if index % SAMPLE_80 == 0 else ((9, 0),)


def _compile(index):
    """In a worker: PTX facts for one catalog entry, or the error text."""
    label, kernel, dtypes = ENTRIES[index]
    facts = []
    for cc in _ccs(index):
        try:
            ptx = kernel.ptx(dtypes, cc)
        except Exception as error:  # reported by the test for this entry
            return index, f"{type(error).__name__}: {error}"
        facts.append((f".target sm_{cc[0]}{cc[1]}" in ptx, ".entry" in ptx, len(ptx)))
    return index, facts


@pytest.fixture(scope="module")
def compiled():
    workers = min(4, os.cpu_count() or 1)
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            return dict(pool.imap_unordered(_compile, range(len(ENTRIES))))
    return dict(map(_compile, range(len(ENTRIES))))


@pytest.mark.parametrize("index", range(len(ENTRIES)),
                         ids=[label.replace(" ", "-") for label, _, _ in ENTRIES])
def test_kernel_compiles_to_ptx_for_sm90_and_sm80(compiled, index):
    facts = compiled[index]
    assert not isinstance(facts, str), f"{ENTRIES[index][0]}: {facts}"
    for cc, (has_target, has_entry, size) in zip(_ccs(index), facts):
        assert has_target, f"no .target sm_{cc[0]}{cc[1]} in the PTX"
        assert has_entry and size > 500  # a kernel, not only device functions
