"""``Flatten`` and ``Unflatten``."""
from .module import Module


class Flatten(Module):
    """Flattens dims ``start_dim..end_dim`` (by default all but the batch dim)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        ndim = input.ndim
        for d in (self.start_dim, self.end_dim):
            if not -max(ndim, 1) <= d < max(ndim, 1):
                raise IndexError(f"{self._get_name()}({self.extra_repr()}): dimension {d} out of "
                                 f"range for input of shape {list(input.shape)}")
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dimension ``dim`` into ``unflattened_size``."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError("unflattened_size must be tuple of ints, but found element of "
                                f"type {type(elem).__name__} at pos {idx}")
        self.dim = dim
        self.unflattened_size = unflattened_size  # kept as given: its repr is PyTorch's

    def forward(self, input):
        dim = input._dim(self.dim)
        shape = tuple(input.shape)
        return input.reshape(shape[:dim] + tuple(self.unflattened_size) + shape[dim + 1:])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
