"""Optimizers, as ``torch.optim``: each parameter update is one fused Numba kernel."""
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
