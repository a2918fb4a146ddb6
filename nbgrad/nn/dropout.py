"""The dropout layers: ``Dropout``, the channel-wise ``Dropout1d/2d/3d`` and the
self-normalizing ``AlphaDropout`` / ``FeatureAlphaDropout``, as ``torch.nn``."""
from . import functional as F
from .module import Module


class _DropoutNd(Module):
    """Common base: ``p`` checked at construction, ``inplace``, and the repr."""

    __constants__ = ["p", "inplace"]

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """In training mode zeroes each element with probability ``p`` and scales
    the rest by ``1/(1-p)``; in eval mode it is the identity."""

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of an :math:`(N, C, L)` or :math:`(C, L)` input
    with probability ``p`` and scales the rest by ``1/(1-p)`` (training mode)."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of an :math:`(N, C, H, W)` input with probability
    ``p`` and scales the rest by ``1/(1-p)`` (training mode)."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of an :math:`(N, C, D, H, W)` or
    :math:`(C, D, H, W)` input with probability ``p`` (training mode)."""

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout (for SELU networks): keeps zero mean and unit variance."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels (for SELU networks)."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
