"""``torch.backends.cudnn``'s switches, which training scripts set
(``cudnn.benchmark = True``, ``cudnn.deterministic = True``). nbgrad does not
use cuDNN: the switches are accepted and remembered, checked as PyTorch
checks them, and have **no effect** (nbgrad's kernels pick no algorithm by
timing; see ``nbgrad.use_deterministic_algorithms`` for what is deterministic)."""
import contextlib
import sys
import types

_FLAGS = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
_SETTERS = {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
            "deterministic": "set_deterministic_cudnn",
            "allow_tf32": "set_allow_tf32_cublas"}  # (sic: PyTorch's text)


class _CudnnModule(types.ModuleType):
    """The module itself, so that assigning a flag is checked (a bool), as PyTorch's."""

    def __getattr__(self, name):
        if name in _FLAGS:
            return _FLAGS[name]
        raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'")

    def __setattr__(self, name, value):
        if name in _FLAGS:
            if not isinstance(value, bool):
                raise RuntimeError(f"{_SETTERS[name]} expects a bool, but got "
                                   f"{type(value).__name__}")
            _FLAGS[name] = value
            return
        super().__setattr__(name, value)


benchmark_limit = 10


def is_available():
    """is_available() -> bool: False, nbgrad has no cuDNN."""
    return False


def version():
    """version() -> None: no cuDNN."""
    return None


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    """Set the switches inside a ``with`` block (no effect, as the switches themselves)."""
    module = sys.modules[__name__]
    old = dict(_FLAGS), module.benchmark_limit
    module.enabled, module.benchmark, module.deterministic = enabled, benchmark, deterministic
    module.allow_tf32, module.benchmark_limit = allow_tf32, benchmark_limit
    try:
        yield
    finally:
        _FLAGS.update(old[0])
        module.benchmark_limit = old[1]


sys.modules[__name__].__class__ = _CudnnModule
