"""``torch.utils.dlpack``: DLPack capsules to and from tensors (zero-copy).

Writes through a DLPack alias are not seen by nbgrad's version counters (as
with ``.data``): autograd cannot tell that a tensor it saved was changed that way."""
from ..ops.interop import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
