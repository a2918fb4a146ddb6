"""``nn.CosineSimilarity`` and ``nn.PairwiseDistance``, as ``torch.nn``'s."""
from ..ops import distances
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """The cosine similarity of two inputs over ``dim`` (``F.cosine_similarity``)."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return distances.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dimension (``F.pairwise_distance``)."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return distances.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
