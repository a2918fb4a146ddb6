"""Thread-local grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode``; the stack of saved-tensor hooks; anomaly mode (process-wide,
as PyTorch's), and the switches the tape's generated code reads."""
import functools
import inspect
import threading


class _GradState(threading.local):
    enabled = True
    inference = False  # inference mode (which also turns grad mode off)
    saved_hooks = ()  # (pack, unpack) pairs as the tape calls them, innermost last
    hooks_disabled = None  # disable_saved_tensors_hooks's message while it is active
    partial_backward = False  # a backward that runs part of the graph (grad(), inputs=) is on


_state = _GradState()


class _Switches:
    """Process-wide flags read where the tape is written: ``saved_hooks``
    while some thread has saved-tensor hooks, ``inference`` while some thread
    is in inference mode (each then asks its own thread), ``anomaly`` and
    ``check_nan`` (anomaly mode is process-wide, as in PyTorch), ``mutation``
    (``detect_mutation``, process-wide), ``track_saves`` (each storage
    keeps its live saved tensors: on once ``nbgrad.kernel`` is used), and
    ``results``: any of them, the one flag an op result reads (one
    attribute load while all are off). ``mark_inference(t)``: the Tensor
    layer's marking of a result made in inference mode (set by that layer)."""

    __slots__ = ("saved_hooks", "inference", "anomaly", "check_nan", "mutation", "track_saves",
                 "results", "mark_inference")

    def __init__(self):
        self.saved_hooks = self.inference = self.anomaly = self.mutation = False
        self.track_saves = self.results = False
        self.check_nan = True
        self.mark_inference = None

    def update(self):
        self.results = (self.saved_hooks or self.inference or self.anomaly or self.mutation
                        or self.track_saves)


SWITCHES = _Switches()
_active = {"saved_hooks": 0, "inference": 0}  # contexts entered, all threads together
_active_lock = threading.Lock()


def _enter_switch(name, step):
    with _active_lock:
        _active[name] += step
        setattr(SWITCHES, name, _active[name] > 0)
        SWITCHES.update()


def is_grad_enabled():
    return _state.enabled


def is_inference_mode_enabled():
    """is_inference_mode_enabled() -> bool

    Whether inference mode is on in this thread."""
    return _state.inference


def push_saved_hooks(pack, unpack):
    """Make ``(pack, unpack)`` this thread's innermost saved-tensor hooks:
    ``pack(saved, tensor)`` when a value is saved, ``unpack(packed, saved,
    graph)`` when it is read (see ``SavedTensor.unpack``)."""
    if _state.hooks_disabled is not None:
        raise RuntimeError(_state.hooks_disabled)
    _state.saved_hooks = _state.saved_hooks + ((pack, unpack),)
    _enter_switch("saved_hooks", 1)


def pop_saved_hooks():
    _state.saved_hooks = _state.saved_hooks[:-1]
    _enter_switch("saved_hooks", -1)


def current_saved_hooks():
    """This thread's innermost (pack, unpack) pair, or None."""
    hooks = _state.saved_hooks
    return hooks[-1] if hooks else None


def set_saved_hooks_disabled(message):
    """Refuse saved-tensor hooks with ``message`` (None: allow them again);
    returns the previous message. Refused at once while hooks are active."""
    if message is not None and _state.saved_hooks:
        raise RuntimeError(message)
    previous, _state.hooks_disabled = _state.hooks_disabled, message
    return previous


def is_partial_backward():
    """Whether this thread is inside a backward that runs only the part of the
    graph leading to some tensors (``autograd.grad``, ``backward(inputs=)``):
    PyTorch's ``not torch.autograd._is_checkpoint_valid()``."""
    return _state.partial_backward


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn anomaly mode on or off for the whole process (PyTorch's
    ``torch.set_anomaly_enabled``)."""
    with _active_lock:
        SWITCHES.anomaly = bool(enabled)
        SWITCHES.check_nan = bool(check_nan)
        SWITCHES.update()


def set_mutation_detection(enabled):
    """Turn checksums of saved tensors on or off (process-wide); returns the previous setting."""
    with _active_lock:
        previous, SWITCHES.mutation = SWITCHES.mutation, bool(enabled)
        SWITCHES.update()
    return previous


def is_anomaly_enabled():
    return SWITCHES.anomaly


def is_anomaly_check_nan_enabled():
    return SWITCHES.check_nan


class _GradModeContext:
    """Base for the grad-mode switches: usable with ``with`` and as a decorator."""

    mode = True

    def __enter__(self):
        self._previous = _state.enabled
        # Nothing is recorded in inference mode, whatever the grad mode says
        # (PyTorch: its autograd keys stay excluded under enable_grad).
        _state.enabled = self.mode and not _state.inference

    def __exit__(self, *exc):
        _state.enabled = self._previous
        return False

    def __call__(self, fn):
        make = functools.partial(self.__class__, *self._args())
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def generator(*args, **kwargs):
                # Each step of the generator runs in the mode, as in PyTorch.
                gen = fn(*args, **kwargs)
                try:
                    with make():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with make():
                                gen.close()
                            raise
                        except BaseException as error:
                            with make():
                                response = gen.throw(error)
                        else:
                            with make():
                                response = gen.send(request)
                except StopIteration as stop:
                    return stop.value
            return generator

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with make():
                return fn(*args, **kwargs)
        return wrapper

    def _args(self):
        return ()


class _NoParamDecorator(_GradModeContext):
    """Also usable as a bare decorator: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecorator):
    mode = False


class enable_grad(_NoParamDecorator):
    mode = True


class set_grad_enabled(_GradModeContext):
    """Like PyTorch, takes effect at construction so it also works as a call."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._previous = _state.enabled
        _state.enabled = self.mode and not _state.inference

    def __enter__(self):
        pass

    def _args(self):
        return (self.mode,)

    def __call__(self, fn):
        _state.enabled = self._previous  # decorating must not switch the mode now
        return super().__call__(fn)


class inference_mode(_GradModeContext):
    """inference_mode(mode=True)

    Context manager and decorator: inference mode on (``mode=True``) or off.
    In it grad mode is off, and every tensor made is an *inference tensor*:
    it cannot be saved for backward, written in place outside inference mode,
    nor made to require grad there, and it has no version counter. A view of
    an inference tensor is one too. ``inference_mode(False)`` turns grad mode
    on, as PyTorch's does. Thread-local. Also a bare decorator."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # @inference_mode on a function

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self._previous = (_state.enabled, _state.inference)
        _state.enabled, _state.inference = not self.mode, self.mode
        if self.mode:
            _enter_switch("inference", 1)

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self._previous
        if self.mode:
            _enter_switch("inference", -1)
        return False

    def _args(self):
        return (self.mode,)

    def clone(self):
        return self.__class__(self.mode)
