"""Utilities (``torch.utils``): ``checkpoint``, ``dlpack``, ``hooks``, ``data``."""
from . import checkpoint, dlpack, hooks  # noqa: F401


def __getattr__(name):
    # ``nbgrad.utils.data`` on first use (it needs the whole package loaded; ``import
    # nbgrad.utils.data`` works as well)
    if name == "data":
        import importlib
        return importlib.import_module(__name__ + ".data")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
