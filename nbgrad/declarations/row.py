"""The row: how an elementwise op is declared.

A row is a scalar forward function plus, for each differentiable input, its
derivative. Parameter names carry meaning: the forward's parameters name the
inputs, and a derivative reads ``g`` (the incoming gradient), ``out`` (the
forward result) and any inputs by name. What a derivative reads is exactly
what the forward saves, so ``mul`` saves the other operand and ``sigmoid`` its
output, as in PyTorch.
"""
import inspect


class FastPath:
    """Cheaper versions of a row's forward and of some derivatives, valid
    while every input they read is within ``abs(x) <= limit`` (sin and cos
    skip their huge-argument reduction there). The CPU kernels check each
    block of elements (nan fails the check) and run these where it passes,
    the row's own functions elsewhere; other backends ignore them. Each takes
    the same parameters as the function it stands in for. ``fits``, a scalar
    predicate of all the row's inputs (false for nan), replaces the limit
    check where validity is not a bound on each input (fmod's: the quotient)."""

    def __init__(self, limit, forward, grads=None, fits=None):
        self.limit = float(limit)
        self.forward = forward
        self.grads = dict(grads or {})
        self.fits = fits

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
        if self.fits is not None and params(self.fits) != row.inputs:
            raise ValueError(f"{row.name}: the fast path's fits must take {row.inputs}")
        for name, fn in self.grads.items():
            if name not in row.inputs or row.derivative(row.inputs.index(name)) is None:
                raise ValueError(f"{row.name}: fast derivative for {name!r}, which has none")
            if params(fn) != row.grad_params(row.inputs.index(name)):
                raise ValueError(f"{row.name}: the fast derivative for {name!r} must read "
                                 f"{row.grad_params(row.inputs.index(name))}")


class Row:
    """One elementwise op, declared: its scalar forward and, per
    differentiable input, the derivative times the incoming gradient ``g``.
    Kernels (forward, fused backward, in-place; CPU and CUDA) are generated
    from it by the backends. Calling a row applies it to tensors: the op
    layer (``nbgrad.ops.elementwise``) binds ``Row.function_for`` and
    ``Row.apply_inplace`` when it is imported; a declaration itself computes
    nothing, and the dispatch caches below are the op layer's."""

    function_for = None  # row -> the function that calling it runs (bound by nbgrad.ops)
    apply_inplace = None  # (row, tensor, args) -> tensor (bound by nbgrad.ops)

    def __init__(self, name, forward, grads=None, *, result="promote", bool_inputs=(),
                 domain=(-2.0, 2.0), method=True, title=None, fast_path=None, check=None,
                 tensors=None, scalars=(), contiguous_with_number=(), wraps_numbers=True,
                 backward_refusal=None):
        """``result``: "promote" (PyTorch's promotion), "float" (integer
        results become float32, as for ``div`` and ``exp``), "bool"
        (comparisons) or "self" (the dtype of the first input, for ``copy_``).
        ``bool_inputs`` are masks kept out of promotion. ``domain`` is where
        tests sample inputs. ``method`` adds ``Tensor.<name>``/``<name>_``.
        ``fast_path``: a ``FastPath`` (cheaper versions for small inputs).
        ``check(args)``: raises PyTorch's error for arguments the op refuses
        (``-`` on bools), given tensors as their dtypes and numbers as they
        are; it returns the positions of the numbers whose values it reads
        (``int_tensor ** -1``), which every call then checks, or None.
        ``tensors``: PyTorch's names of the inputs where its signature takes
        tensors only (``maximum(input, other)``; one-input rows ``input``):
        any other argument is its TypeError. ``scalars``: inputs PyTorch
        takes as a ``Scalar`` (clamp's bounds), where an int in [2**63,
        2**64) must fit an int64 computation; elsewhere it wraps, as
        PyTorch's wrapped numbers do. ``contiguous_with_number``: inputs
        that, given as a number, make the result C-contiguous whatever the
        tensors' layout (PyTorch's ``pow(Scalar, Tensor)``). ``wraps_numbers``:
        PyTorch makes a number argument a 0-d tensor operand (so its
        TensorIterator has no C-order shortcut and size-1 strides count);
        False where it passes numbers to the kernel as Scalars (clamp's
        bounds, ``pow(Tensor, Scalar)``). ``backward_refusal(dtypes, wanted)``:
        PyTorch's error text where its backward formula refuses these input
        dtypes (None for a number) for the inputs ``wanted`` (positions that
        need a gradient), else None; that backward raises it."""
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
        self.tensors = ("input",) if tensors is None and len(self.inputs) == 1 else tensors
        self.scalars = frozenset(self.inputs.index(n) for n in scalars)
        self.contiguous_with_number = tuple(self.inputs.index(n) for n in contiguous_with_number)
        self.wraps_numbers = wraps_numbers
        self.backward_refusal = backward_refusal

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
            spec = self._reads[needed] = BackwardSpec(self, needed)
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
        if call is None:  # made on first use
            call = self._function = Row.function_for(self)
        return call(*args)

    def inplace(self, tensor, *args):
        """``tensor = row(tensor, *args)``, written into ``tensor``'s memory."""
        return Row.apply_inplace(self, tensor, args)

    def __repr__(self):
        return f"<row {self.name}{self.inputs}>"


def elementwise(name, forward, grads=None, **options):
    """Declare a new elementwise op as one row; returns it, ready to call.

    >>> square = nbgrad.elementwise("square", lambda a: a * a, grads={"a": lambda g, a: 2 * g * a})
    >>> square(nbgrad.tensor([3.0], requires_grad=True)).backward()
    """
    return Row(name, forward, grads, **options)


def _is_identity(fn, params):
    if params != ("g",):
        return False
    marker = object()
    try:
        return fn(marker) is marker
    except Exception:  # arithmetic on the marker: not the identity
        return False


class BackwardSpec:
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
