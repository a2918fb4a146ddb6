"""Random sampling ops (issue 15, item 9): the in-place samplers ``uniform_
normal_ bernoulli_ exponential_ random_ geometric_ cauchy_ log_normal_`` and
``randperm multinomial bernoulli poisson normal randint_like``, each taking
``generator=`` (``nbgrad.Generator``).

Values are drawn where the tensor lives, by its backend's ``random_fill``
(the CPU's: NumPy's PCG64; CUDA's: xoroshiro128+ states, on the device):
PyTorch's distributions, not its streams of numbers. ``poisson``,
``multinomial`` and ``randperm`` of a CUDA tensor draw on the host from a
NumPy stream seeded by the device's generator. A sampler writes as ``copy_``
does: it bumps the version counter, refuses a leaf that requires grad (in
grad mode) and gives a recorded write a zero gradient for what it replaced.
The sampling functions return tensors without history (PyTorch's ``normal``
records a zero gradient for its mean and std).
"""

import numpy as np

from .. import dtypes
from ..backends import cpu, for_device
from ..device import device as Device
from ..random import stream_for
from ..tape import grad_mode
from ..tensor import Tensor
from .registry import tensor_op


def _draw(generator, device, fn, shape, dtype, kind, a=0.0, b=1.0):
    """A Tensor of ``shape`` and ``dtype`` on ``device`` drawn by ``generator``."""
    backend, stream = stream_for(generator, device, fn)
    return Tensor._wrap(backend.random_fill(stream, tuple(shape), dtype.numpy, kind, a, b), dtype,
                        backend)


def _fill(self, generator, fn, kind, a=0.0, b=1.0):
    """Draw into ``self`` (written as ``copy_`` writes)."""
    return self.copy_(_draw(generator, self.device, fn, self.shape, self.dtype, kind, a, b))


def _host_stream(generator, device, fn):
    """A NumPy generator for the draws made on the host: the CPU's stream
    itself, or one seeded by a number the device's generator draws."""
    backend, stream = stream_for(generator, device, fn)
    if backend is cpu:
        return stream
    seed = backend.to_numpy(backend.random_fill(stream, (1,), np.int64, "integers", 0, 2 ** 62))
    return np.random.default_rng(int(seed[0]))


def _float_only(self, kernel):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{self.dtype.type_name}'")


def _continuous(self, name, cpp=False):
    if not self.dtype.is_floating_point:
        shown = self.dtype.cpp_name if cpp else self.dtype.type_name
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {shown}")


def _number(value):
    return float(value.item() if isinstance(value, Tensor) else value)


# ------------------------------------------------------------ in-place samplers
@tensor_op(function=False)
def uniform_(self, from_=0, to=1, *, generator=None, **kwargs):
    """uniform_(from=0, to=1, *, generator=None) -> Tensor

    Fill with values drawn uniformly from [from, to)."""
    from_ = kwargs.pop("from", from_)
    if kwargs:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    _float_only(self, "check_uniform_bounds")
    low, high = _number(from_), _number(to)
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    return _fill(self, generator, "uniform_", "uniform", low, high)


@tensor_op(function=False)
def normal_(self, mean=0, std=1, *, generator=None):
    """normal_(mean=0, std=1, *, generator=None) -> Tensor

    Fill with values drawn from the normal distribution N(mean, std**2)."""
    _float_only(self, "normal_kernel_cpu")
    mean, std_value = _number(mean), _number(std)
    if std_value < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    return _fill(self, generator, "normal_", "normal", mean, std_value)


@tensor_op(function=False)
def bernoulli_(self, p=0.5, *, generator=None):
    """bernoulli_(p=0.5, *, generator=None) -> Tensor

    Fill with 1 where a draw from Bernoulli(p) succeeds, else 0 (``p``: a
    number or a tensor of probabilities broadcast to ``self``)."""
    if isinstance(p, Tensor):
        _check_probabilities(p)
        return self.copy_(_bernoulli(generator, self, p, "bernoulli_"))
    if not 0 <= _number(p) <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return _fill(self, generator, "bernoulli_", "bernoulli", _number(p))


def _check_probabilities(p):
    with grad_mode.no_grad():
        if not bool(((p >= 0) & (p <= 1)).all()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report an "
                               "enhancement request to PyTorch.)")


def _bernoulli(generator, like, p, fn):
    """1 where a uniform draw (on ``like``'s device) is below ``p``, in ``like``'s dtype."""
    with grad_mode.no_grad():
        u = _draw(generator, like.device, fn, like.shape, dtypes.float64, "uniform")
        return (u < p).to(like.dtype)


@tensor_op(function=False)
def exponential_(self, lambd=1, *, generator=None):
    """exponential_(lambd=1, *, generator=None) -> Tensor

    Fill with values drawn from the exponential distribution of rate ``lambd``."""
    _continuous(self, "Exponential")
    if not _number(lambd) > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _fill(self, generator, "exponential_", "exponential", _number(lambd))


@tensor_op(function=False)
def geometric_(self, p, *, generator=None):
    """geometric_(p, *, generator=None) -> Tensor

    Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    if not 0 < _number(p) < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _fill(self, generator, "geometric_", "geometric", _number(p))


@tensor_op(function=False)
def cauchy_(self, median=0, sigma=1, *, generator=None):
    """cauchy_(median=0, sigma=1, *, generator=None) -> Tensor

    Fill with values drawn from the Cauchy distribution."""
    _continuous(self, "Cauchy", cpp=True)
    return _fill(self, generator, "cauchy_", "cauchy", _number(median), _number(sigma))


@tensor_op(function=False)
def log_normal_(self, mean=1, std=2, *, generator=None):
    """log_normal_(mean=1, std=2, *, generator=None) -> Tensor

    Fill with ``exp(x)``, ``x`` drawn from N(mean, std**2)."""
    _continuous(self, "LogNormal", cpp=True)
    if not _number(std) > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _fill(self, generator, "log_normal_", "log_normal", _number(mean), _number(std))


# The default range of random_ (no bounds): [0, 2**digits] for floats (every
# integer there is exact), the dtype's [0, max] for integers, {0, 1} for bool.
_RANDOM_HIGH = {"float16": 2 ** 11 + 1, "float32": 2 ** 24 + 1, "float64": 2 ** 53 + 1,
                "bool": 2}


@tensor_op(function=False)
def random_(self, from_=None, to=None, *, generator=None, **kwargs):
    """random_(from=0, to=None, *, generator=None) -> Tensor

    Fill with integers drawn uniformly from [from, to - 1]; ``random_(to)``
    from [0, to); without bounds, over what the dtype holds exactly."""
    from_ = kwargs.pop("from", from_)
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if from_ is not None and to is None:
        from_, to = 0, from_
    low = 0 if from_ is None else int(from_)
    if to is None:
        high = _RANDOM_HIGH.get(self.dtype.name)
        if high is None:
            high = int(np.iinfo(self.dtype.numpy).max) + 1
    else:
        high = int(to)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    return _fill(self, generator, "random_", "integers", low, high)


# ---------------------------------------------------------- sampling functions
def _output(values, dtype, device, requires_grad=False):
    backend = for_device(Device(device if device is not None else "cpu"))
    if requires_grad and not dtype.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    t = Tensor._wrap(backend.asarray(np.asarray(values).astype(dtype.numpy, copy=False)), dtype,
                     backend)
    t._requires_grad = bool(requires_grad)
    return t


def _input(value, fn, name="input", position=1):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{dtypes.type_name(value)}")
    return value


def _host(t):
    return t.detach().cpu().numpy()


@tensor_op(method=False)
def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """randperm(n, *, generator=None, dtype=nbgrad.int64, device=None, requires_grad=False) -> Tensor

    A random permutation of ``0 .. n - 1``."""
    dtype = dtypes.to_dtype(dtype, "randperm") or dtypes.int64
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    rng = _host_stream(generator, device or "cpu", "randperm")
    return _output(rng.permutation(n), dtype, device, requires_grad)


@tensor_op()
def multinomial(self, num_samples, replacement=False, *, generator=None):
    """multinomial(input, num_samples, replacement=False, *, generator=None) -> LongTensor

    For each row of ``input`` (non-negative weights), ``num_samples`` indices
    drawn with probabilities proportional to the weights; without
    ``replacement`` each index at most once (as PyTorch: the top
    ``num_samples`` of ``weight / Exp(1)``)."""
    _input(self, "multinomial")
    if self.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{self.dtype.type_name}")
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = self.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    weights = _host(self).astype(np.float64).reshape(-1, categories)
    if not np.all(np.isfinite(weights) & (weights >= 0)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    totals = weights.sum(axis=1)
    if np.any(totals <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _host_stream(generator, self.device, "multinomial")
    if replacement:  # inverse transform on each row's cumulative distribution
        cumulative = np.cumsum(weights / totals[:, None], axis=1)
        cumulative[:, -1] = 1.0
        u = rng.random((weights.shape[0], num_samples))
        picked = np.stack([np.searchsorted(c, row, side="right") for c, row in zip(cumulative, u)])
        picked = np.minimum(picked, categories - 1)
    else:
        keys = weights / rng.standard_exponential(weights.shape)
        picked = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    picked = picked.reshape((*self.shape[:-1], num_samples))
    return _output(picked, dtypes.int64, self.device)


@tensor_op()
def bernoulli(self, p=None, *, generator=None):
    """bernoulli(input, p=None, *, generator=None) -> Tensor

    1 where a draw from Bernoulli(``input``) succeeds (``input``: the
    probabilities), else 0, in ``input``'s dtype; with ``p``, every element's
    probability is ``p``."""
    _input(self, "bernoulli")
    if p is None:
        if not self.dtype.is_floating_point:
            raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for "
                                      f"'{self.dtype.type_name}'")
        _check_probabilities(self)
        return _bernoulli(generator, self, self.detach(), "bernoulli")
    if not 0 <= _number(p) <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return _draw(generator, self.device, "bernoulli", self.shape, self.dtype, "bernoulli",
                 _number(p))


@tensor_op()
def poisson(self, generator=None):
    """poisson(input, generator=None) -> Tensor

    A draw from Poisson(rate) for each rate in ``input``, in its dtype."""
    _input(self, "poisson")
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{self.dtype.type_name}'")
    rates = _host(self).astype(np.float64)
    if np.any(rates < 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    rng = _host_stream(generator, self.device, "poisson")
    return _output(rng.poisson(rates), self.dtype, self.device)


_NORMAL_FORMS = ("normal() received an invalid combination of arguments - got ({}), but expected "
                 "one of:\n"
                 " * (Tensor mean, Tensor std, *, nbgrad.Generator generator = None, Tensor out "
                 "= None)\n"
                 " * (Tensor mean, float std = 1, *, nbgrad.Generator generator = None, Tensor "
                 "out = None)\n"
                 " * (float mean, Tensor std, *, nbgrad.Generator generator = None, Tensor out "
                 "= None)\n"
                 " * (float mean, float std, tuple of ints size, *, nbgrad.Generator generator = "
                 "None, Tensor out = None, nbgrad.dtype dtype = None, Union[nbgrad.layout, str] "
                 "layout = None, Union[nbgrad.device, str, int] device = None, bool pin_memory "
                 "= False, bool requires_grad = False)\n")


@tensor_op(method=False)
def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False):
    """normal(mean, std, size=None, *, generator=None, ...) -> Tensor

    Values drawn from N(mean, std**2): ``mean`` and ``std`` tensors
    (broadcast), a tensor and a number, or two numbers and a ``size``."""
    tensors = [a for a in (mean, std) if isinstance(a, Tensor)]
    if not tensors:
        if size is None:
            names = ", ".join(type(a).__name__ for a in (mean, std))
            raise TypeError(_NORMAL_FORMS.format(names))
        dtype = dtypes.to_dtype(dtype, "normal") or dtypes.get_default_dtype()
        if float(std) < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        if not dtype.is_floating_point:
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                      f"'{dtype.type_name}'")
        out = _draw(generator, device or "cpu", "normal", tuple(size), dtype, "normal",
                    float(mean), float(std))
        out._requires_grad = bool(requires_grad)
        return out
    first = tensors[0]
    if not first.dtype.is_floating_point:
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                  f"'{first.dtype.type_name}'")
    with grad_mode.no_grad():
        if isinstance(std, Tensor):
            if bool((std < 0).any()):
                raise RuntimeError("normal expects all elements of std >= 0.0")
        elif float(std) < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        out_dtype = first.dtype
        if len(tensors) == 2:
            out_dtype = dtypes.promote_types(mean.dtype, std.dtype)
        shape = np.broadcast_shapes(tuple(getattr(mean, "shape", ())),
                                    tuple(getattr(std, "shape", ())))
        z = _draw(generator, first.device, "normal", shape, out_dtype, "normal")
        return (z * (std.detach() if isinstance(std, Tensor) else float(std))
                + (mean.detach() if isinstance(mean, Tensor) else float(mean)))


@tensor_op(method=False)
def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False):
    """randint_like(input, low=0, high, *, dtype=None, device=None, requires_grad=False) -> Tensor

    ``randint`` with the shape (and by default the dtype and device) of ``input``."""
    _input(input, "randint_like")
    if high is None:
        low, high = 0, low
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    dtype = dtypes.to_dtype(dtype, "randint_like") or input.dtype
    device = input.device if device is None else device
    out = _draw(generator, device, "randint_like", input.shape, dtype, "integers", low, high)
    if requires_grad and not dtype.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    out._requires_grad = bool(requires_grad)
    return out
