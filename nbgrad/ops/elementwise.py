"""Elementwise ops: the row type, and the dispatch that runs a row's kernels.

A row is a scalar forward function plus, for each differentiable input, its
derivative. Parameter names carry meaning: the forward's parameters name the
inputs, and a derivative reads ``g`` (the incoming gradient), ``out`` (the
forward result) and any inputs by name. What a derivative reads is exactly
what the forward saves, so ``mul`` saves the other operand and ``sigmoid`` its
output, as in PyTorch.
"""
import inspect
import numbers

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.graph import _SEQUENCE, Node, SavedTensor, SavedValue, input_meta
from ..backends import layout
from ..tensor import Tensor
from . import mutation
from .broadcasting import broadcast_shapes

_TYPE_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}


class FastPath:
    """Cheaper versions of a row's forward and of some derivatives, valid
    while every input they read is within ``abs(x) <= limit`` (sin and cos
    skip their huge-argument reduction there). The CPU kernels check each
    block of elements (nan fails the check) and run these where it passes,
    the row's own functions elsewhere; other backends ignore them. Each takes
    the same parameters as the function it stands in for."""

    def __init__(self, limit, forward, grads=None):
        self.limit = float(limit)
        self.forward = forward
        self.grads = dict(grads or {})

    def derivative(self, i, row):
        """The fast derivative for input ``i`` of ``row``, or None."""
        return self.grads.get(row.inputs[i])

    def validate(self, row):
        def params(fn):
            return tuple(inspect.signature(fn).parameters)
        if not 0 <= self.limit < float("inf"):
            raise ValueError(f"{row.name}: the fast path's limit must be finite and >= 0")
        if params(self.forward) != row.inputs:
            raise ValueError(f"{row.name}: the fast forward must take {row.inputs}")
        for name, fn in self.grads.items():
            if name not in row.inputs or row.derivative(row.inputs.index(name)) is None:
                raise ValueError(f"{row.name}: fast derivative for {name!r}, which has none")
            if params(fn) != row.grad_params(row.inputs.index(name)):
                raise ValueError(f"{row.name}: the fast derivative for {name!r} must read "
                                 f"{row.grad_params(row.inputs.index(name))}")


class ElementwiseOp:
    """One row of the op table; calling it applies the op to tensors."""

    def __init__(self, name, forward, grads=None, *, result="promote", bool_inputs=(),
                 domain=(-2.0, 2.0), method=True, title=None, fast_path=None, check=None):
        """``result``: "promote" (PyTorch's promotion), "float" (integer
        results become float32, as for ``div`` and ``exp``), "bool"
        (comparisons) or "self" (the dtype of the first input, for ``copy_``).
        ``bool_inputs`` are masks kept out of promotion. ``domain`` is where
        tests sample inputs. ``method`` adds ``Tensor.<name>``/``<name>_``.
        ``fast_path``: a ``FastPath`` (cheaper versions for small inputs).
        ``check(args)``: raises PyTorch's error for arguments the op refuses
        (``-`` on bools), given tensors as their dtypes and numbers as they
        are; it returns the positions of the numbers whose values it reads
        (``int_tensor ** -1``), which every call then checks, or None."""
        self.name = name
        self.forward = forward
        self.inputs = tuple(inspect.signature(forward).parameters)
        grads = dict(grads or {})
        unknown = set(grads) - set(self.inputs)
        if unknown:
            raise ValueError(f"{name}: derivatives given for unknown inputs {sorted(unknown)}; "
                             f"the forward's inputs are {self.inputs}")
        self._derivatives = [grads.get(n) for n in self.inputs]
        self._grad_params = []
        allowed = {"g", "out", *self.inputs}
        for n, fn in zip(self.inputs, self._derivatives):
            params = tuple(inspect.signature(fn).parameters) if fn else ()
            if set(params) - allowed:
                raise ValueError(f"{name}: the derivative for {n!r} reads {sorted(set(params) - allowed)}; "
                                 f"it may read only {sorted(allowed)}")
            self._grad_params.append(params)
        if result not in ("promote", "float", "bool", "self"):
            raise ValueError(f"{name}: result must be promote, float, bool or self, not {result!r}")
        self.result = result
        self.bool_inputs = tuple(self.inputs.index(n) for n in bool_inputs)
        self.differentiable = tuple(i for i, fn in enumerate(self._derivatives) if fn is not None)
        # Derivatives that are just ``g`` (add, sub's first input) need no kernel.
        self.passthrough = frozenset(i for i in self.differentiable if _is_identity(
            self._derivatives[i], self._grad_params[i]))
        self._reads = {}
        self._by_mask = {}
        # dtype -> _Plan for calls with one (two) arguments that are all
        # tensors of that dtype (on one device: the plan's, checked on use);
        # found without building a key. Only calls of the right arity get in:
        # a plan is made (and _prepare's checks pass) before it is stored.
        self._same_dtype1 = {}
        self._straight_entries = {}  # argument kinds -> dtype -> straight_line's entry
        self._function = None  # what calling the row runs (see __call__)
        self._same_dtype2 = {}
        self.domain = domain
        self.method = method
        self.op_name = title or "".join(part.title() for part in name.split("_"))
        if fast_path is not None:
            fast_path.validate(self)
        self.fast_path = fast_path
        self.check = check

    def derivative(self, i):
        return self._derivatives[i]

    def reads(self, needed):
        """Names the derivatives of the inputs flagged in ``needed`` read."""
        return self.backward_spec(needed).reads

    def backward_spec(self, needed):
        """What a node needs, given which inputs need a gradient (``needed``,
        one flag per input): computed once per mask."""
        spec = self._reads.get(needed)
        if spec is None:
            spec = self._reads[needed] = _BackwardSpec(self, needed)
        return spec

    def _spec_for_mask(self, mask):
        """``backward_spec`` keyed by a bit mask (bit k: input k needs a gradient)."""
        spec = self._by_mask.get(mask)
        if spec is None:
            spec = self._by_mask[mask] = self.backward_spec(
                tuple(bool(mask >> k & 1) for k in range(len(self.inputs))))
        return spec

    def grad_params(self, i):
        return self._grad_params[i]

    def __call__(self, *args):
        call = self._function
        if call is None:  # made on first use: straight_line imports this module
            from . import straight_line
            call = self._function = (straight_line.function(self) if straight_line.supported(self)
                                     else self._apply)
        return call(*args)

    def _apply(self, *args):
        return apply(self, args)

    def inplace(self, tensor, *args):
        return apply_inplace(self, tensor, args)

    def __repr__(self):
        return f"<elementwise op {self.name}{self.inputs}>"


def elementwise(name, forward, grads=None, **options):
    """Declare a new elementwise op as one row; returns it, ready to call.

    >>> square = nbgrad.elementwise("square", lambda a: a * a, grads={"a": lambda g, a: 2 * g * a})
    >>> square(nbgrad.tensor([3.0], requires_grad=True)).backward()
    """
    return ElementwiseOp(name, forward, grads, **options)


def _is_identity(fn, params):
    if params != ("g",):
        return False
    marker = object()
    try:
        return fn(marker) is marker
    except Exception:  # arithmetic on the marker: not the identity
        return False


class _BackwardSpec:
    """For one row and one set of inputs needing a gradient: what the forward
    saves, which gradients the fused kernel computes, which pass ``g`` through,
    and the backends' kernel runners for it."""

    __slots__ = ("row", "reads", "saves", "saves_out", "wanted", "passed", "runners", "direct")

    def __init__(self, row, needed):
        self.row = row
        self.reads = frozenset(p for i in row.differentiable if needed[i] for p in row.grad_params(i))
        self.saves = tuple(k for k, name in enumerate(row.inputs) if name in self.reads)
        self.saves_out = "out" in self.reads
        active = [i for i in row.differentiable if needed[i]]
        self.passed = tuple(i for i in active if i in row.passthrough)
        self.wanted = tuple(i for i in active if i not in row.passthrough)
        self.runners = {}
        # The kernel computes every input's gradient, in input order: its
        # result is the node's result as it is.
        self.direct = not self.passed and self.wanted == tuple(range(len(row.inputs)))

    def runner(self, backend, kinds):
        """``run(grad, args, out) -> gradients of the wanted inputs`` on
        ``backend`` for saved values of ``kinds`` (None: all arrays). A backend
        may offer one specialised to the kinds; any backend has the plain call."""
        key = backend if kinds is None else (backend, kinds)
        run = self.runners.get(key)
        if run is None:
            row, wanted = self.row, self.wanted
            make = getattr(backend, "elementwise_backward_for", None)
            if make is not None:
                run = make(row, wanted, kinds or "a" * len(row.inputs))
            else:
                backward = backend.elementwise_backward

                def run(grad, args, out):
                    return backward(row, wanted, grad, args, out)
            self.runners[key] = run
        return run


class _Recipe:
    """What every node of one op, dtype, device and set of inputs needing a
    gradient shares: made once per plan and gradient mask (``_Plan.recipes``),
    so a node stores one reference instead of copying each field."""

    __slots__ = ("row", "dtype", "backend", "title", "spec", "kinds", "cast", "nones", "one_save",
                 "run", "node_class")

    def __init__(self, row, args, dtype, backend, mask, inplace, title):
        self.row, self.dtype, self.backend = row, dtype, backend
        self.title = title or row.op_name
        self.spec = spec = row._by_mask.get(mask) or row._spec_for_mask(mask)
        kinds = None  # what the backward kernel sees: "s" a saved number, else "a"
        cast = False
        for k in spec.saves:
            if not isinstance(args[k], Tensor):
                kinds = (kinds or "a" * len(args))
                kinds = kinds[:k] + "s" + kinds[k + 1:]
            elif args[k].dtype is not dtype and k not in row.bool_inputs:  # masks stay bool
                cast = True
        self.kinds, self.cast = kinds, cast
        self.nones = (None,) * len(args)
        # The common case, saved without a loop: one saved tensor used as it is.
        self.one_save = spec.saves[0] if (
            len(spec.saves) == 1 and kinds is None and not cast and not inplace) else None
        self.run = None  # the backend's kernel runner, found on the first backward
        # Its nodes' class: ``backward`` becomes straight-line code for this recipe.
        self.node_class = type(f"{self.title}Backward", (ElementwiseBackward,), {"__slots__": ()})


class ElementwiseBackward(Node):
    __slots__ = ("recipe", "args", "out")
    returns_fresh = True  # kernel outputs are new buffers; passthroughs are ``grad`` itself

    @staticmethod
    def record(row, args, dtype, backend, inplace=False, title=None, recipes=None):
        """The node for ``row(*args)``, of its recipe's class. ``recipes``: the
        plan's cache of recipes by gradient mask (None: make one)."""
        # Node.__init__, inlined: this runs for every recorded op.
        edges = []
        metas = []
        mask = 0
        bit = 1
        for t in args:
            edge = None
            if isinstance(t, Tensor):
                edge = t._grad_fn
                if t._base is not None:
                    edge = t._gradient_edge() if t.requires_grad else None
                elif edge is None and t._requires_grad:  # a leaf: Tensor._gradient_edge
                    ref = t._grad_accumulator
                    edge = (ref() if ref is not None else None) or t._gradient_edge()
            edges.append(edge)
            if edge is None:
                metas.append(None)
            else:
                metas.append(input_meta(t))
                mask |= bit
            bit <<= 1
        recipe = None if recipes is None else recipes.get(mask)
        if recipe is None:
            recipe = _Recipe(row, args, dtype, backend, mask, inplace, title)
            if recipes is not None:
                recipes[mask] = recipe
        self = _new(recipe.node_class)
        self.next_edges = edges
        self.input_meta = metas
        self.pre_hooks = None
        self.retained = None
        self.sequence_nr = next(_SEQUENCE)
        self.recipe = recipe
        spec = recipe.spec
        self.out = spec.saves_out
        k = recipe.one_save
        if k is not None:
            saved = list(recipe.nones)
            saved[k] = s = SavedTensor(args[k])
            self.args = saved
            self.saved = (s,)
            return self
        if not spec.saves:
            self.args = recipe.nones
            self.saved = ()
            return self
        saved = list(recipe.nones)
        tensors = []
        for k in spec.saves:
            a = args[k]
            if not isinstance(a, Tensor):  # a number, typed as the kernel will see it
                saved[k] = s = SavedValue(np.bool_(a) if k in row.bool_inputs
                                          else dtype.numpy.type(a))
                tensors.append(s)  # freed like a tensor: PyTorch saves it as one
                continue
            if inplace and k == 0:  # the value before the write, not after it
                a = Tensor._wrap(backend.copy(a._data), a.dtype, backend)
            saved[k] = s = SavedTensor(a)
            tensors.append(s)
        self.args = saved
        self.saved = tuple(tensors)
        return self

    # The recipe's fields, read as the node's own.
    row = property(lambda self: self.recipe.row)
    dtype = property(lambda self: self.recipe.dtype)
    backend = property(lambda self: self.recipe.backend)
    spec = property(lambda self: self.recipe.spec)

    @property
    def op_name(self):
        return self.recipe.title

    title = op_name

    def after_write(self, output):
        if self.out is True:
            self.out = SavedTensor(output, output_of=self.recipe.title)
            self.saved += (self.out,)

    def release_saved(self):
        for s in self.saved:  # SavedTensor.release, inlined
            s.data = None

    def backward(self, grad):
        """Each recipe's class replaces this (and ``backward_and_release``) by
        straight-line code on first use."""
        self._specialize()
        return self.backward(grad)

    def backward_and_release(self, grad):
        self._specialize()
        return self.backward_and_release(grad)

    def _specialize(self):
        cls = self.__class__
        straight = _straight_line_backward(self.recipe)
        if straight is None:
            cls.backward = _general_backward
            cls.backward_and_release = Node.backward_and_release
        else:
            cls.backward = straight
            cls.backward_and_release = _straight_line_backward(self.recipe, release=True)


def _general_backward(node, grad):
    """Any ElementwiseBackward's gradients: saved values unpacked (and cast), then the
    backend's fused kernel for the wanted inputs, ``grad`` itself for the passed ones."""
    recipe = node.recipe
    spec = recipe.spec
    args = node.args
    if spec.saves:
        args = list(args)
        for k in spec.saves:
            a = args[k]
            if a.__class__ is SavedTensor:
                a = args[k] = a.unpack()
                if recipe.cast and a.dtype != recipe.dtype.numpy and k not in recipe.row.bool_inputs:
                    args[k] = recipe.backend.cast(a, recipe.dtype.numpy)
            else:  # a saved number
                args[k] = a.unpack()
    out = node.out
    if out.__class__ is SavedTensor:  # SavedTensor.unpack's fast path, inlined
        if out.data is not None and out.counter.value == out.version:
            out = out.data
        else:
            out = out.unpack()  # raises
    else:
        out = None
    if not recipe.row.differentiable:  # a comparison written in place: zero gradient, as in PyTorch
        return [None if e is None else recipe.backend.zeros(grad.shape, grad.dtype)
                for e in node.next_edges]
    wanted = spec.wanted
    if wanted:  # none when only inputs without a derivative need a gradient
        run = recipe.run
        if run is None:
            run = recipe.run = spec.runner(recipe.backend, recipe.kinds)
        grads = run(grad, args, out)
        if spec.direct:
            return grads
    result = [None] * len(args)
    for i in spec.passed:
        result[i] = grad
    if wanted:
        if len(wanted) == 1:
            result[wanted[0]] = grads[0]
        else:
            for i, g in zip(wanted, grads):
                result[i] = g
    return result


def _unpack_lines(name, saved_input):
    """``{name}``'s array from the SavedTensor ``s_{name}``: SavedTensor.unpack
    inlined where it would only return ``data``, called where it may raise
    (or must re-derive a view)."""
    lines = [f"{name} = s_{name}.data",
             f"if {name} is None or s_{name}.counter.value != s_{name}.version:",
             f"    {name} = s_{name}.unpack()"]
    if saved_input:  # an input with history: detached in place, or a view, since?
        lines += [f"elif s_{name}.producer is not None:",
                  f"    t = s_{name}.tensor_ref()",
                  "    if t is not None and (t._base is not None or t._grad_fn is None):",
                  f"        {name} = s_{name}.unpack()"]
    return lines


# The most dimensions the straight-line code (here and in straight_line.py) takes.
STRAIGHT_MAX_NDIM = 4


def _by_ndim(kernel_for):
    """Kernels indexed by number of dimensions, made as they are met
    (``_load_kernel``); the backend's ``kernel_for`` at index 0."""
    return [kernel_for] + [None] * STRAIGHT_MAX_NDIM


def _load_kernel(kernels, ndim):
    found = kernels[ndim] = kernels[0](ndim)
    return found


def _straight_line_backward(recipe, release=False):
    """Straight-line Python for one recipe's backward in the common case (a
    gradient of 1 to 4 dimensions under the backend's small-call size, every
    saved value an array of its shape), else ``_general_backward``. None where the recipe
    never qualifies (saved numbers, casts, a non-differentiable row, a
    backend without small flat kernels). ``release``: ``backward_and_release``,
    which also frees the saved tensors once their values are read."""
    spec, row = recipe.spec, recipe.row
    if recipe.kinds is not None or recipe.cast or not row.differentiable:
        return None
    arity = len(row.inputs)
    result = ["None"] * arity
    for i in spec.passed:
        result[i] = "grad"
    namespace = {"general": _general_backward}
    lines = ["def backward(node, grad):"]
    if spec.wanted:
        small = recipe.backend.elementwise_small_backward(row, spec.wanted, recipe.dtype.numpy)
        if small is None:
            return None
        kernel_for, below, new, sources = small
        namespace.update(kernels=_by_ndim(kernel_for), load_kernel=_load_kernel, below=below,
                         new=new, MAX_NDIM=STRAIGHT_MAX_NDIM)
        names = {-1: "grad", -2: "out"}
        names.update((k, f"x{k}") for k in spec.saves)
        body = ["args = node.args"] if spec.saves else []
        for k in spec.saves:
            body += [f"s_x{k} = args[{k}]"] + _unpack_lines(f"x{k}", True)
        if spec.saves_out:
            body += ["s_out = node.out"] + _unpack_lines("out", False)
        checks = [f"x{k}.shape == shape" for k in spec.saves]
        grads = [f"grad{i}" for i in spec.wanted]
        for i in spec.wanted:
            result[i] = f"grad{i}"
        inner = ["dtype = grad.dtype"] + [f"{g} = new(shape, dtype)" for g in grads]
        inner += ["kernel = kernels[ndim] or load_kernel(kernels, ndim)",
                  f"kernel({', '.join([names[k] for k in sources] + grads)})"]
        if release:  # node.saved holds exactly these (no numbers: recipe.kinds is None)
            inner += [f"s_x{k}.data = None" for k in spec.saves]
            inner += ["s_out.data = None"] if spec.saves_out else []
        inner.append(f"return [{', '.join(result)}]")
        if checks:
            body.append(f"if {' and '.join(checks)}:")
            inner = ["    " + line for line in inner]
        body += inner
        lines += ["    shape = grad.shape", "    ndim = len(shape)",
                  "    if 0 < ndim <= MAX_NDIM and grad.size < below:"]
        lines += ["        " + line for line in body]
        lines += ["    grads = general(node, grad)", "    node.release_saved()",
                  "    return grads"] if release else ["    return general(node, grad)"]
    else:  # every gradient is ``grad`` itself (add) or None
        if release and (spec.saves or spec.saves_out):
            lines.append("    node.release_saved()")
        lines.append(f"    return [{', '.join(result)}]")
    exec("\n".join(lines), namespace)
    return namespace["backward"]


def _device_error(a, b):
    return RuntimeError("Expected all tensors to be on the same device, but found at least two "
                        f"devices, {a.device} and {b.device}!")


def _prepare(row, args):
    """Promote, broadcast and unwrap the arguments of a row."""
    if len(args) != len(row.inputs):
        raise TypeError(f"{row.name}() takes {len(row.inputs)} arguments ({', '.join(row.inputs)}) "
                        f"but {len(args)} were given")
    first = None
    for a in args:
        if isinstance(a, Tensor):
            if first is None:
                first = a
            elif a._backend is not first._backend:  # TensorIterator names the GPU first
                raise _device_error(*((a, first) if first.device.type == "cpu" else (first, a)))
        elif not isinstance(a, (numbers.Number, np.bool_)) or isinstance(a, complex):
            raise TypeError(f"{row.name}(): expected Tensor or number arguments, "
                            f"got {type(a).__name__}")
    if first is None:
        raise TypeError(f"{row.name}(): expected at least one Tensor argument")
    if row.check is not None:
        row.check(_kinds(args))
    if row.result == "self":
        dtype = first.dtype
    else:
        dtype = dtypes.result_type([a for k, a in enumerate(args) if k not in row.bool_inputs])
        if row.result == "float" and not dtype.is_floating_point:
            dtype = dtypes.get_default_dtype()
    out_dtype = dtypes.bool_ if row.result == "bool" else dtype
    backend = first._backend
    shape = broadcast_shapes(*(a._data.shape for a in args if isinstance(a, Tensor)))
    scalar_type = dtype.numpy.type
    raw = []
    for k, a in enumerate(args):
        if isinstance(a, Tensor):
            data = a._data
            if k not in row.bool_inputs and data.dtype != dtype.numpy:
                data = backend.cast(data, dtype.numpy)
            raw.append(data)
        else:
            raw.append(np.bool_(a) if k in row.bool_inputs else scalar_type(a))
    return backend, dtype, out_dtype, shape, raw


def _kinds(args):
    """What a row's ``check`` sees: tensors as their dtypes, numbers as they are."""
    return [a.dtype if isinstance(a, Tensor) else a for a in args]


def _checked(check, kinds, k, convert):
    """``convert`` for the number at ``k``, running ``check`` on its value first."""
    def checked(value):
        check(kinds[:k] + [value] + kinds[k + 1:])
        return convert(value)
    return checked


def _broadcast(backend, raw, shape):
    return [r if isinstance(r, np.generic) or r.shape == shape else backend.broadcast_to(r, shape)
            for r in raw]


def _records(row, args):
    return grad_mode.is_grad_enabled() and any(
        isinstance(args[i], Tensor) and args[i].requires_grad for i in row.differentiable)


class _Plan:
    """The outcome of ``_prepare`` that depends only on the row and on each
    argument's kind (a tensor's dtype, device and whether it is zero-dim; a
    number's type): computed once, then found with one dict lookup.
    ``convert[k]``: None (a tensor used as is), a NumPy dtype (a tensor cast to
    it) or a callable (a number, typed as the kernel will see it)."""

    __slots__ = ("backend", "dtype", "out_dtype", "out_np", "convert", "plain", "grad_args",
                 "run", "forward", "recipes")

    def __init__(self, row, args):
        backend, dtype, out_dtype, _, _ = _prepare(row, args)  # raises what _prepare raises
        self.backend, self.dtype, self.out_dtype = backend, dtype, out_dtype
        self.out_np = out_dtype.numpy
        convert = []
        for k, a in enumerate(args):
            if isinstance(a, Tensor):
                cast = k not in row.bool_inputs and a.dtype is not dtype
                convert.append(dtype.numpy if cast else None)
            else:
                convert.append(np.bool_ if k in row.bool_inputs else dtype.numpy.type)
        if row.check is not None:  # numbers whose value the check reads: checked on every call
            kinds = _kinds(args)
            for k in row.check(kinds) or ():
                convert[k] = _checked(row.check, kinds, k, convert[k])
        self.convert = tuple(convert)
        self.plain = all(c is None for c in convert)  # tensors only, none cast
        self.grad_args = tuple(i for i in row.differentiable if isinstance(args[i], Tensor))
        self.recipes = {}  # gradient mask -> _Recipe, for this plan's nodes
        # ``run(shape, dtype, raw) -> out``. A backend may offer a forward
        # specialised to the argument kinds (the CPU's skips re-deriving them
        # on every call), and that one may also allocate its output itself
        # (``.new``: the CPU's takes small outputs straight from np.empty);
        # any backend has the plain one.
        kinds = "".join("a" if c is None or isinstance(c, np.dtype) else "s" for c in convert)
        make = getattr(backend, "elementwise_forward_for", None)
        if make is not None:
            forward = make(row, kinds)
            new = getattr(forward, "new", None)
            if new is not None:
                self.run, self.forward = new, forward
                return
        else:
            plain = backend.elementwise_forward

            def forward(out, raw):
                plain(row, out, raw)
        self.forward = forward  # into an ``out`` of any layout (_strided_output)
        empty = backend.empty

        def run(shape, dtype, raw):
            out = empty(shape, dtype)
            forward(out, raw)
            return out

        self.run = run


_plans = {}


def _plan_key(row, args):
    key = [row]
    for a in args:
        if isinstance(a, Tensor):
            key += (a.dtype, a._backend, not a._data.ndim)  # zero-dim tensors promote differently
        else:
            key.append(type(a))
    return tuple(key)


def _raw_arguments(plan, args):
    """The kernel's arguments and the broadcast shape (general case: numbers,
    casts or differing shapes)."""
    backend = plan.backend
    raw = []
    shape = None
    same_shape = True
    for a, convert in zip(args, plan.convert):
        if convert is None:
            data = a._data
        elif not isinstance(convert, np.dtype):
            raw.append(convert(a))
            continue
        else:
            data = backend.cast(a._data, convert)
        if shape is None:
            shape = data.shape
        elif data.shape != shape:
            same_shape = False
        raw.append(data)
    if not same_shape:
        shape = broadcast_shapes(*(r.shape for r in raw if not isinstance(r, np.generic)))
        raw = _broadcast(backend, raw, shape)
    return raw, shape


def _plan_for(row, args):
    key = _plan_key(row, args)
    plan = _plans.get(key)
    if plan is None:
        plan = _plans[key] = _Plan(row, args)
    return plan


def apply(row, args):
    a = args[0] if args else None
    if len(args) == 2:
        b = args[1]
        if (isinstance(b, Tensor) and isinstance(a, Tensor) and a.dtype is b.dtype
                and a._backend is b._backend):
            # Two tensors of one dtype: the plan depends on the dtype alone
            # (zero-dim inputs change promotion only between different dtypes).
            plan = row._same_dtype2.get(a.dtype)
            if plan is None or plan.backend is not a._backend:
                plan = _plan_for(row, args)
                row._same_dtype2[a.dtype] = plan
            data = a._data
            if plan.plain and data.shape == b._data.shape:
                raw = [data, b._data]
                shape = data.shape
            else:
                raw, shape = _raw_arguments(plan, args)
        else:
            if isinstance(b, Tensor) and isinstance(a, Tensor) and a._backend is not b._backend:
                args = _cpu_scalars_moved(args)
            plan = _plan_for(row, args)
            raw, shape = _raw_arguments(plan, args)
    elif len(args) == 1 and isinstance(a, Tensor):
        plan = row._same_dtype1.get(a.dtype)  # one tensor: likewise
        if plan is None or plan.backend is not a._backend:
            plan = _plan_for(row, args)
            row._same_dtype1[a.dtype] = plan
        if plan.plain:
            raw = [a._data]
            shape = a._data.shape
        else:
            raw, shape = _raw_arguments(plan, args)
    else:
        args = _cpu_scalars_moved(args)
        plan = _plan_for(row, args)
        raw, shape = _raw_arguments(plan, args)
    out = None
    if len(shape) > 1:  # (a loop, not a generator: this runs on every general call)
        for a in args:
            if isinstance(a, Tensor) and not a._data.flags.c_contiguous:
                out = _strided_output(plan, shape, args, raw)
                break
    if out is None:
        out = plan.run(shape, plan.out_np, raw)
    node = None
    if _grad_state.enabled:
        for i in plan.grad_args:
            t = args[i]  # Tensor.requires_grad, inlined
            if t._requires_grad or t._grad_fn is not None or (
                    t._base is not None and t._base.requires_grad):
                node = ElementwiseBackward.record(row, args, plan.dtype, plan.backend, False, None,
                                                  plan.recipes)  # positional: a cheaper call
                break
    result = _new(Tensor)  # Tensor._from_op, inlined
    result._data = out
    result._backend = plan.backend
    result.dtype = plan.out_dtype
    result._vc = None
    result._base = None
    result._requires_grad = False
    result._grad_fn = node
    result._grad = None
    if node is not None and node.out is True:  # node.after_write, inlined
        node.out = saved = SavedTensor(result, node.recipe.title)
        node.saved += (saved,)
    return result


_new = object.__new__


def _strided_output(plan, shape, args, raw):
    """The op's result in the layout PyTorch's TensorIterator gives it when
    an input is not C-contiguous: it follows the inputs' strides."""
    arrays = [a._data for a in args if isinstance(a, Tensor)]
    strides = layout.elementwise_strides(shape, arrays, numbers=len(arrays) < len(args))
    if strides is None:
        return plan.run(shape, plan.out_np, raw)
    out = layout.empty(plan.backend, shape, strides, plan.out_np)
    plan.forward(out, raw)
    return out


def _cpu_scalars_moved(args, first=0):
    """As PyTorch's TensorIterator, a 0-d CPU tensor may join an op on the GPU
    (as a scalar): here it is copied there, taped, so its gradient comes back
    to the CPU. ``first``: where the movable arguments start (not ``self``)."""
    device = None
    for a in args:
        if isinstance(a, Tensor) and a._backend.name != "cpu":
            device = a._backend
            break
    if device is None:
        return args
    from .copying import to_backend  # (copying builds on this module)
    return tuple(to_backend(a, device) if k >= first and isinstance(a, Tensor)
                 and a._backend.name == "cpu" and not a._data.ndim else a
                 for k, a in enumerate(args))


def apply_inplace(row, self, args, op_name=None):
    """``self = row(self, *args)``, written into ``self``'s memory."""
    if not isinstance(self, Tensor):
        raise TypeError(f"{row.name}_(): self must be a Tensor, not {type(self).__name__}")
    others_require_grad = any(isinstance(args[i - 1], Tensor) and args[i - 1].requires_grad
                              for i in row.differentiable if 0 < i <= len(args))
    # PyTorch's order: before shapes and dtypes. fill_/zero_ with a number may
    # write into an expanded tensor (every element gets the one value).
    filling = op_name in ("fill_", "zero_") and not isinstance(args[0], Tensor)
    mutation.check_inplace(self, others_require_grad, internal=not filling)
    args = _cpu_scalars_moved((self, *args), first=1)
    backend, dtype, out_dtype, shape, raw = _prepare(row, args)
    if shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")
    if out_dtype.category > self.dtype.category:
        raise RuntimeError(f"result type {_TYPE_NAMES[out_dtype.name]} can't be cast to the "
                           f"desired output type {_TYPE_NAMES[self.dtype.name]}")
    out = self._data
    for a in args[1:]:  # the very same memory is fine (x.mul_(x)); a shifted overlap is not
        if isinstance(a, Tensor) and row.name != "fill":  # fill_ reads its value first
            mutation.check_no_partial_overlap(backend, out, a._data)
    raw = _broadcast(backend, raw, shape)
    # A named method (zero_, fill_) names its node as PyTorch does; operators keep the row's.
    title = None
    if op_name and not op_name.startswith("__"):
        title = "".join(part.title() for part in op_name.strip("_").split("_"))
    return mutation.write(
        self, op_name or row.name + "_",
        kernel=lambda: backend.elementwise_forward(row, out, raw),
        make_node=lambda: ElementwiseBackward.record(row, args, dtype, backend, inplace=True,
                                                     title=title),
        others_require_grad=others_require_grad, checked=True)
