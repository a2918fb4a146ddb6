"""Differentiable collectives (``torch.distributed.nn``): ``functional``."""
from . import functional  # noqa: F401
from .functional import all_gather, all_reduce, broadcast, reduce_scatter  # noqa: F401
