"""Where nbgrad goes past version counters: ``set_version_check`` (which
writes make a saved tensor stale) and ``detect_mutation`` (writes that no
counter sees)."""
from ..tape.grad_mode import SWITCHES, set_mutation_detection
from ..tape.version_counter import get_version_check, set_version_check  # noqa: F401


class detect_mutation:
    r"""Context manager (and global switch) that catches writes to saved
    tensors that bypass version counters.

    While it is on, every tensor saved for backward gets a checksum of its
    elements when it is saved (one compiled pass, on the tensor's device),
    and backward verifies it when it unpacks the tensor. A mismatch raises
    ``RuntimeError`` naming the saved tensor, the node that saved it and the
    forward line that called it, and saying that the write bypassed version
    tracking: through ``.data``, a NumPy, DLPack or
    ``__cuda_array_interface__`` alias, or a kernel. Writes that version
    counters see are reported by the usual stale-tensor error instead.

    ``detect_mutation()`` (or ``detect_mutation(True)``) turns the checks on
    and ``detect_mutation(False)`` off, at once and for every thread; used in
    a ``with`` statement, the previous setting comes back on exit. Saved
    tensors packed by ``saved_tensors_hooks`` are left to those hooks.

    Example::

        >>> with nbgrad.autograd.detect_mutation():
        ...     y = x.exp()
        ...     y.data.add_(1)      # not seen by y's version counter
        ...     y.sum().backward()  # RuntimeError: ... bypassed version tracking
    """

    def __init__(self, mode=True):
        self.mode = bool(mode)
        self.previous = set_mutation_detection(self.mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        set_mutation_detection(self.previous)


def is_mutation_detection_enabled():
    """Whether ``detect_mutation`` is on."""
    return SWITCHES.mutation
