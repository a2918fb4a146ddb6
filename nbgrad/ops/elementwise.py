"""Elementwise dispatch: applying a row (``nbgrad.declarations.row``) to
tensors, promoting, broadcasting and recording its node, and running the
backend's kernels forward and backward."""
import numbers

import numpy as np

from .. import dtypes
from ..tape import grad_mode
from ..tape.grad_mode import _state as _grad_state
from ..tape.graph import Node, SavedTensor, SavedValue, edge_of, fill_node, input_meta
from ..backends import layout
from ..declarations.derivation import derivative_row
from ..declarations.row import Row
from ..tensor import Tensor
from . import dual, mutation
from .broadcasting import broadcast_shapes

_TYPE_NAMES = dtypes.TYPE_NAMES  # "Float", "Long", "Half"


class _Recipe:
    """What every node of one op, dtype, device and set of inputs needing a
    gradient shares: made once per plan and gradient mask (``_Plan.recipes``),
    so a node stores one reference instead of copying each field."""

    __slots__ = ("row", "dtype", "backend", "title", "spec", "kinds", "cast", "nones", "one_save",
                 "run", "node_class", "refusal")

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
        if inplace and args[0].dtype is not dtype:  # the gradient comes in self's narrower dtype
            cast = True
        self.kinds, self.cast = kinds, cast
        self.nones = (None,) * len(args)
        # The common case, saved without a loop: one saved tensor used as it is.
        self.one_save = spec.saves[0] if (
            len(spec.saves) == 1 and kinds is None and not cast and not inplace) else None
        self.run = None  # the backend's kernel runner, found on the first backward
        # PyTorch's error, raised at backward, where its formula refuses these dtypes.
        self.refusal = row.backward_refusal and row.backward_refusal(
            [a.dtype if isinstance(a, Tensor) else None for a in args],
            [i for i in range(len(args)) if mask >> i & 1])
        # Its nodes' class: ``backward`` becomes straight-line code for this recipe.
        self.node_class = type(f"{self.title}Backward", (
            RefusedBackward if self.refusal else ElementwiseBackward,), {"__slots__": ()})


class ElementwiseBackward(Node):
    __slots__ = ("recipe", "args", "out")
    returns_fresh = True  # kernel outputs are new buffers; passthroughs are ``grad`` itself

    @staticmethod
    def record(row, args, dtype, backend, inplace=False, title=None, recipes=None):
        """The node for ``row(*args)``, of its recipe's class. ``recipes``: the
        plan's cache of recipes by gradient mask (None: make one)."""
        edges = []
        metas = []
        mask = 0
        bit = 1
        for t in args:
            edge = edge_of(t)
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
        fill_node(self, edges, metas)
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
                                          else dtype.compute.type(a))
                tensors.append(s)  # freed like a tensor: PyTorch saves it as one
                continue
            if inplace and k == 0:  # the value before the write, not after it, with the
                # history it had (PyTorch saves self.clone(); a clone's backward is the
                # identity, so the copy takes self's history itself, at no cost)
                a = Tensor._from_op(backend.copy(a._data), a.grad_fn, a.dtype, backend)
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

    def backward_graph(self, grad):
        """The gradients as taped ops (a backward that builds a graph): each
        wanted input's derivative is its derivative row
        (``declarations.derivation``) applied to ``grad`` and the saved
        values, which keep their histories, so it can be differentiated again."""
        recipe = self.recipe
        row, spec = recipe.row, recipe.spec
        if not row.differentiable:  # a comparison written in place: zero gradient
            zeros = grad._backend.zeros(grad._data.shape, grad.dtype.numpy)
            return [None if e is None else Tensor._wrap(zeros, grad.dtype, grad._backend)
                    for e in self.next_edges]
        values = {"g": grad}
        for k in spec.saves:
            saved = self.args[k]
            values[row.inputs[k]] = (saved.to_tensor(saved, self) if saved.__class__ is SavedTensor
                                     else saved.unpack())
        if self.out.__class__ is SavedTensor:
            values["out"] = self.out.to_tensor(self.out, self)
        result = [None] * len(self.args)
        for i in spec.passed:
            result[i] = grad
        for i in spec.wanted:
            derivative = derivative_row(row, i)
            result[i] = derivative(*(values[p] for p in derivative.parent_params))
        return result

    def _specialize(self):
        from .straight_line import backward  # (straight_line builds on this module)
        cls = self.__class__
        straight = backward(self.recipe)
        if straight is None:
            cls.backward = _general_backward
            cls.backward_and_release = Node.backward_and_release
        else:
            cls.backward = straight
            cls.backward_and_release = backward(self.recipe, release=True)


class RefusedBackward(ElementwiseBackward):
    """A node whose backward PyTorch's formula refuses for its inputs' dtypes
    (``x ** bool_tensor``: pow_backward computes ``exponent - 1``)."""
    __slots__ = ()

    def backward(self, grad):
        raise RuntimeError(self.recipe.refusal)

    backward_and_release = backward


def _general_backward(node, grad, unpacked=None, out=None):
    """Any ElementwiseBackward's gradients: saved values unpacked (and cast), then the
    backend's fused kernel for the wanted inputs, ``grad`` itself for the passed ones.
    ``unpacked``: the saved inputs' values by position and ``out``, where a caller
    (the straight-line backward, before it falls back here) has unpacked them already:
    a saved-tensor hook's unpack runs once."""
    recipe = node.recipe
    spec = recipe.spec
    if recipe.cast and grad.dtype != recipe.dtype.numpy:  # PyTorch's formula promotes it
        grad = recipe.backend.cast(grad, recipe.dtype.numpy)
    args = node.args
    if spec.saves:
        args = list(args)
        for k in spec.saves:
            a = args[k]
            if unpacked is not None:
                args[k] = unpacked[k]
            elif a.__class__ is SavedTensor:
                a = args[k] = a.unpack()
                if recipe.cast and a.dtype != recipe.dtype.numpy and k not in recipe.row.bool_inputs:
                    args[k] = recipe.backend.cast(a, recipe.dtype.numpy)
            else:  # a saved number
                args[k] = a.unpack()
    if unpacked is None:
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


def _device_error(a, b):
    return RuntimeError("Expected all tensors to be on the same device, but found at least two "
                        f"devices, {a.device} and {b.device}!")


def _prepare(row, args):
    """Check, promote, broadcast and unwrap the arguments of a row; also
    returns how each argument is converted (``_Plan.convert``)."""
    if len(args) != len(row.inputs):
        raise TypeError(f"{row.name}() takes {len(row.inputs)} arguments ({', '.join(row.inputs)}) "
                        f"but {len(args)} were given")
    if row.tensors is not None:
        check_tensors(row, args)
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
        elif isinstance(a, int):
            _int_fits(a)
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
    convert = _converters(row, args, dtype)
    raw = [a._data if c is None else backend.cast(a._data, c) if isinstance(c, np.dtype) else c(a)
           for a, c in zip(args, convert)]
    return backend, dtype, out_dtype, shape, raw, convert


def check_tensors(row, args, first_position=1):
    """PyTorch's TypeError for an argument that is not a tensor, for a row
    whose signature takes tensors only (``row.tensors``); returns ``args``.
    ``first_position``: 0 for a method's arguments (``self`` has none)."""
    for k, (name, a) in enumerate(zip(row.tensors, args)):
        if not isinstance(a, Tensor):
            raise TypeError(f"{row.name}(): argument '{name}' (position {k + first_position}) "
                            f"must be Tensor, not {type(a).__name__}")
    return args


_INT64_END = 2 ** 63


def _int_fits(value):
    """PyTorch first makes a Python int its Scalar, an int64 or (from 2**63
    on) a uint64: beyond those, its OverflowError."""
    if value >= 2 * _INT64_END:
        raise OverflowError("int too big to convert")
    if value < -_INT64_END:
        raise OverflowError("can't convert negative int to unsigned")


def _bool_promotion_refused(value):
    raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted "
                       "to promote Bool and UInt64")


def _int64_overflow(value):
    raise RuntimeError("value cannot be converted to type int64_t without overflow")


def _converters(row, args, dtype):
    """Per argument: None (a tensor used as is), a NumPy dtype (a tensor cast
    to it) or a callable (a number, typed as the kernel will see it)."""
    convert = []
    for k, a in enumerate(args):
        if isinstance(a, Tensor):
            cast = k not in row.bool_inputs and a.dtype is not dtype
            # (a 0-d tensor into float16's opmath, float32, as PyTorch's CPU scalars:
            # half * int32 0-d 70000 is finite; a dimensioned one into float16: inf)
            convert.append(None if not cast else dtype.numpy if a._data.ndim else dtype.compute)
        elif k in row.bool_inputs:
            convert.append(np.bool_)
        elif isinstance(a, int) and not isinstance(a, bool):
            convert.append(_int_converter(row, args, k, dtype))
        else:  # float16 computes in float32: a number stays float32 (PyTorch's opmath)
            convert.append(dtype.compute.type)
    return convert


def _int_converter(row, args, k, dtype):
    """The kernel's value of a Python int at ``k`` (``dtype``: the
    computation's), with PyTorch's rules for ints that only a uint64 holds."""
    convert = dtype.compute.type
    if dtype.category == 1 and dtype is not dtypes.int64:
        return _narrow_int_converter(row, k, dtype)
    promoted = [a.dtype for i, a in enumerate(args) if isinstance(a, Tensor)
                and i not in row.bool_inputs]
    if row.result != "self" and all(d is dtypes.bool_ for d in promoted):
        unsigned = _bool_promotion_refused  # bool with uint64 promotes to nothing
    elif dtype is not dtypes.int64:
        unsigned = convert  # floating (or fill_'s bool): the value itself
    elif k in row.scalars:
        unsigned = _int64_overflow
    else:  # a wrapped uint64 number cast to int64: modulo 2**64
        def unsigned(value):
            return convert(value - 2 * _INT64_END)

    def converted(value):
        if -_INT64_END <= value < _INT64_END:
            return convert(value)
        _int_fits(value)
        return unsigned(value)
    return converted


def _narrow_int_converter(row, k, dtype):
    """A Python int in an op computing in uint8, int8, int16 or int32: wrapped
    modulo 2**bits as PyTorch's wrapped numbers are (``int8_t + 1000``
    adds -24), refused where the row's signature takes a Scalar PyTorch
    converts with its overflow check (clamp's bounds, where's values)."""
    convert = dtype.numpy.type
    modulus = 1 << dtype.bits
    low = -(modulus >> 1) if dtype.is_signed else 0

    def converted(value):
        _int_fits(value)
        if k in row.scalars:
            dtypes.check_scalar(value, dtype)
        return convert((value - low) % modulus + low)
    return converted


def _kinds(args):
    """What a row's ``check`` sees: tensors as their dtypes, numbers as they are."""
    return [a.dtype if isinstance(a, Tensor) else a for a in args]


def _checked(check, kinds, k, convert):
    """``convert`` for the number at ``k``, running ``check`` on its value first
    (after ``_int_fits``: PyTorch makes the number a Scalar before checking it)."""
    def checked(value):
        if value.__class__ is int:
            _int_fits(value)
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
                 "run", "forward", "recipes", "c_order", "wrapped_numbers")

    def __init__(self, row, args):
        backend, dtype, out_dtype, _, _, convert = _prepare(row, args)  # raises what it raises
        self.backend, self.dtype, self.out_dtype = backend, dtype, out_dtype
        self.out_np = out_dtype.numpy
        self.c_order = any(not isinstance(args[k], Tensor) for k in row.contiguous_with_number)
        self.wrapped_numbers = row.wraps_numbers and any(not isinstance(a, Tensor) for a in args)
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
        # ("h": a float16 array, which a backend may take its own way: the CPU's as bits)
        kinds = "".join(_kind(a, c) for a, c in zip(args, convert))
        make = getattr(backend, "elementwise_forward_for", None)
        if out_dtype is dtypes.float16 and "h" not in kinds:
            make = None  # a float16 result of other dtypes (default float16): the plain forward
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


def _kind(arg, convert):
    """An argument's kind for the backend's forward: "a" an array, "h" a float16
    one, "s" a number."""
    if convert is None:
        return "h" if arg.dtype is dtypes.float16 else "a"
    if isinstance(convert, np.dtype):
        return "h" if convert == dtypes.float16.numpy else "a"
    return "s"


_plans = {}


def _forget_plans():
    """The default dtype changed: plans (and the straight-line entries made
    from them) typed Python floats with the old one. Inner dicts are cleared
    in place: generated code holds them."""
    for key in list(_plans):
        for entries in getattr(key[0], "_straight_entries", {}).values():
            entries.clear()
    _plans.clear()


dtypes.DEFAULT_DTYPE_WATCHERS.append(_forget_plans)


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
    if dual.LEVEL is not None:
        active = _with_tangents(row, args)
        if active:
            return _apply_dual(row, plan, args, raw, shape, active)
    out = None
    if len(shape) > 1 and not plan.c_order:  # (a loop, not a generator: this runs on every call)
        for a in args:
            # NumPy's c_contiguous ignores size-1 strides, which PyTorch
            # follows where its fast_set_up does not apply (the cheap tests first).
            if isinstance(a, Tensor) and not (a._data.flags.c_contiguous and (
                    1 not in a._data.shape or layout.has_c_strides(a._data)
                    or _fast_set_up(plan, shape, args))):
                out = _strided_output(plan, shape, args, raw)
                break
    if out is None:
        out = plan.run(shape, plan.out_np, raw)
    return _result(plan, row, args, out)


def _result(plan, row, args, out):
    """The op's result over ``out``, with its node when it is recorded."""
    node = None
    if _grad_state.enabled:
        for i in plan.grad_args:
            t = args[i]  # Tensor.requires_grad, inlined
            if t._requires_grad or t._grad_fn is not None or (
                    t._base is not None and t._base.requires_grad):
                node = ElementwiseBackward.record(row, args, plan.dtype, plan.backend, False, None,
                                                  plan.recipes)  # positional: a cheaper call
                break
    result = Tensor._from_op(out, node, plan.out_dtype, plan.backend)
    if node is not None and node.out is True:  # node.after_write, inlined
        node.out = saved = SavedTensor(result, node.recipe.title)
        node.saved += (saved,)
    return result


# -- forward mode: value and tangent in one fused pass (the backends'
# elementwise_jvp, generated from the row's derivatives)
def _with_tangents(row, args):
    """The inputs whose tangents reach the output (a derivative and a tangent)."""
    return tuple(k for k in row.differentiable
                 if args[k].__class__ is Tensor and args[k]._fw_grad is not None)


def _raw_tangents(backend, args, active, dtype, shape):
    """The active inputs' tangents as the kernel reads them: the op's dtype, its shape."""
    raw = []
    for k in active:
        t = args[k]._fw_grad._data
        if t.dtype != dtype:
            t = backend.cast(t, dtype)
        raw.append(t if t.shape == shape else backend.broadcast_to(t, shape))
    return raw


def _apply_dual(row, plan, args, raw, shape, active):
    backend, np_dtype = plan.backend, plan.out_np
    if np_dtype.kind != "f":  # a comparison: no tangent
        return _result(plan, row, args, plan.run(shape, np_dtype, raw))
    raw = _broadcast(backend, raw, shape)
    out, tangent = backend.empty(shape, np_dtype), backend.empty(shape, np_dtype)
    backend.elementwise_jvp(row, active, out, tangent, raw,
                            _raw_tangents(backend, args, active, np_dtype, shape))
    result = _result(plan, row, args, out)
    dual.set_tangent(result, Tensor._wrap(tangent, plan.out_dtype, backend))
    return result


_new = object.__new__


def _fast_set_up(plan, shape, args):
    """Does PyTorch's TensorIterator take its fast_set_up (C order for
    C-contiguous inputs)? Not with a wrapped number nor with broadcasting."""
    return not plan.wrapped_numbers and all(
        a._data.shape == shape for a in args if isinstance(a, Tensor))


def _strided_output(plan, shape, args, raw):
    """The op's result in the layout PyTorch's TensorIterator gives it when
    an input is not C-contiguous: it follows the inputs' strides."""
    tensors = [(k, a) for k, a in enumerate(args) if isinstance(a, Tensor)]
    arrays = [a._data for _, a in tensors]
    # PyTorch's CPU TensorIterator casts an input of another dtype first (masks
    # stay bool); on the GPU it casts inside the kernel: the inputs' own layouts count.
    casts = ([plan.convert[k] is not None for k, _ in tensors] if plan.backend.name == "cpu"
             else ())
    strides = layout.elementwise_strides(shape, arrays, numbers=plan.wrapped_numbers, casts=casts)
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
    backend, dtype, out_dtype, shape, raw, _ = _prepare(row, args)
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
    kernel = lambda: backend.elementwise_forward(row, out, raw)  # noqa: E731
    active = _with_tangents(row, args) if dual.LEVEL is not None else ()
    if active and out.dtype.kind == "f":  # forward mode: the tangent written alongside
        kernel = _in_place_dual(row, self, args, out, raw, active, backend)
    return mutation.write(
        self, op_name or row.name + "_",
        kernel=kernel,
        make_node=lambda: ElementwiseBackward.record(row, args, dtype, backend, inplace=True,
                                                     title=title),
        others_require_grad=others_require_grad, checked=True)


def _in_place_dual(row, self, args, out, raw, active, backend):
    """The kernel of an in-place row under forward mode: value into ``self``
    and tangent into ``self``'s tangent (in place, so its views' tangents see
    it; a new one where ``self`` had none, or one of another dtype)."""
    tangents = _raw_tangents(backend, args, active, out.dtype, out.shape)
    own = self._fw_grad
    if own is not None and own._data.dtype == out.dtype:
        tangent = own
    else:
        tangent = Tensor._wrap(backend.empty(out.shape, out.dtype), self.dtype, backend)

    def kernel():
        backend.elementwise_jvp(row, active, out, tangent._data, raw, tangents)
        dual.set_tangent(self, tangent)
    return kernel


def _function_for(row):
    """What calling ``row`` runs: its straight-line function where the row
    qualifies (straight_line builds on this module), else ``apply``."""
    from . import straight_line
    if straight_line.supported(row):
        return straight_line.function(row)
    return lambda *args: apply(row, args)


Row.function_for = staticmethod(_function_for)
Row.apply_inplace = staticmethod(apply_inplace)
