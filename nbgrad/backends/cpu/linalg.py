"""Dense linear algebra on the host: NumPy's LAPACK (batched over leading
dimensions), with LAPACK's ``info`` where PyTorch reports it.

NumPy raises ``LinAlgError("Singular matrix")`` without saying where; PyTorch
names the batch element and the first zero diagonal element of ``U`` in the
LU factorization (getrf's ``info``). ``_lu_info`` finds it by an LU with
partial pivoting (as getrf's), run only once a solve has failed.
"""
import numpy as np


def _lu_info(a):
    """For each matrix of ``a`` (..., n, n): 0, or the 1-based column of the
    first exactly zero pivot of its LU factorization with partial pivoting."""
    batch = a.shape[:-2]
    flat = np.array(a, dtype=np.float64).reshape(-1, a.shape[-2], a.shape[-1])
    info = np.zeros(len(flat), np.int64)
    for b, m in enumerate(flat):
        n = m.shape[0]
        for j in range(n):
            p = j + int(np.argmax(np.abs(m[j:, j])))
            if m[p, j] == 0:
                if not info[b]:
                    info[b] = j + 1
                continue
            m[[j, p]] = m[[p, j]]
            m[j + 1:, j:] -= np.outer(m[j + 1:, j] / m[j, j], m[j, j:])
    return info.reshape(batch)


def _batch_info(a):
    return np.zeros(a.shape[:-2], np.int64)


def linalg_inv(a):
    """(the inverses of the matrices of ``a``, LAPACK's info per matrix)."""
    try:
        return np.linalg.inv(a), _batch_info(a)
    except np.linalg.LinAlgError:
        return None, _lu_info(a)


def linalg_solve(a, b):
    """(X with ``a @ X == b`` per matrix, info); ``b`` is (..., n, k), broadcast to ``a``'s batch."""
    try:
        return np.linalg.solve(a, b), _batch_info(a)
    except np.linalg.LinAlgError:
        return None, _lu_info(a)


def linalg_det(a):
    with np.errstate(all="ignore"):
        return np.asarray(np.linalg.det(a))


def linalg_svd(a, full_matrices=True, compute_uv=True):
    """``(U, S, Vh, info)`` of the matrices of ``a`` (..., m, n) by LAPACK's
    gesdd (U, Vh None without ``compute_uv``). ``info`` (per matrix): 0; 1
    for a matrix with a NaN (PyTorch's "non-finite values" error: LAPACK does
    not converge); 2 where LAPACK failed on a finite matrix. The results are
    None unless every ``info`` is 0. An inf gives NaNs, as LAPACK gives PyTorch."""
    info = np.isnan(a).any(axis=(-2, -1)).astype(np.int64) if a.size else _batch_info(a)
    if info.any():
        return None, None, None, info
    try:
        with np.errstate(all="ignore"):
            if not compute_uv:
                return None, np.linalg.svd(a, compute_uv=False), None, info
            u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
            return u, s, vh, info
    except np.linalg.LinAlgError:  # which matrices failed, for the error's batch element
        flat = a.reshape((-1,) + a.shape[-2:])
        for k, matrix in enumerate(flat):
            try:
                np.linalg.svd(matrix, compute_uv=False)
            except np.linalg.LinAlgError:
                info.reshape(-1)[k] = 2
        return None, None, None, info
