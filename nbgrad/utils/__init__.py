"""Utilities (``torch.utils``): ``checkpoint``, ``hooks``."""
from . import checkpoint, hooks  # noqa: F401
