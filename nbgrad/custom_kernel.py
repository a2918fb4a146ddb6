"""``nbgrad.kernel``: a user's Numba kernel called on tensors, with the
version bookkeeping that in-place ops have."""
from .backends.kernel_writes import written_arguments
from .tape import grad_mode
from .tape.graph import describe, saved_overlapping
from .tensor import Tensor


class kernel:
    r"""kernel(fn) -> callable

    Wraps a Numba kernel (``@numba.njit`` or ``@cuda.jit``) so it can be
    called on tensors: ``nbgrad.kernel(fn)(a, b, out)`` on the CPU,
    ``nbgrad.kernel(fn)[blocks, threads](a, b, out)`` for a CUDA kernel.
    Tensors are passed as their arrays (no copy); other arguments as they are.

    Which arguments the kernel writes is read from its Numba IR once (item
    assignments, ``cuda.atomic`` targets, ``out=`` arguments, and what the
    Numba functions it calls write; see ``nbgrad.backends.kernel_writes``).
    For each tensor written, before the launch the wrapper refuses
    (``RuntimeError``) a write into elements that a tensor saved for a
    backward still to run covers (a disjoint part of the same storage is
    fine), and a write into a tensor that requires grad while grad mode is
    on (the write has no gradient: wrap the kernel in an
    ``autograd.Function`` and ``ctx.mark_dirty`` it). After the launch it
    bumps exactly those tensors' versions, naming the kernel as the in-place
    op in stale-tensor errors. ``writes`` holds the positions found.

    Example::

        >>> @numba.njit
        ... def scale_into(x, factor, out):
        ...     for i in range(x.shape[0]):
        ...         out[i] = x[i] * factor
        >>> nbgrad.kernel(scale_into)(x, 2.0, y)   # bumps y._version only
    """

    def __init__(self, fn, launch=None):
        self.fn = fn
        self.launch = launch
        self.name = getattr(getattr(fn, "py_func", fn), "__name__", "kernel")
        self.writes = frozenset(written_arguments(fn))
        grad_mode.SWITCHES.track_saves = True  # from now on, storages know their saved values
        grad_mode.SWITCHES.update()

    def __getitem__(self, launch):
        """The CUDA kernel with its launch configuration (``[blocks, threads]``)."""
        bound = kernel.__new__(kernel)
        bound.fn, bound.launch, bound.name, bound.writes = self.fn, launch, self.name, self.writes
        return bound

    def __call__(self, *args):
        written = [(k, t) for k, t in enumerate(args) if k in self.writes and isinstance(t, Tensor)]
        for k, t in written:
            self._check_write(k, t)
        arrays = [t._backend.kernel_argument(t._data) if isinstance(t, Tensor) else t for t in args]
        if self.launch is None:
            result = self.fn(*arrays)
        else:
            result = self.fn[self.launch](*arrays)
        for _, t in written:
            t._version_counter.bump(self.name, t._data)
        return result

    def _check_write(self, k, t):
        what = f"{self.name}() writes its argument {k}, {describe(t.shape, t.dtype)},"
        if grad_mode.is_grad_enabled() and t.requires_grad:
            raise RuntimeError(
                f"{what} which requires grad: the write would have no gradient. Call the kernel "
                "inside an autograd.Function (and mark_dirty the tensor), or under no_grad().")
        counter = t._vc
        if counter is not None:
            saved = saved_overlapping(counter, t._data)
            if saved is not None:
                producer = saved.op_name
                which = f" (output 0 of {producer})" if producer else ""
                raise RuntimeError(
                    f"{what} whose elements a tensor saved for backward{which} covers: the "
                    "backward still to run would read the new values, and compute wrong "
                    "gradients. Write into another tensor, or run backward first.")
