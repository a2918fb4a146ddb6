"""``quantile`` and ``nanquantile``, as PyTorch computes them: sort along the
dimension, find each quantile's rank (``q * (n - 1)``, ``n`` counting only
non-NaN values for ``nanquantile``), gather the values at the ranks below
and above and interpolate. The gradient flows through sort, gather and
lerp; the ranks and weights are constants."""
import numbers

from .. import creation, dtypes
from ..tape import grad_mode
from ..tensor import Tensor
from .arithmetic import where
from .registry import tensor_op

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _q_values(input, q):
    """``q`` as a 1-D tensor on ``input``'s device, and whether it was a scalar."""
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        if q.numel() and bool(((q < 0) | (q > 1)).any()):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        return q.detach().reshape(-1), q.ndim == 0
    if not isinstance(q, numbers.Real) or not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    return creation.tensor([float(q)], dtype=input.dtype, device=input.device), True


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    if not input.dtype.is_floating_point or input.dtype is dtypes.float16:
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    qs, scalar = _q_values(input, q)
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if dim is None:
        x, axis = input.reshape(-1), None
    else:
        n = max(input.ndim, 1)
        if not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {dim})")
        axis = dim % n
        x = input.unsqueeze(0) if input.ndim == 0 else input.movedim(axis, -1)
    ordered = x.sort(-1).values.unsqueeze(0)  # (1, ..., n): one row per quantile after expand
    rows = (qs.shape[0],) + tuple(ordered.shape[1:])
    ordered = ordered.expand(rows)
    with grad_mode.no_grad():
        qv = qs.reshape((-1,) + (1,) * (ordered.ndim - 1))
        nan = ordered.detach().isnan()
        if ignore_nan:
            count = nan.logical_not().sum(-1, keepdim=True).to(input.dtype)
            ranks = (qv * (count - 1)).clamp_min(0)
        else:
            last = ordered.shape[-1] - 1
            ranks = where(nan.any(-1, keepdim=True), qv * 0 + last, qv * last)
        ranks = ranks.expand(rows[:-1] + (1,))
        if interpolation == "lower":
            ranks = ranks.floor()
        elif interpolation == "higher":
            ranks = ranks.ceil()
        elif interpolation == "nearest":
            ranks = ranks.round()  # (half to even, as PyTorch's)
        below = ranks.to(dtypes.int64)
    out = ordered.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        with grad_mode.no_grad():
            weight = ranks * 0 + 0.5 if interpolation == "midpoint" else ranks - below
            above = ranks.ceil().to(dtypes.int64)
        out = out.lerp(ordered.gather(-1, above), weight)
    out = out.squeeze(-1)  # (Q, ...reduced)
    if keepdim:
        if axis is None:
            out = out.reshape((qs.shape[0],) + (1,) * input.ndim)
        elif input.ndim:
            out = out.unsqueeze(axis + 1)
    if axis is not None and input.ndim == 0 and not keepdim:
        out = out.reshape(qs.shape[0])
    return out.squeeze(0) if scalar else out


@tensor_op(out=True)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None) -> Tensor

    The ``q``-th quantiles (``q`` a number or 1-D tensor in ``[0, 1]``) of
    each slice along ``dim`` (of the flattened input when ``dim`` is None),
    between data points as ``interpolation`` says: ``linear``, ``lower``,
    ``higher``, ``midpoint`` or ``nearest``. A tensor ``q`` adds a leading
    dimension. A slice holding NaN gives NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=False)


@tensor_op(out=True)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """nanquantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None) -> Tensor

    ``quantile`` ignoring NaN: each slice's quantiles are those of its non-NaN
    values (NaN where a slice is all NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)
