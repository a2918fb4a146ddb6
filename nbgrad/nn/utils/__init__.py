"""Utilities for modules and their parameters, as ``torch.nn.utils``:
gradient clipping, the flat-vector view of parameters and variable-length
sequences (``rnn``) and parametrizations (``parametrize``, ``parametrizations``)."""
from . import parametrizations, parametrize, rnn  # noqa: F401
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,  # noqa: F401
                        clip_grads_with_norm_, get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grads_with_norm_", "clip_grad_value_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters", "rnn",
           "parametrize", "parametrizations"]

# -- weight and spectral normalization (hook-based, as torch.nn.utils)
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402,F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: E402,F401

__all__ += ["weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]
