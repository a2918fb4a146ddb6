"""``nbgrad.linalg``: PyTorch's ``torch.linalg`` namespace, as far as nbgrad
has it. Norms (``vector_norm``, ``matrix_norm``, ``norm``) run on every
device; ``inv``, ``det`` and ``solve`` use NumPy's LAPACK on the host (CUDA
tensors are staged through host memory and their results copied back), with
gradients and PyTorch's errors (``LinAlgError``, a RuntimeError, for a
singular matrix)."""
from .ops.linalg_dense import LinAlgError, det, inv, solve
from .ops.statistics import linalg_norm as norm
from .ops.statistics import matrix_norm, vector_norm
from .ops.products import linalg_cross_function as cross  # issue 15 item 6

__all__ = ["LinAlgError", "cross", "det", "inv", "matrix_norm", "norm", "solve", "vector_norm"]
