"""Neural network layers, losses and the Module system, as ``torch.nn``."""
from . import functional, init
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv2d
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module
from .parameter import Parameter
from .pooling import AvgPool2d, MaxPool2d

__all__ = ["Module", "Parameter", "Linear", "Identity", "Conv2d", "MaxPool2d", "AvgPool2d",
           "Flatten", "Unflatten", "ReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "LogSoftmax",
           "Dropout", "Sequential", "ModuleList", "ModuleDict", "MSELoss", "NLLLoss",
           "CrossEntropyLoss", "BCEWithLogitsLoss", "functional", "init"]
