"""Every generated CUDA kernel compiles to PTX for sm_90 and sm_80, in an
ordinary (non-simulator) process and without a GPU: numba-cuda[cu13] brings
NVVM, and ``numba.cuda.compile_ptx`` needs no driver.

The kernels are ``nbgrad.backends.cuda.catalog``'s: for every op row and
both float dtypes, the forward kernel (strided all-array, and the 1-D kernel
with scalar trailing arguments that in-place and ``x * 2`` style calls use)
and the fused backward kernel; the reductions (sum/max/min/argmax/argmin, both
kernel shapes and the combining pass); the tiled matmul; copy, cast, fill,
atomic add, gather, scatter(-add) and the along-axis kernels. An in-place op
runs its row's forward kernel with ``out`` aliasing the first input, so it is
covered by the forward entries.

This takes ~30 s on two cores; ``pytest -n 2`` splits it.
"""
import os

import pytest

from nbgrad.backends.cuda import catalog


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


REASON = _compile_ptx_works()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")
ENTRIES = list(catalog.entries()) if REASON is None else []


def test_the_catalog_covers_every_row_and_kernel_family():
    from nbgrad.ops.table import ROWS
    labels = [label for label, _, _ in ENTRIES]
    for row in ROWS:
        for dtype in ("float32", "float64"):
            assert f"{row.name} forward {dtype} 2-D" in labels
            if row.differentiable:
                assert f"{row.name} backward {dtype} 2-D" in labels
    for family in ("sum", "max", "min", "argmax", "argmin", "matmul", "copy", "gather",
                   "scatter-add", "take_along_axis", "put_along_axis"):
        assert any(label.startswith(family + " ") for label in labels), family
    assert len(ENTRIES) > 150


@pytest.mark.parametrize("index", range(len(ENTRIES)),
                         ids=[label.replace(" ", "-") for label, _, _ in ENTRIES])
def test_kernel_compiles_to_ptx_for_sm90_and_sm80(index):
    label, kernel, dtypes = ENTRIES[index]
    for cc in ((9, 0), (8, 0)):
        ptx = kernel.ptx(dtypes, cc)
        assert f".target sm_{cc[0]}{cc[1]}" in ptx
        assert ".entry" in ptx  # a kernel, not only device functions
