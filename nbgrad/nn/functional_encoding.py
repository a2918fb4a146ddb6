"""``F.one_hot``: class indices as one-hot rows."""
from .. import creation, dtypes
from ..tensor import Tensor

__all__ = ["one_hot"]


def one_hot(tensor, num_classes=-1):
    """one_hot(tensor, num_classes=-1) -> LongTensor

    For int64 class indices of shape ``(*)``, a tensor of shape
    ``(*, num_classes)`` with 1 at each index and 0 elsewhere;
    ``num_classes=-1`` takes one more than the largest index."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"one_hot(): argument 'tensor' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    if tensor.dtype is not dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1 and tensor.numel() == 0:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if tensor.numel():
        if tensor.min().item() < 0:
            raise RuntimeError("Class values must be non-negative.")
        largest = tensor.max().item()
        if num_classes == -1:
            num_classes = largest + 1
        elif largest >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes < 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = creation.zeros(*tensor.shape, num_classes, dtype=dtypes.int64, device=tensor.device)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)
