"""Thread-local grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``."""
import functools
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
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)
        return wrapper

    def _args(self):
        return ()


class no_grad(_GradModeContext):
    mode = False


class enable_grad(_GradModeContext):
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
