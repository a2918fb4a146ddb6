"""Compute backends. A backend works on raw arrays and knows nothing of autograd."""
import numpy as np


def require_backend(device_type):
    """The backend module for a device type, or a RuntimeError saying why it
    cannot be used (for CUDA: no driver or GPU, or numba-cuda not installed)."""
    if device_type == "cpu":
        from . import cpu
        return cpu
    if device_type == "cuda":
        from . import cuda
        cuda.require()
        return cuda
    raise RuntimeError(f"nbgrad has no '{device_type}' backend")


def for_device(device):
    """The backend for a ``nbgrad.device``; CUDA tensors live on device 0."""
    if device.type == "cuda" and device.index not in (None, 0):
        raise RuntimeError(f"CUDA device {device} is not supported: nbgrad places CUDA tensors "
                           "on device 0 (cuda:0) only")
    return require_backend(device.type)


def backend_of(array):
    """The backend a raw array belongs to."""
    if isinstance(array, (np.ndarray, np.generic)):
        from . import cpu
        return cpu
    from . import cuda
    return cuda
