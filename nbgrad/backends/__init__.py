"""Compute backends. A backend works on raw arrays and knows nothing of autograd."""


def require_backend(device_type):
    """The backend module for a device type, or a RuntimeError saying why not."""
    if device_type == "cpu":
        from . import cpu
        return cpu
    raise RuntimeError(f"nbgrad has no '{device_type}' backend in this version: "
                       "tensors can live on the CPU only")
