"""Hook handles and module backward hooks (``torch.utils.hooks``):
``RemovableHandle``, and ``BackwardHook``, which ``Module.__call__`` uses to
call a module's full backward hooks with the gradients of all its inputs and
of all its outputs at once.

The tape's nodes have one output each, so the gradients of several tensors
are gathered by a pair of node kinds (see :func:`gather_gradients`): each
tensor gets a relay node that parks its gradient and passes on a token, and
one join node, which the engine runs once every relay has run (it depends on
them all), hands the parked gradients to a callback and sends what it
returns on to the tensors' histories.
"""
import warnings
import weakref

import numpy as np

from ..backends import backend_of
from ..tape import grad_mode
from ..tape.graph import Node, fill_node, input_meta
from ..tensor import Tensor

__all__ = ["RemovableHandle", "BackwardHook", "gather_gradients"]


class RemovableHandle:
    """RemovableHandle(hooks_dict, *, extra_dict=None)

    A handle that removes the hook it was returned for from ``hooks_dict``
    (and its key from ``extra_dict``, a dict or a list of dicts). Also a
    context manager that removes the hook on exit."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict or ())

    def remove(self):
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            hooks = ref()
            if hooks is not None and self.id in hooks:
                del hooks[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# ------------------------------------------------------------ gathering gradients
class BackwardHookFunctionBackward(Node):
    """Stands for one tensor of a gathered group: parks its gradient in the
    group and sends a token on to the group's join node."""

    __slots__ = ("group", "index")
    op_name = "BackwardHookFunction"

    def backward(self, grad):
        self.group.parked[self.index] = grad
        token = self.group.token
        return [Tensor._wrap(token, backend=self.group.backend) if grad.__class__ is Tensor
                else token]


class _Join(Node):
    """Runs once every relay of its group has (the engine counts them as its
    inputs): the callback turns the parked gradients into the gradients of
    the group's tensors, which go on to their histories."""

    __slots__ = ("group",)
    op_name = "BackwardHookFunction"

    def backward(self, token):
        group = self.group
        parked, group.parked = group.parked, [None] * len(group.parked)
        return group.on_gradients(parked)


class _Group:
    __slots__ = ("parked", "on_gradients", "token", "backend")


def gather_gradients(tensors, on_gradients, sources=None, saved=()):
    """Aliases of ``tensors`` (same memory and version counter) whose
    gradients, once all have arrived in a backward pass, are handed together
    to ``on_gradients(list)`` (an entry per tensor: its gradient, raw array or
    Tensor, or None), which returns the gradients that go on to ``tensors``'
    histories. A tensor that does not require grad gets an alias without one.

    With ``sources``, the aliases stand for outputs computed from ``sources``
    without a history (a reentrant checkpoint): every floating-point one gets
    a history, and ``on_gradients`` returns the gradients of ``sources``.
    ``saved``: SavedTensors ``on_gradients`` reads, freed once it ran
    (unless the graph is retained)."""
    relayed = [t.requires_grad if sources is None else t.dtype.is_floating_point
               for t in tensors]
    group = _Group()
    group.on_gradients = on_gradients
    group.parked = [None] * len(tensors)
    join = _Join(tensors if sources is None else sources)
    join.group = group
    join.saved = tuple(saved)
    group.backend = backend = next(t._backend for t, r in zip(tensors, relayed) if r)
    group.token = backend.zeros((), np.float32)
    token_meta = input_meta(Tensor._wrap(group.token, backend=backend))
    aliases = []
    for i, (t, relay_it) in enumerate(zip(tensors, relayed)):
        alias = Tensor._wrap(t._data, t.dtype, t._backend)
        alias._version_counter = t._version_counter
        if relay_it:
            relay = BackwardHookFunctionBackward.__new__(BackwardHookFunctionBackward)
            fill_node(relay, [join], [token_meta])
            relay.saved = ()
            relay.group, relay.index = group, i
            alias._grad_fn = relay
        aliases.append(alias)
    return aliases


# ------------------------------------------------------------ module backward hooks
def _as_tensors(grads):
    """Gradients as the user's hooks see them: Tensors (or None)."""
    return [g if g is None or g.__class__ is Tensor else Tensor._wrap(g, backend=backend_of(g))
            for g in grads]


def _as_engine(grads, like):
    """What a hook returned, back in the engine's kind (raw arrays unless
    ``like`` holds Tensors: a backward that builds a graph)."""
    graph = any(g.__class__ is Tensor for g in like if g is not None)
    result = []
    for g, old in zip(grads, like):
        if g is None or graph:
            result.append(g)
        elif not isinstance(g, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{type(g).__name__}'")
        else:
            if old is not None and g._data.shape != old.shape:
                raise RuntimeError("hook 'BackwardHook' has changed the size of value")
            result.append(g._data)
    return result


class BackwardHook:
    """A module's full backward hooks and backward pre-hooks for one call:
    ``setup_input_hook(args)`` before ``forward``, ``setup_output_hook(result)``
    after, each returning the aliases the call goes on with. Pre-hooks see
    the gradients of the outputs (and may replace them); full hooks see those
    of the inputs and of the outputs (and may replace the inputs')."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return [values[idx] for idx in indices]

    def _apply_on_tensors(self, on_gradients, args):
        """``args`` with each Tensor replaced by a gathered alias (when one
        requires grad and grad mode is on), and the Tensors' positions."""
        indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in indices]
        if not (any(t.requires_grad for t in tensors) and grad_mode.is_grad_enabled()):
            return args, None
        aliases = gather_gradients(tensors, on_gradients)
        out = list(args)
        for i, alias in zip(indices, aliases):
            out[i] = alias
        return tuple(out), indices

    def setup_input_hook(self, args):
        def on_gradients(grad_inputs):
            if self.grad_outputs is None:
                # The gradient reached the inputs without passing through the
                # outputs (double backward): no hook, as in PyTorch.
                return grad_inputs
            res = self._pack_with_none(self.input_tensors_index, _as_tensors(grad_inputs),
                                       self.n_inputs)
            for hook in self.user_hooks:
                out = hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return _as_engine(self._unpack_none(self.input_tensors_index, res), grad_inputs)

        res, input_idx = self._apply_on_tensors(on_gradients, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args):
        def on_gradients(grad_outputs):
            self.grad_outputs = self._pack_with_none(self.output_tensors_index,
                                                     _as_tensors(grad_outputs), self.n_outputs)
            if self.user_pre_hooks:
                expected_len = len(self.grad_outputs)
                for user_pre_hook in self.user_pre_hooks:
                    hook_grad_outputs = user_pre_hook(self.module, self.grad_outputs)
                    if hook_grad_outputs is None:
                        continue
                    actual_len = len(hook_grad_outputs)
                    if actual_len != expected_len:
                        raise RuntimeError("Backward pre hook returned an invalid number of "
                                           f"grad_output, got {actual_len}, but expected "
                                           f"{expected_len}")
                    self.grad_outputs = hook_grad_outputs
            local_grad_outputs = self.grad_outputs
            if self.input_tensors_index is None:  # no input requires grad: the hooks run now
                warnings.warn("Full backward hook is firing when gradients are computed with "
                              "respect to module outputs since no inputs require gradients. See "
                              "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                              "#torch.nn.Module.register_full_backward_hook for more details.",
                              stacklevel=2)
                grad_inputs = self._pack_with_none([], [], self.n_inputs)
                for user_hook in self.user_hooks:
                    res = user_hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (isinstance(res, tuple)
                                                and all(el is None for el in res)):
                        raise RuntimeError("Backward hook for Modules where no input requires "
                                           "gradient should always return None or None for all "
                                           "gradients.")
                self.grad_outputs = None
            return _as_engine([local_grad_outputs[i] for i in self.output_tensors_index],
                              grad_outputs)

        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, output_idx = self._apply_on_tensors(on_gradients, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return res if is_tuple else res[0]
