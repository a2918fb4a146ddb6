"""Optimizers, as ``torch.optim``: each parameter update is one fused kernel of its backend."""
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
