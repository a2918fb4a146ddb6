"""``nbgrad.linalg``: PyTorch's ``torch.linalg`` namespace, as far as nbgrad
has it. Norms (``vector_norm``, ``matrix_norm``, ``norm``) run on every
device; ``inv``, ``det``, ``solve``, ``svd`` and ``svdvals`` (and the matrix
norms 'nuc', 2 and -2, which take singular values) use NumPy's LAPACK on the
host (CUDA tensors are staged through host memory and their results copied
back), with gradients and PyTorch's errors (``LinAlgError``, a RuntimeError,
for a singular matrix, or a NaN given to the SVD)."""
from .ops.linalg_dense import LinAlgError, det, inv, solve
from .ops.linalg_dense import linalg_svd as svd
from .ops.linalg_dense import linalg_svdvals as svdvals
from .ops.statistics import linalg_norm as norm
from .ops.statistics import matrix_norm, vector_norm
from .ops.products import linalg_cross_function as cross  # issue 15 item 6

__all__ = ["LinAlgError", "cross", "det", "inv", "matrix_norm", "norm", "solve", "svd",
           "svdvals", "vector_norm"]
