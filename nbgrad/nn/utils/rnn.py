"""Variable-length sequences, as ``torch.nn.utils.rnn``: ``PackedSequence``,
``pack_padded_sequence``, ``pad_packed_sequence``, ``pad_sequence``,
``pack_sequence``, ``unpad_sequence``, ``unpack_sequence``.

Packing and padding are written with differentiable slices, ``cat`` and
``stack`` (gradients flow back to the padded input; the node names are those
ops', not PyTorch's ``PackPaddedSequenceBackward``). Lengths and batch sizes
are int64 tensors on the CPU, as in PyTorch."""
import collections
import collections.abc

from ... import creation, dtypes
from ...ops.registry import FUNCTIONS
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

PackedSequence_ = collections.namedtuple(
    "PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def _cat(tensors, dim):
    return FUNCTIONS["cat"](tensors, dim)  # nbgrad.cat: as bound, with its tangent rule


def _stack(tensors, dim):
    return FUNCTIONS["stack"](tensors, dim)


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """PackedSequence(data, batch_sizes, sorted_indices=None, unsorted_indices=None)

    A batch of sequences of different lengths, packed time step after time
    step: ``data`` holds step 0 of every sequence (longest first), then step 1
    of those that have one, ...; ``batch_sizes[t]`` how many sequences have a
    step ``t``. Made by ``pack_padded_sequence`` / ``pack_sequence``."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        else:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data):
        """``self`` itself when ``data`` is its data, else the same packing of
        ``data`` with the indices on ``data``'s device (``batch_sizes`` stays
        on the CPU)."""
        if data is self.data:
            return self
        sorted_indices = _bind(self.sorted_indices, lambda t: t.to(data.device))
        unsorted_indices = _bind(self.unsorted_indices, lambda t: t.to(data.device))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """to(*args, **kwargs) -> PackedSequence

        ``data`` moved or cast as ``Tensor.to`` does; ``self`` when nothing changes."""
        return self._with_data(self.data.to(*args, **kwargs))

    def cuda(self, device=None):
        """``data`` on the CUDA device (``self`` when it is there already)."""
        return self._with_data(self.data.cuda(device))

    def cpu(self):
        """``data`` on the CPU (``self`` when it is there already)."""
        return self._with_data(self.data.cpu())

    def pin_memory(self):
        """``self``: nbgrad's host memory is not pinned (``is_pinned()`` is False)."""
        return self

    def double(self):
        return self.to(dtype=dtypes.float64)

    def float(self):
        return self.to(dtype=dtypes.float32)

    def half(self):
        return self.to(dtype=dtypes.float16)

    def long(self):
        return self.to(dtype=dtypes.int64)

    def int(self):
        return self.to(dtype=dtypes.int32)

    def short(self):
        return self.to(dtype=dtypes.int16)

    def char(self):
        return self.to(dtype=dtypes.int8)

    def byte(self):
        return self.to(dtype=dtypes.uint8)

    @property
    def is_cuda(self):
        return self.data.device.type == "cuda"

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The inverse of the permutation ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    order = [int(i) for i in permutation.tolist()]
    inverse = [0] * len(order)
    for position, index in enumerate(order):
        inverse[index] = position
    return creation.tensor(inverse, dtype=permutation.dtype, device=permutation.device)


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.reshape(-1).tolist()]
    return [int(v) for v in lengths]


def _select(input, dim, indices):
    """``input.index_select(dim, indices)`` for a short list of Python ints."""
    return input.index_select(dim, creation.tensor(indices, dtype=dtypes.int64,
                                                   device=input.device))


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True) -> PackedSequence

    Pack a padded batch ``input`` (``T x B x *``, or ``B x T x *`` with
    ``batch_first``) of sequences of ``lengths`` (a list or a 1-D tensor).
    With ``enforce_sorted`` the lengths must be decreasing; otherwise they
    are sorted here and the order is kept in ``sorted_indices``."""
    lengths = _lengths_list(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])  # stable, as torch.sort
        lengths = [lengths[i] for i in order]
        sorted_indices = creation.tensor(order, dtype=dtypes.int64, device=input.device)
        input = _select(input, 0 if batch_first else 1, order)
    if batch_first:
        input = input.transpose(0, 1)
    batch_size = input.shape[1]
    if len(lengths) != batch_size:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch_size})")
    if any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability.")
    if lengths and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if lengths and lengths[0] > input.shape[0]:
        raise RuntimeError(f"a sequence length ({lengths[0]}) is longer than the padded input "
                           f"({input.shape[0]} steps)")
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(lengths[0] if lengths else 0)]
    data = _cat([input[t, :b] for t, b in enumerate(batch_sizes)], 0)
    return PackedSequence(data, creation.tensor(batch_sizes, dtype=dtypes.int64),
                          sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None)
    -> (Tensor, Tensor)

    The inverse of ``pack_padded_sequence``: the padded batch (``T x B x *``,
    ``T`` the longest length or ``total_length``) and the lengths (int64, in
    the original order)."""
    batch_sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    batch = batch_sizes[0] if batch_sizes else 0
    tail = tuple(data.shape[1:])
    steps, offset = [], 0
    for b in batch_sizes:
        step = data[offset:offset + b]
        offset += b
        if b < batch:
            step = _cat([step, creation.full((batch - b,) + tail, padding_value,
                                             dtype=data.dtype, device=data.device)], 0)
        steps.append(step)
    for _ in range(max_seq_length - len(batch_sizes)):
        steps.append(creation.full((batch,) + tail, padding_value, dtype=data.dtype,
                                   device=data.device))
    padded = _stack(steps, 0)
    lengths = [sum(1 for b in batch_sizes if b > i) for i in range(batch)]
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths_t = creation.tensor(lengths, dtype=dtypes.int64)
    if sequence.unsorted_indices is not None:
        order = [int(i) for i in sequence.unsorted_indices.tolist()]
        padded = _select(padded, 0 if batch_first else 1, order)
        lengths_t = creation.tensor([lengths[i] for i in order], dtype=dtypes.int64)
    return padded, lengths_t


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side='right') -> Tensor

    Stack sequences of different lengths (``L_i x *``) into ``T x B x *`` (or
    ``B x T x *``), padded with ``padding_value`` on ``padding_side``."""
    if not isinstance(sequences, collections.abc.Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = max_len - s.shape[0]
        if missing:
            pad = creation.full((missing,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype,
                                device=s.device)
            s = _cat([s, pad] if padding_side == "right" else [pad, s], 0)
        padded.append(s)
    return _stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """unpad_sequence(padded_sequences, lengths, batch_first=False) -> list of Tensors

    The sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(padded_sequences, _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """pack_sequence(sequences, enforce_sorted=True) -> PackedSequence

    ``pack_padded_sequence(pad_sequence(sequences), lengths)``."""
    lengths = [v.shape[0] for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """unpack_sequence(packed_sequences) -> list of Tensors: the sequences of a packing."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
