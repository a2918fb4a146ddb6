"""Sorting and selection along an axis: compiled loops, one row at a time
(rows in parallel on large inputs).

Each element becomes an integer key whose unsigned order is the order
wanted: a float's bits with the sign folded (so -0. and 0. tie, and every
NaN, made one canonical NaN, sorts after +inf, as in PyTorch), an integer
offset by its sign bit; for a descending order the key's bits are inverted,
so ties keep their original order either way. Rows are sorted by a stable
LSD radix sort on the keys (a pass per byte, skipping bytes every key
shares; merge sort for short rows), so ``sort`` is stable whatever is
asked, and equal keys keep their positions. A short row of keys of 32 bits
or fewer is sorted by NumPy's (vectorized) sort instead, on 64-bit words
that hold the key above the element's position: the words are distinct, so
the order is stable, and 5x the merge sort's speed on 64 x 128. ``topk``
keeps a heap of the k best (ties: the lower index is better), then orders it.
"""
import numpy as np

from ..kernel_source import lazy_module
from .elementwise import PARALLEL_THRESHOLD

# The key kinds: how an element's bits become an unsigned-order key (and how
# many bytes of it a radix sort walks).
FLOAT64, FLOAT32, INT64, INT32, BYTE = range(5)
_BYTES = {FLOAT64: 8, FLOAT32: 4, INT64: 8, INT32: 4, BYTE: 1}
# Rows up to this length with keys of up to 4 bytes are sorted as packed
# (key, position) words by np.sort; longer ones by the radix sort, which is
# linear and runs rows in parallel (3x np.sort's speed on one row of 16384).
PACKED_ROW_MAX = 1024

_HELPERS = '''
import numba
import numpy as np
from numba import prange

SIGN = np.int64(-9223372036854775808)


@numba.njit(cache=True, nogil=True, inline="always")
def key_of(b, kind, invert):
    """The unsigned-order key (held in an int64) of one element's bits ``b``."""
    if kind == 0:  # float64 bits
        if (b & 0x7FFFFFFFFFFFFFFF) > 0x7FF0000000000000:
            b = np.int64(0x7FF8000000000000)
        elif b == SIGN:
            b = np.int64(0)
        k = ~b if b < 0 else b ^ SIGN
    elif kind == 1:  # float32 bits (as uint32 widened)
        b = b & 0xFFFFFFFF
        if (b & 0x7FFFFFFF) > 0x7F800000:
            b = np.int64(0x7FC00000)
        elif b == 0x80000000:
            b = np.int64(0)
        k = (~b) & 0xFFFFFFFF if b & 0x80000000 else b | 0x80000000
    elif kind == 2:  # int64
        k = b ^ SIGN
    elif kind == 3:  # int32 (widened)
        k = b + 2147483648
    else:  # bool, uint8
        k = b
    if invert:
        if kind == 0 or kind == 2:
            k = ~k
        elif kind == 4:
            k = 255 - k
        else:
            k = (~k) & 0xFFFFFFFF
    return k


@numba.njit(cache=True, nogil=True, inline="always")
def before(ka, ia, kb, ib):
    """Key a sorts before key b (unsigned order), ties by position."""
    ua = ka ^ SIGN
    ub = kb ^ SIGN
    return ua < ub or (ua == ub and ia < ib)


@numba.njit(cache=True, nogil=True)
def merge_sort_keys(keys, idx, tk, ti):
    """Stable sort of a short row: insertion-sorted runs of 16, merged pairwise."""
    n = keys.shape[0]
    for s in range(0, n, 16):
        e = min(s + 16, n)
        for i in range(s + 1, e):
            k = keys[i]
            j = idx[i]
            u = k ^ SIGN
            p = i - 1
            while p >= s and (keys[p] ^ SIGN) > u:
                keys[p + 1] = keys[p]
                idx[p + 1] = idx[p]
                p -= 1
            keys[p + 1] = k
            idx[p + 1] = j
    src_k, src_i, dst_k, dst_i = keys, idx, tk, ti
    moved = False
    width = 16
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a = lo
            b = mid
            o = lo
            while a < mid and b < hi:
                if (src_k[b] ^ SIGN) < (src_k[a] ^ SIGN):  # (ties: the left run's first)
                    dst_k[o] = src_k[b]
                    dst_i[o] = src_i[b]
                    b += 1
                else:
                    dst_k[o] = src_k[a]
                    dst_i[o] = src_i[a]
                    a += 1
                o += 1
            while a < mid:
                dst_k[o] = src_k[a]
                dst_i[o] = src_i[a]
                a += 1
                o += 1
            while b < hi:
                dst_k[o] = src_k[b]
                dst_i[o] = src_i[b]
                b += 1
                o += 1
        src_k, dst_k = dst_k, src_k
        src_i, dst_i = dst_i, src_i
        moved = not moved
        width *= 2
    if moved:
        keys[:] = src_k
        idx[:] = src_i


@numba.njit(cache=True, nogil=True)
def sort_keys(keys, idx, tk, ti, nbytes):
    """Stable sort of ``keys`` (with their positions ``idx``), in place:
    merge sort for short rows, LSD radix sort for long ones."""
    n = keys.shape[0]
    if 32 < n <= 1024:
        merge_sort_keys(keys, idx, tk, ti)
        return
    if n <= 32:
        for i in range(1, n):
            k = keys[i]
            j = idx[i]
            p = i - 1
            while p >= 0 and (keys[p] ^ SIGN) > (k ^ SIGN):
                keys[p + 1] = keys[p]
                idx[p + 1] = idx[p]
                p -= 1
            keys[p + 1] = k
            idx[p + 1] = j
        return
    counts = np.zeros((nbytes, 256), np.int64)
    for i in range(n):
        k = keys[i]
        for b in range(nbytes):
            counts[b, (k >> (8 * b)) & 255] += 1
    src_k, src_i, dst_k, dst_i = keys, idx, tk, ti
    moved = False
    offsets = np.empty(256, np.int64)
    for b in range(nbytes):
        if counts[b].max() == n:  # one value of this byte: the pass changes nothing
            continue
        total = 0
        for c in range(256):
            offsets[c] = total
            total += counts[b, c]
        shift = 8 * b
        for i in range(n):
            k = src_k[i]
            c = (k >> shift) & 255
            o = offsets[c]
            dst_k[o] = k
            dst_i[o] = src_i[i]
            offsets[c] = o + 1
        src_k, dst_k = dst_k, src_k
        src_i, dst_i = dst_i, src_i
        moved = not moved
    if moved:
        keys[:] = src_k
        idx[:] = src_i


@numba.njit(cache=True, nogil=True, inline="always")
def worse(ka, ia, kb, ib):
    """Entry a is worse than entry b for topk (a smaller key; ties: the later position)."""
    ua = ka ^ SIGN
    ub = kb ^ SIGN
    return ua < ub or (ua == ub and ia > ib)


@numba.njit(cache=True, nogil=True)
def sift_down(hk, hi, count, at):
    """Restore the heap (worst entry on top) below ``at``."""
    while True:
        child = 2 * at + 1
        if child >= count:
            return
        if child + 1 < count and worse(hk[child + 1], hi[child + 1], hk[child], hi[child]):
            child += 1
        if worse(hk[child], hi[child], hk[at], hi[at]):
            hk[at], hk[child] = hk[child], hk[at]
            hi[at], hi[child] = hi[child], hi[at]
            at = child
        else:
            return


@numba.njit(cache=True, nogil=True)
def top_keys(bits, row, n, k, kind, invert, out_idx):
    """The positions of the k best keys of ``bits[row]`` into ``out_idx[row]``, best first."""
    hk = np.empty(k, np.int64)
    hi = np.empty(k, np.int64)
    count = 0
    for i in range(n):
        key = key_of(np.int64(bits[row, i]), kind, invert)
        if count < k:
            at = count
            hk[at] = key
            hi[at] = i
            count += 1
            while at > 0:  # sift up
                parent = (at - 1) // 2
                if worse(hk[at], hi[at], hk[parent], hi[parent]):
                    hk[at], hk[parent] = hk[parent], hk[at]
                    hi[at], hi[parent] = hi[parent], hi[at]
                    at = parent
                else:
                    break
        elif (key ^ SIGN) > (hk[0] ^ SIGN):  # (a tie never beats an earlier position)
            hk[0] = key
            hi[0] = i
            sift_down(hk, hi, count, 0)
    while count > 0:  # pop the worst to the back
        count -= 1
        out_idx[row, count] = hi[0]
        hk[0] = hk[count]
        hi[0] = hi[count]
        sift_down(hk, hi, count, 0)


@numba.njit(cache=True, nogil=True)
def pack_keys(bits, kind, invert, packed):
    """``packed[o * inner + j, i]``: the key of ``bits[o, i, j]`` above ``i``
    (the lines run along the middle axis of (outer, n, inner))."""
    outer, n, inner = bits.shape
    for o in range(outer):
        for j in range(inner):
            line = packed[o * inner + j]
            for i in range(n):
                key = np.uint64(key_of(np.int64(bits[o, i, j]), kind, invert))
                line[i] = (key << np.uint64(32)) | np.uint64(i)


@numba.njit(cache=True, nogil=True)
def unpack_sorted(values, packed, out_values, out_idx):
    """From sorted packed words, the positions and values of each line of
    ``values`` (outer, n, inner) in order, into ``out_values`` and ``out_idx``."""
    outer, n, inner = values.shape
    for o in range(outer):
        for j in range(inner):
            line = packed[o * inner + j]
            for i in range(n):
                p = np.int64(line[i] & np.uint64(0xFFFFFFFF))
                out_idx[o, i, j] = p
                out_values[o, i, j] = values[o, p, j]


@numba.njit(cache=True, nogil=True)
def top_floats(row, k, sign, out_idx, hv, hi):
    """top_keys for a float row without NaN and a small k, on the values
    themselves (times ``sign``, -1 for the smallest: negation reverses the
    order exactly, and -0. ties 0. as the keys do), kept sorted by insertion:
    most elements cost one predictable comparison with the k-th best (3x the
    heap of keys' speed on 64 x 128, k=5). False (nothing written) when the
    row has a NaN or k > 64. ``hv``, ``hi``: scratch of k."""
    n = row.shape[0]
    if k > 64:
        return False
    nan = False
    for i in range(n):
        nan |= row[i] != row[i]
    if nan:
        return False
    m = 0
    for i in range(n):
        v = sign * row[i]
        if m == k and not v > hv[k - 1]:  # (a tie never beats an earlier position)
            continue
        p = m if m < k else k - 1
        while p > 0 and v > hv[p - 1]:
            hv[p] = hv[p - 1]
            hi[p] = hi[p - 1]
            p -= 1
        hv[p] = v
        hi[p] = i
        if m < k:
            m += 1
    for j in range(k):
        out_idx[j] = hi[j]
    return True
'''


def _rows_source(suffix, parallel):
    loop = "prange" if parallel else "range"
    flag = ", parallel=True" if parallel else ""
    # Scratch arrays: once per call in the serial loop (an allocation per row
    # cost a third of a 64 x 128 sort), per row in the parallel one (a thread's own).
    sort_scratch = '''keys = np.empty(n, np.int64)
        idx = np.empty(n, np.int64)
        tk = np.empty(n, np.int64)
        ti = np.empty(n, np.int64)'''
    top_scratch = '''hv = np.empty(k, values.dtype)
        hi = np.empty(k, np.int64)'''
    outer_sort, inner_sort = ("", sort_scratch) if parallel else (sort_scratch, "")
    outer_top, inner_top = ("", top_scratch) if parallel else (top_scratch, "")
    return f'''
@numba.njit(cache=True, nogil=True{flag})
def sort_rows{suffix}(values, bits, kind, nbytes, invert, out_values, out_idx):
    """Each row of ``values`` (whose bits ``bits`` are) sorted stably."""
    rows, n = values.shape
    {outer_sort.replace(chr(10) + '    ', chr(10))}
    for r in {loop}(rows):
        {inner_sort}
        for i in range(n):
            keys[i] = key_of(np.int64(bits[r, i]), kind, invert)
            idx[i] = i
        sort_keys(keys, idx, tk, ti, nbytes)
        for i in range(n):
            j = idx[i]
            out_idx[r, i] = j
            out_values[r, i] = values[r, j]


@numba.njit(cache=True, nogil=True{flag})
def topk_rows{suffix}(values, bits, k, kind, invert, out_values, out_idx):
    """The k best of each row (largest keys), best first."""
    rows, n = values.shape
    sign = values.dtype.type(-1 if invert else 1)
    {outer_top.replace(chr(10) + '    ', chr(10))}
    for r in {loop}(rows):
        {inner_top}
        if kind > 1 or not top_floats(values[r], k, sign, out_idx[r], hv, hi):
            top_keys(bits, r, n, k, kind, invert, out_idx)
        for i in range(k):
            out_values[r, i] = values[r, out_idx[r, i]]
'''


kernels = lazy_module(_HELPERS + _rows_source("", False) + _rows_source("_parallel", True),
                      "cpu_sorting")


def _key_dtype(dtype):
    """The dtype of one of the key kinds that holds ``dtype`` in order
    (float16 and narrower exactly in float32, other integers in int64)."""
    if dtype.kind == "f" and dtype.itemsize < 4:
        return np.dtype(np.float32)
    if dtype.kind in "iu" and dtype not in (np.int64, np.int32, np.uint8):
        return np.dtype(np.int64)
    return dtype


_KINDS = {np.dtype(np.float64): (FLOAT64, np.int64), np.dtype(np.float32): (FLOAT32, np.uint32),
          np.dtype(np.int64): (INT64, np.int64), np.dtype(np.int32): (INT32, np.int32),
          np.dtype(np.bool_): (BYTE, np.uint8), np.dtype(np.uint8): (BYTE, np.uint8)}

# The key dtypes whose keys (4 bytes or fewer) fit a packed word beside a position.
_PACKED_KEY_DTYPES = {dtype for dtype, (kind, _) in _KINDS.items() if _BYTES[kind] <= 4}


def _kind_and_bits(a):
    """The key kind of ``a`` (in a key dtype) and its bits, a same-memory integer view."""
    if a.dtype not in _KINDS:
        raise TypeError(f"cannot sort arrays of dtype {a.dtype}")
    kind, bits = _KINDS[a.dtype]
    return kind, a.view(bits)


def axis_last(a, axis):
    """A view of ``a`` with ``axis`` moved last (``np.moveaxis``, without its
    argument checks: a third of a 64 x 128 topk's Python time)."""
    if axis == a.ndim - 1:
        return a
    return a.transpose([d for d in range(a.ndim) if d != axis] + [axis])


def axis_back(a, axis):
    """The inverse of ``axis_last``: a view with the last axis moved to ``axis``."""
    last = a.ndim - 1
    if axis == last:
        return a
    return a.transpose(list(range(axis)) + [last] + list(range(axis, last)))


def _rows(a, axis):
    """``a`` with ``axis`` last, as a C-contiguous (rows, n) array, and its
    key kind and bits."""
    moved = a.reshape(1) if not a.ndim else axis_last(a, axis)
    moved = moved.astype(_key_dtype(moved.dtype), copy=False)
    rows = np.ascontiguousarray(moved).reshape(-1, moved.shape[-1]) if moved.size else \
        np.empty((int(np.prod(moved.shape[:-1])), moved.shape[-1]), moved.dtype)
    return (rows, *_kind_and_bits(rows))


def _restore(out, a, axis):
    """A (rows, n) result back in ``a``'s shape with its last axis at ``axis``, C-contiguous."""
    shape = (a.shape[:axis] + a.shape[axis + 1:] + (out.shape[-1],)) if a.ndim else ()
    out = out.reshape(shape)
    if not a.ndim or axis == a.ndim - 1:
        return out
    return np.ascontiguousarray(axis_back(out, axis))


def _parallel(rows, size):
    return rows > 1 and size >= PARALLEL_THRESHOLD // 4


def _packed_sort_along(a, axis, descending):
    """sort_along by np.sort of packed (key, position) words, for short lines
    of keys up to 4 bytes. The lines are read and written in place, along the
    middle axis of a C-contiguous (outer, n, inner) view: no moved copies."""
    shape = a.shape or (1,)
    n = shape[axis]
    lines = (int(np.prod(shape[:axis])), n, int(np.prod(shape[axis + 1:])))
    values = np.ascontiguousarray(a, _key_dtype(a.dtype)).reshape(lines)
    kind, bits = _kind_and_bits(values)
    packed = np.empty((lines[0] * lines[2], n), np.uint64)
    out_values, out_idx = np.empty(lines, values.dtype), np.empty(lines, np.int64)
    k = kernels()
    k.pack_keys(bits, kind, bool(descending), packed)
    packed.sort(axis=-1)
    k.unpack_sorted(values, packed, out_values, out_idx)
    return out_values.astype(a.dtype, copy=False).reshape(a.shape), out_idx.reshape(a.shape)


def sort_along(a, axis, descending=False):
    """``(values, indices)`` of ``a`` sorted along ``axis``, stably (NaN
    after everything, or first when ``descending``); C-contiguous, int64 indices."""
    if a.size and (a.shape[axis] if a.ndim else 1) <= PACKED_ROW_MAX and \
            _key_dtype(a.dtype) in _PACKED_KEY_DTYPES:
        return _packed_sort_along(a, axis, descending)
    rows, kind, bits = _rows(a, axis)
    values = np.empty(rows.shape, rows.dtype)  # (widened: cast back after)
    indices = np.empty(rows.shape, np.int64)
    if rows.size:
        run = kernels().sort_rows_parallel if _parallel(rows.shape[0], rows.size) else \
            kernels().sort_rows
        run(rows, bits, kind, _BYTES[kind], bool(descending), values, indices)
    return _restore(values.astype(a.dtype, copy=False), a, axis), _restore(indices, a, axis)


def topk_along(a, k, axis, largest=True):
    """``(values, indices)`` of the ``k`` largest (smallest) elements along
    ``axis``, best first (NaN counts as the largest; ties: the lower index first)."""
    rows, kind, bits = _rows(a, axis)
    if k * 8 > rows.shape[-1] and k > 1:  # a large share of each row: sort it
        values, indices = sort_along(a, axis, descending=largest)
        lead = (slice(None),) * (axis if a.ndim else 0)
        return (np.ascontiguousarray(values[lead + (slice(0, k),)]),
                np.ascontiguousarray(indices[lead + (slice(0, k),)]))
    values = np.empty((rows.shape[0], k), rows.dtype)  # (widened: cast back after)
    indices = np.empty((rows.shape[0], k), np.int64)
    if values.size:
        run = kernels().topk_rows_parallel if _parallel(rows.shape[0], rows.size) else \
            kernels().topk_rows
        run(rows, bits, k, kind, not largest, values, indices)
    return _restore(values.astype(a.dtype, copy=False), a, axis), _restore(indices, a, axis)


def unique(a, return_inverse, return_counts, consecutive=False):
    """``(values, inverse, counts)`` of the flattened ``a`` (None where not
    asked for): the distinct values in sorted order, or with ``consecutive``
    one per run of equal elements. Runs are found on a stable sort, so of
    equal values (-0. and 0.) the first in order stands for them, and every
    NaN is distinct, as in PyTorch."""
    flat = a.reshape(-1)
    order = None
    if consecutive:
        ordered = flat
    else:
        ordered, order = sort_along(flat, 0)
    n = flat.shape[0]
    start = np.empty(n, np.bool_)
    if n:
        start[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=start[1:])
    values = np.ascontiguousarray(ordered[start])
    inverse = counts = None
    if return_inverse:
        runs = np.cumsum(start, dtype=np.int64) - 1
        if order is None:
            inverse = runs
        else:
            inverse = np.empty(n, np.int64)
            inverse[order] = runs
        inverse = inverse.reshape(a.shape)
    if return_counts:
        firsts = np.flatnonzero(start)
        counts = np.diff(firsts, append=n).astype(np.int64, copy=False)
    return values, inverse, counts
