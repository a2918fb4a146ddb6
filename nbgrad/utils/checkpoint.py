"""Activation checkpointing (``torch.utils.checkpoint``): ``checkpoint`` and
``checkpoint_sequential`` trade compute for memory. The checkpointed
function's forward keeps none of the tensors its ops save for backward; the
first backward step that needs one runs the function again and takes them
from that run.

``use_reentrant=False`` (recommended, as in PyTorch) works through
saved-tensor hooks: in the forward each saved tensor is replaced by an empty
holder; unpacking a holder recomputes the function under hooks that fill
every live holder, in order, and stops as soon as the last one is filled
(``early_stop``). ``use_reentrant=True`` runs the forward without recording
and, at backward, runs the function again and a backward through it (not
with ``autograd.grad`` or ``backward(inputs=...)``). Either way the random
state nbgrad's generator had at the forward is restored for the
recomputation (``preserve_rng_state``), so dropout draws the same mask.
"""
import contextlib
import warnings
import weakref

from .. import creation
from ..backends import backend_of
from ..tape import grad_mode
from ..tape.graph import SavedTensor
from ..tensor import Tensor
from ..autograd.graph import saved_tensors_hooks
from ..gradients import backward as _backward
from .hooks import gather_gradients

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "noop_context_fn",
           "detach_variable"]


class CheckpointError(RuntimeError):
    """A recomputation that does not reproduce the forward's saved tensors."""


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """detach_variable(inputs) -> tuple

    ``inputs`` with each tensor replaced by a detached alias that requires
    grad as the tensor does."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


# ------------------------------------------------------------ random state
def _rng_state():
    """The state of nbgrad's generator (every random op draws from it)."""
    return creation._generator.bit_generator.state


@contextlib.contextmanager
def _forked_rng(state, enabled):
    """Run with the generator at ``state``, then put back the state it had."""
    if not enabled:
        yield
        return
    generator = creation._generator
    before = generator.bit_generator.state
    generator.bit_generator.state = state
    try:
        yield
    finally:
        creation._generator.bit_generator.state = before


# ------------------------------------------------------------ non-reentrant
_DEBUG_TIP = ("\nTip: nbgrad's checkpoint has no debug mode; compare the shapes, dtypes and "
              "devices the checkpointed function saves in its two runs.")


def _metadata(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


class _StopRecomputation(Exception):
    """Raised in the recomputation once every live holder is filled."""


class _Holder:
    """What the graph keeps in place of a tensor saved in the checkpointed
    forward: the recomputed tensor goes here."""

    __slots__ = ("value", "__weakref__")

    def __init__(self):
        self.value = None


class _Frame:
    """One checkpointed call: its inputs (saved as the tape saves tensors, so
    an in-place write to one since the forward is caught), its holders in
    the order the forward saved them, and their metadata."""

    def __init__(self, fn, args, kwargs, rng_state, preserve, early_stop, check):
        self.fn, self.kwargs = fn, kwargs
        self.args = [SavedTensor(a) if isinstance(a, Tensor) else a for a in args]
        self.rng_state, self.preserve = rng_state, preserve
        self.early_stop, self.check = early_stop, check
        self.holders = []  # weak references, in the forward's order
        self.metadata = []
        self.count = 0  # tensors saved so far by the running recomputation

    def inputs(self):
        return [a.to_tensor(a, None) if a.__class__ is SavedTensor else a for a in self.args]

    def pack(self, x):
        holder = _Holder()
        self.holders.append(weakref.ref(holder))
        if self.check:
            self.metadata.append(_metadata(x))
        return holder

    def unpack(self, holder):
        # The recomputed tensor stays in its holder until the node that saved
        # it frees its saved values (after it ran, unless the graph is
        # retained: then a second backward reuses it rather than recompute).
        if holder.value is None:
            self.recompute()
        return holder.value

    def recompute(self):
        """Run the function again (grad mode on, the forward's random state)
        and fill every live holder with the tensor saved in its place."""
        self.count = 0
        args = self.inputs()
        try:
            with _forked_rng(self.rng_state, self.preserve), grad_mode.enable_grad(), \
                    saved_tensors_hooks(self.pack_recomputed, self.unpack_recomputed):
                self.fn(*args, **self.kwargs)
        except _StopRecomputation:
            pass
        self.check_recomputed()

    def pack_recomputed(self, x):
        index = self.count
        self.count += 1
        if index >= len(self.holders):
            raise CheckpointError("nbgrad.utils.checkpoint: trying to save more tensors during "
                                  "recomputation than during the original forward pass.\n"
                                  + _DEBUG_TIP)
        holder = self.holders[index]()
        if holder is not None:  # else its node is gone: nothing needs it
            if self.check and _metadata(x) != self.metadata[index]:
                raise CheckpointError(
                    "nbgrad.utils.checkpoint: Recomputed values for the following tensors have "
                    "different metadata than during the forward pass.\n"
                    f"tensor at position {index}:\nsaved metadata: {self.metadata[index]}\n"
                    f"recomputed metadata: {_metadata(x)}\n.\n" + _DEBUG_TIP)
            holder.value = x.detach()
        if self.early_stop and self.count == len(self.holders):
            raise _StopRecomputation
        return None  # the recomputation's own graph is never run

    @staticmethod
    def unpack_recomputed(_):
        raise CheckpointError("nbgrad.utils.checkpoint: a backward ran through the graph of a "
                              "recomputation; nothing was saved for it.")

    def check_recomputed(self):
        if self.count != len(self.holders):
            raise CheckpointError(
                "nbgrad.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.holders)}\n"
                f"Number of tensors saved during recomputation: {self.count}.\n" + _DEBUG_TIP)


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, early_stop,
                                  args, kwargs):
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if not grad_mode.is_grad_enabled():
        return function(*args, **kwargs)
    forward_context, recompute_context = context_fn()
    frame = _Frame(function, args, kwargs, _rng_state() if preserve else None, preserve,
                   early_stop, determinism_check == "default")

    def recompute_in_context(*a, **kw):
        with recompute_context:
            return function(*a, **kw)
    frame.fn = recompute_in_context
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return function(*args, **kwargs)


# ------------------------------------------------------------ reentrant
def _checkpoint_reentrant(function, preserve, args):
    """Forward without recording; at backward, the function again (with the
    forward's random state) on detached inputs, and a backward through it."""
    if not any(a.requires_grad for a in args if isinstance(a, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=3)
    rng_state = _rng_state() if preserve else None
    saved = [SavedTensor(a) if isinstance(a, Tensor) else a for a in args]
    with grad_mode.no_grad():
        outputs = function(*args)
    single = isinstance(outputs, Tensor)
    results = (outputs,) if single else tuple(outputs)
    tensors = [k for k, o in enumerate(results) if isinstance(o, Tensor)]
    sources = [a for a in args if isinstance(a, Tensor)]
    if not grad_mode.is_grad_enabled() or not any(t.requires_grad for t in sources):
        return outputs

    def backward_of(grads):
        if grad_mode.is_partial_backward():
            raise RuntimeError(
                "When use_reentrant=True, nbgrad.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the `inputs` "
                "argument.")
        inputs = [a.to_tensor(a, None) if a.__class__ is SavedTensor else a for a in saved]
        with _forked_rng(rng_state, preserve):
            detached = detach_variable(tuple(inputs))
            with grad_mode.enable_grad():
                again = function(*detached)
        again = (again,) if isinstance(again, Tensor) else tuple(again)
        pairs = [(again[k], g) for k, g in zip(tensors, grads)
                 if isinstance(again[k], Tensor) and again[k].requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        graph = any(isinstance(g, Tensor) for _, g in pairs)  # (not differentiable again)
        _backward([o for o, _ in pairs], [g if isinstance(g, Tensor) else
                                         Tensor._wrap(g, backend=backend_of(g)) for _, g in pairs])
        return [None if d.grad is None else d.grad if graph else d.grad._data
                for d in detached if isinstance(d, Tensor)]

    # The inputs saved are freed with the node: a second backward raises, as in PyTorch.
    aliases = gather_gradients([results[k] for k in tensors], backward_of, sources=sources,
                               saved=[s for s in saved if s.__class__ is SavedTensor])
    out = list(results)
    for k, alias in zip(tensors, aliases):
        out[k] = alias
    return out[0] if single else type(outputs)(out) if isinstance(outputs, tuple) else out


# ------------------------------------------------------------ public API
_USE_REENTRANT_WARNING = (
    "nbgrad.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
    determinism_check="default", debug=False, early_stop=True, preserve_rng_state=True, **kwargs)

    ``function(*args, **kwargs)``, keeping none of the tensors it saves for
    backward: backward runs it again to get them (see the module's doc).
    ``use_reentrant`` should be given (as in PyTorch 2.13, leaving it out
    warns and means True). ``preserve_rng_state``: restore the random state
    of the forward for the recomputation. ``context_fn()`` returns two context
    managers, for the forward and for the recomputation (non-reentrant only).
    ``determinism_check``: "default" compares the shapes, dtypes and devices
    the two runs save; "none" does not. ``early_stop``: stop recomputing once
    every needed tensor is back."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if debug:
        raise ValueError("debug=True: nbgrad's checkpoint has no debug mode")
    if use_reentrant:
        if context_fn is not noop_context_fn:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return _checkpoint_reentrant(function, preserve, args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         early_stop, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs)

    Run ``functions`` (a list of callables, or an ``nn.Sequential``) one
    after the other on ``input``, in ``segments`` chunks, each but the last
    checkpointed."""
    if use_reentrant is None:
        warnings.warn(
            "nbgrad.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
            "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
            "passed. use_reentrant=False is recommended, but if you need to preserve the current "
            "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
            "the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if hasattr(functions, "children") and hasattr(functions, "_modules"):  # nn.Sequential
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
