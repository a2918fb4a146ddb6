"""Thread-local grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``."""
import functools
import inspect
import threading


class _GradState(threading.local):
    enabled = True


_state = _GradState()


def is_grad_enabled():
    return _state.enabled


class _GradModeContext:
    """Base for the grad-mode switches: usable with ``with`` and as a decorator."""

    mode = True

    def __enter__(self):
        self._previous = _state.enabled
        _state.enabled = self.mode

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
        _state.enabled = self.mode

    def __enter__(self):
        pass

    def _args(self):
        return (self.mode,)

    def __call__(self, fn):
        _state.enabled = self._previous  # decorating must not switch the mode now
        return super().__call__(fn)
