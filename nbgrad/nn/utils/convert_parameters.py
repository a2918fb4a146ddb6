"""``parameters_to_vector`` and ``vector_to_parameters``, as
``torch.nn.utils.convert_parameters``."""
from ...ops import joining
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_param_device):
    """The device of the first parameter; TypeError if a later one is elsewhere."""
    device = param.device
    if old_param_device is None:
        return device
    if device != old_param_device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return old_param_device


def parameters_to_vector(parameters):
    """parameters_to_vector(parameters) -> Tensor

    The parameters flattened and concatenated into one vector (differentiable)."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return joining.cat(vec)


def vector_to_parameters(vec, parameters):
    """vector_to_parameters(vec, parameters) -> None

    Slices of ``vec`` become the parameters' data (each slice viewed in its
    parameter's shape)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__module__}."
                        f"{type(vec).__qualname__}" if type(vec).__module__ != "builtins"
                        else f"expected torch.Tensor, but got: {type(vec).__qualname__}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
