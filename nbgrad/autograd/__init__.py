"""Automatic differentiation (``torch.autograd``): ``backward``, ``grad``,
grad modes, gradcheck, custom ``Function``s."""
from ..gradients import backward, grad
from ..tape.grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa: F401
                              is_inference_mode_enabled, no_grad, set_grad_enabled)
from . import anomaly_mode, graph  # noqa: F401 - torch.autograd.anomaly_mode's, graph's counterparts
from .anomaly_mode import (detect_anomaly, is_anomaly_check_nan_enabled,  # noqa: F401
                           is_anomaly_enabled, set_detect_anomaly)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from . import functional  # noqa: F401 - torch.autograd.functional's counterpart
from . import function  # noqa: F401 - torch.autograd.function's counterpart
from .function import Function
from .mutation_check import (detect_mutation, get_version_check,  # noqa: F401
                             is_mutation_detection_enabled, set_version_check)

__all__ = ["backward", "grad", "gradcheck", "GradcheckError", "gradgradcheck", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled", "Function", "inference_mode", "detect_anomaly",
           "set_detect_anomaly", "detect_mutation", "set_version_check", "get_version_check"]
