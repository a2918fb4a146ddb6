"""Forward-mode AD: the dual level and the tangents tensors carry.

While a dual level is open (``nbgrad.autograd.forward_ad.dual_level``), a
tensor may carry a tangent (``Tensor._fw_grad``, a Tensor of its shape) and
every op computes its outputs' tangents from its inputs': an elementwise row
in the same kernel pass as its value (the backends' ``elementwise_jvp``,
generated from the row's derivatives, which are linear in ``g``); an op
declared with :func:`tangent_rule` by its rule, which sits beside the op's
forward and backward. The rules:

- :data:`LINEAR`: the op is linear in its floating tensor arguments (views,
  sums, joins, gathers, copies): its tangent is the op applied to their
  tangents (a view's tangent is then a view of its base's, so an in-place
  write to the base's tangent shows through, as in PyTorch);
- :data:`LINEAR_IN_PLACE` (and :data:`FILL`, :data:`SETITEM`): an in-place
  write: the same write into the tangent of the tensor written (a number
  written has a zero tangent);
- :data:`BILINEAR`: linear in each (a product): the sum over arguments of the
  op with that argument replaced by its tangent;
- :data:`BY_VJP` (any other op): the tangent is the Jacobian-vector product
  computed from the op's own backward, differentiated once more (the
  double-backward trick), so every op whose backward builds a graph has one.

With no level open an op pays one global read (``LEVEL is None``).
"""
import functools
import weakref

from ..tape import grad_mode
from ..tensor import Tensor

LEVEL = None  # the open dual level (0: PyTorch supports one at a time), or None
_carriers = {}  # id -> weak reference of each tensor holding a tangent at the open level


def enter_level():
    global LEVEL
    if LEVEL is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    LEVEL = 0
    return LEVEL


def exit_level(level=None):
    """Close the level: every tangent of it is dropped, as in PyTorch."""
    global LEVEL
    if LEVEL is None or (level is not None and level != LEVEL):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    for ref in list(_carriers.values()):
        t = ref()
        if t is not None:
            t._fw_grad = None
    _carriers.clear()
    LEVEL = None


def tangent_of(t):
    """``t``'s tangent at the open level, or None."""
    return t._fw_grad if LEVEL is not None and t.__class__ is Tensor else None


def set_tangent(t, tangent):
    t._fw_grad = tangent
    key = id(t)
    if key not in _carriers:  # (a weak set would compare tensors with ==, elementwise)
        _carriers[key] = weakref.ref(t, lambda _, key=key: _carriers.pop(key, None))


class _Suspended:
    """No tangents while a rule computes one (its own ops carry none)."""

    def __enter__(self):
        global LEVEL
        self.level, LEVEL = LEVEL, None

    def __exit__(self, *exc):
        global LEVEL
        LEVEL = self.level


def _tensors(values):
    for v in values:
        if v.__class__ is Tensor:
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(v)


def _substitute(value, replace):
    """``value`` with every floating tensor (also inside lists) replaced by ``replace(t)``."""
    if value.__class__ is Tensor:
        return replace(value) if value.dtype.is_floating_point else value
    if isinstance(value, (list, tuple)) and any(True for _ in _tensors(value)):
        return type(value)(_substitute(v, replace) for v in value)
    return value


def _zeros_tangent(t):
    return Tensor._wrap(t._backend.zeros(t._data.shape, t.dtype.numpy), t.dtype, t._backend)


def _tangent_or_zeros(t):
    tangent = t._fw_grad
    return tangent if tangent is not None else _zeros_tangent(t)


def _linear(fn, args, kwargs, out):
    args = [_substitute(a, _tangent_or_zeros) for a in args]
    kwargs = {k: _substitute(v, _tangent_or_zeros) for k, v in kwargs.items()}
    return fn(*args, **kwargs)


def _linear_in_place(fn, args, kwargs, out):
    """An in-place write linear in its tensor arguments (``copy_``,
    ``zero_``): the same write into the tangent of ``self`` (zeros first if
    it had none), so the tangents of its views see it too."""
    _ensure_tangent(args[0])
    _linear(fn, args, kwargs, out)


def _written_tangent(value):
    """The tangent of a value written into a tensor: a tensor's (zeros where
    it has none), a number's zero."""
    return _tangent_or_zeros(value) if value.__class__ is Tensor else 0


def _ensure_tangent(t):
    """``t``'s tangent, zeros made where it had none; for a view, the same
    view of its base's tangent (zeros made there first), as PyTorch: a
    write through the view then shows in the base's tangent."""
    if t._fw_grad is None:
        base = t._base
        if base is None:
            set_tangent(t, _zeros_tangent(t))
        else:
            base_tangent = _ensure_tangent(base)
            set_tangent(t, Tensor._wrap(t._view_fn(base_tangent._data), base_tangent.dtype,
                                        base_tangent._backend))
    return t._fw_grad


def _fill(fn, args, kwargs, out):
    """``self.fill_(value)``: the tangent is filled with the value's."""
    _ensure_tangent(args[0]).fill_(_written_tangent(args[1]))


def _setitem(fn, args, kwargs, out):
    """``self[key] = value``: the tangent's region takes the value's."""
    self, key, value = args
    _ensure_tangent(self)[key] = _written_tangent(value)


def _bilinear(fn, args, kwargs, out):
    total = None
    for k, a in enumerate(args):
        if a.__class__ is Tensor and a._fw_grad is not None:
            term = fn(*args[:k], a._fw_grad, *args[k + 1:], **kwargs)
            total = term if total is None else total + term
    return total


def _by_vjp(fn, args, kwargs, out):
    """J t from the op's backward: ``u -> vjp(u)`` is linear in ``u``, so the
    derivative of ``<vjp(u), t>`` with respect to ``u`` is ``J t``."""
    from ..gradients import grad  # (gradients builds on Tensor, as this module does)
    leaves, tangents = [], []

    def fresh(t):
        if t._fw_grad is None:
            return t
        leaf = Tensor._wrap(t._data, t.dtype, t._backend).requires_grad_()
        leaves.append(leaf)
        tangents.append(t._fw_grad)
        return leaf
    with grad_mode.enable_grad():
        y = fn(*[_substitute(a, fresh) for a in args],
               **{k: _substitute(v, fresh) for k, v in kwargs.items()})
        y = _first_tensor(y)
        if not y.requires_grad:
            return None
        u = _zeros_tangent(y).requires_grad_()
        vjps = grad(y, leaves, u, create_graph=True, allow_unused=True)
        pairs = [(g, t) for g, t in zip(vjps, tangents) if g is not None and g.requires_grad]
        if not pairs:
            return None
        total = sum((g * t).sum() for g, t in pairs)
        (jt,) = grad(total, u, allow_unused=True)
    return None if jt is None else jt.detach()


LINEAR, LINEAR_IN_PLACE, BILINEAR, BY_VJP = _linear, _linear_in_place, _bilinear, _by_vjp
FILL, SETITEM = _fill, _setitem


def _first_tensor(out):
    """The output a tangent is for: the op's tensor, or a (values, indices) pair's values."""
    return out if out.__class__ is Tensor else out[0]


def tangent_rule(rule=BY_VJP):
    """Declare an op's tangent rule (see the module's docstring): the op then
    propagates tangents while a dual level is open."""
    def declare(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if LEVEL is None:
                return fn(*args, **kwargs)
            return propagate(fn, rule, args, kwargs)
        op.tangent_rule = rule
        return op
    return declare


def propagate(fn, rule, args, kwargs):
    """``fn(*args, **kwargs)``, its output given the tangent ``rule`` computes
    when some tensor argument carries one (an in-place rule sets the written
    tensor's itself and returns None)."""
    if not any(t._fw_grad is not None for t in _tensors((*args, *kwargs.values()))):
        return fn(*args, **kwargs)
    with _Suspended():
        out = fn(*args, **kwargs)
        tangent = rule(fn, args, kwargs, out)
    if tangent is not None:
        target = _first_tensor(out)
        if target.dtype.is_floating_point:
            set_tangent(target, tangent)
    return out
