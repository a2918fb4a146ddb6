"""Anomaly detection (``torch.autograd.anomaly_mode``): ``detect_anomaly``,
``set_detect_anomaly``.

In anomaly mode every node records where it was made (the user's file:line
and the forward's stack outside nbgrad); a backward step that raises warns
with that stack first, and with ``check_nan`` a step that returns NaN raises
``RuntimeError: Function 'XBackward' returned nan values in its 0th output.``
nbgrad's message goes on to name the forward op and the line that called it.
The mode is process-wide, as PyTorch's; off, it costs one attribute load per
node made and per backward call.
"""
import functools
import inspect
import warnings

from ..tape.grad_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]


class _AnomalyContext:
    """What both switches share: restore the previous mode on exit; usable as
    a decorator (PyTorch 2.13's ``detect_anomaly`` is not callable: here it is)."""

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)
        return False

    def __call__(self, fn):
        if not callable(fn):
            raise TypeError(f"'{type(self).__name__}' object is not callable")
        args = self._args()
        if inspect.isgeneratorfunction(fn):
            raise TypeError(f"{type(self).__name__} cannot decorate a generator function")

        @functools.wraps(fn)
        def wrapper(*a, **kw):
            with warnings.catch_warnings():  # the decorator warns once, when applied
                warnings.simplefilter("ignore", UserWarning)
                context = type(self)(*args)
            with context:
                return fn(*a, **kw)
        return wrapper


class detect_anomaly(_AnomalyContext):
    """detect_anomaly(check_nan=True)

    Context manager (and decorator) that turns anomaly detection on: nodes
    made inside record the forward's stack, which a failing backward step
    shows in a warning; with ``check_nan`` a backward step that returns NaN
    raises. Slows the program down: for debugging only."""

    def __init__(self, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def _args(self):
        return (self.check_nan,)


class set_detect_anomaly(_AnomalyContext):
    """set_detect_anomaly(mode, check_nan=True)

    Turn anomaly detection on or off, at once (a function call) or for a
    ``with`` block (restored on exit)."""

    def __init__(self, mode, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        self.mode, self.check_nan = mode, check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def _args(self):
        return (self.mode, self.check_nan)

    def __call__(self, fn):
        set_anomaly_enabled(self.prev, self.prev_check_nan)  # decorating must not switch it now
        return super().__call__(fn)
