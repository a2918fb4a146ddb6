"""The tape: graph nodes, saved tensors, version counters, the backward
engine and grad modes. It works on backend arrays and knows nothing of
Numba or of Tensor (the Tensor layer adapts hooks when they are registered)."""
