"""Everyday numeric ops a PyTorch user expects (issue 15 breadth): ``diff``,
``trace``, ``logcumsumexp``, ``logspace``, ``cov``, ``corrcoef``,
``bincount``, ``isin``. Each is composed from differentiable primitives as
PyTorch composes it (or as its formula reads), so gradients, at every
order, are the primitives'."""
import warnings

from .. import creation, dtypes
from ..tape import grad_mode
from ..tensor import Tensor
from .arithmetic import where
from . import joining  # noqa: F401  (declare cat first)
from .registry import FUNCTIONS, tensor_op
from .shapes import _wrap_dim
from .sorting import searchsorted

cat = FUNCTIONS["cat"]  # (as bound, with its forward-mode tangent rule)


@tensor_op()
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """diff(input, n=1, dim=-1, prepend=None, append=None) -> Tensor

    The ``n``-th forward difference along ``dim``, after joining ``prepend``
    and ``append`` to ``input`` there (a difference of bools is their xor)."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    axis = _wrap_dim(dim, input.ndim)
    for extra in (prepend, append):
        if extra is not None and extra.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    if prepend is not None or append is not None:
        input = cat([t for t in (prepend, input, append) if t is not None], axis)
    for _ in range(n):
        length = input.shape[axis]
        if length == 0:
            break
        later, earlier = input.narrow(axis, 1, length - 1), input.narrow(axis, 0, length - 1)
        input = later.ne(earlier) if input.dtype is dtypes.bool_ else later - earlier
    return input


@tensor_op()
def trace(input):
    """trace(input) -> Tensor: the sum of the main diagonal of a matrix
    (integers summed in int64, as ``sum``)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return input.diagonal().sum()


def _finite_max(input, axis):
    """The maximum along ``axis`` (kept), outside the graph, with infinities
    and NaN replaced by 0 so that shifting by it changes nothing there."""
    with grad_mode.no_grad():
        if input.shape[axis] == 0:
            return None
        m = input.detach().amax(axis, keepdim=True)
        return where(m.isfinite(), m, m.new_zeros(()))


@tensor_op()
def logcumsumexp(input, dim):
    """logcumsumexp(input, dim) -> Tensor

    ``log(cumsum(exp(input), dim))`` computed stably: each slice is shifted by
    its largest finite value first."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{input.dtype.type_name.replace('Tensor', '')}'")
    axis = _wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return input.clone()
    m = _finite_max(input, axis)
    if m is None:
        return input.clone()
    return (input - m).exp().cumsum(axis).log() + m


@tensor_op(method=False)
def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
             requires_grad=False):
    """logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False) -> Tensor

    ``steps`` values ``base ** linspace(start, end, steps)``."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtypes.get_default_dtype() if dtype is None else dtype
    exponents = creation.linspace(start, end, steps, dtype=dtypes.float64, device=device)
    out = (exponents * 0 + base) ** exponents
    if not dtype.is_floating_point:
        out = out.trunc()
    out = out.to(dtype)
    return out.requires_grad_() if requires_grad else out


def _weights(w, name, input, observations, integral):
    if w is None:
        return None
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {observations}")
    kind = "integral" if integral else "floating point"
    if w.dtype.is_floating_point == integral or w.dtype is dtypes.bool_:
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{w.dtype.type_name.replace('Tensor', '')} dtype")
    if observations and bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return w


@tensor_op()
def cov(input, *, correction=1, fweights=None, aweights=None):
    """cov(input, *, correction=1, fweights=None, aweights=None) -> Tensor

    The covariance matrix of the variables in the rows of ``input`` (each
    column an observation), with frequency and observation weights, as
    NumPy's ``cov`` and PyTorch's: ``(x - avg) @ (w * (x - avg)).T / norm``."""
    if input.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    observations = x.shape[1]
    fweights = _weights(fweights, "fweights", x, observations, integral=True)
    aweights = _weights(aweights, "aweights", x, observations, integral=False)
    w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if not x.dtype.is_floating_point:
        x = x.to(dtypes.get_default_dtype())
    if w is None:
        w_sum = observations
        avg = x.mean(1)
        norm = w_sum - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
    if bool(norm <= 0) if isinstance(norm, Tensor) else norm <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0 if isinstance(norm, Tensor) else 0
    x = x - avg.unsqueeze(1)
    c = x @ (x if w is None else x * w).t()
    return (c / norm).squeeze()


@tensor_op()
def corrcoef(input):
    """corrcoef(input) -> Tensor: Pearson correlation coefficients of the
    variables in the rows of ``input``, clipped to ``[-1, 1]``."""
    if input.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.unsqueeze(1)
    c = c / stddev.unsqueeze(0)
    return c.clamp(-1, 1)


@tensor_op()
def bincount(input, weights=None, minlength=0):
    """bincount(input, weights=None, minlength=0) -> Tensor

    How often each value occurs in a 1-D tensor of non-negative integers
    (int64), or the sum of ``weights`` at each value (float32 weights stay
    float32, others give float64). Not differentiable, as PyTorch's."""
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.dtype.is_floating_point:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{input.dtype.type_name.replace('Tensor', '')}'")
    if input.ndim != 1 or (input.numel() and bool((input < 0).any())):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    size = max(minlength, int(input.max()) + 1 if input.numel() else 0)
    index = input.to(dtypes.int64)
    with grad_mode.no_grad():
        if weights is None:
            values = creation.ones(input.shape[0], dtype=dtypes.int64, device=input.device)
        else:
            out_dtype = dtypes.float32 if weights.dtype is dtypes.float32 else dtypes.float64
            values = weights.detach().to(out_dtype)
        return values.new_zeros(size).scatter_add_(0, index, values)


@tensor_op(method=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """isin(elements, test_elements, *, assume_unique=False, invert=False) -> Tensor

    A bool tensor shaped as ``elements``: True where the element is among
    ``test_elements`` (either may be a number); ``invert`` negates it."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - at least one of "
                        "elements and test_elements must be a Tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    elements, test_elements = (
        t if isinstance(t, Tensor) else creation.tensor(t, device=like.device)
        for t in (elements, test_elements))
    common = dtypes.promote_types(elements.dtype, test_elements.dtype)
    with grad_mode.no_grad():
        a, b = elements.detach().to(common), test_elements.detach().to(common).reshape(-1)
        if not b.numel() or not a.numel():
            found = a.new_zeros(a.shape).bool()
        elif b.numel() < 10 * a.numel() ** 0.145:  # PyTorch's switch: few test elements
            found = a.unsqueeze(-1).eq(b).any(-1)
        else:  # look each element up in the sorted test elements
            ordered = b.sort().values
            at = searchsorted(ordered, a).clamp_max(b.numel() - 1)
            found = ordered.take(at).eq(a)
    return found.logical_not() if invert else found

