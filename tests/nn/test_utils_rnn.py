"""nn.utils.rnn against torch.nn.utils.rnn: pad_sequence, pack_padded_sequence
(enforce_sorted, batch_first), pad_packed_sequence (total_length),
pack_sequence, unpad/unpack_sequence, PackedSequence, gradients and errors."""
import numpy as np
import pytest
import torch

import nbgrad
from nbgrad.nn.utils import rnn
from torch.nn.utils import rnn as trnn


def _seqs(lengths, feature=(2,), seed=0):
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal((n,) + feature) for n in lengths]
    return ([nbgrad.tensor(v, requires_grad=True) for v in values],
            [torch.tensor(v, requires_grad=True) for v in values])


def _same(ours, theirs):
    np.testing.assert_array_equal(ours.detach().cpu().numpy(), theirs.detach().numpy())
    assert ours.dtype.numpy == theirs.detach().numpy().dtype


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, padding_side):
    ours, theirs = _seqs([2, 4, 1], feature=(3,))
    out = rnn.pad_sequence(ours, batch_first=batch_first, padding_value=-1.5,
                           padding_side=padding_side)
    expected = trnn.pad_sequence(theirs, batch_first=batch_first, padding_value=-1.5,
                                 padding_side=padding_side)
    _same(out, expected)
    weights = np.arange(expected.numel()).reshape(tuple(expected.shape))
    (out * nbgrad.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for a, b in zip(ours, theirs):
        _same(a.grad, b.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths, enforce_sorted", [([4, 2, 2, 1], True), ([1, 4, 2, 3], False),
                                                     ([3, 3, 1, 1], False)])
def test_pack_and_pad_round_trip_matches_torch(lengths, enforce_sorted, batch_first):
    ours, theirs = _seqs(lengths)
    padded = rnn.pad_sequence(ours, batch_first=batch_first)
    tpadded = trnn.pad_sequence(theirs, batch_first=batch_first)
    tlengths = torch.tensor(lengths)
    packed = rnn.pack_padded_sequence(padded, nbgrad.tensor(lengths) if enforce_sorted else lengths,
                                      batch_first=batch_first, enforce_sorted=enforce_sorted)
    tpacked = trnn.pack_padded_sequence(tpadded, tlengths, batch_first=batch_first,
                                        enforce_sorted=enforce_sorted)
    assert isinstance(packed, rnn.PackedSequence) and isinstance(packed, tuple)
    assert packed._fields == tpacked._fields
    _same(packed.data, tpacked.data)
    _same(packed.batch_sizes, tpacked.batch_sizes)
    for name in ("sorted_indices", "unsorted_indices"):
        a, b = getattr(packed, name), getattr(tpacked, name)
        assert (a is None) == (b is None)
        if a is not None:
            _same(a, b)
    out, out_lengths = rnn.pad_packed_sequence(packed, batch_first=batch_first, padding_value=7.0,
                                               total_length=6)
    tout, tout_lengths = trnn.pad_packed_sequence(tpacked, batch_first=batch_first,
                                                  padding_value=7.0, total_length=6)
    _same(out, tout)
    _same(out_lengths, tout_lengths)
    weights = np.arange(tout.numel(), dtype=np.float64).reshape(tuple(tout.shape))
    (out * nbgrad.tensor(weights)).sum().backward()
    (tout * torch.tensor(weights)).sum().backward()
    for a, b in zip(ours, theirs):
        _same(a.grad, b.grad)
    for a, b in zip(rnn.unpack_sequence(packed), trnn.unpack_sequence(tpacked)):
        _same(a, b)
    for a, b in zip(rnn.unpad_sequence(out, out_lengths, batch_first=batch_first),
                    trnn.unpad_sequence(tout.clone(), tout_lengths, batch_first=batch_first)):
        _same(a, b)


def test_pack_sequence_and_packed_sequence_methods():
    ours, theirs = _seqs([3, 1, 2])
    packed = rnn.pack_sequence(ours, enforce_sorted=False)
    tpacked = trnn.pack_sequence(theirs, enforce_sorted=False)
    _same(packed.data, tpacked.data)
    as_float = packed.float()
    assert as_float.data.dtype == nbgrad.float32 and as_float.batch_sizes is packed.batch_sizes
    assert packed.to(nbgrad.float64) is packed and not packed.is_cuda
    assert packed.cpu() is packed and packed.pin_memory() is packed and not packed.is_pinned()
    for method in ("double", "float", "half", "long", "int", "short", "char", "byte"):
        ours, theirs = getattr(packed, method)(), getattr(tpacked, method)()
        _same(ours.data, theirs.data)
        _same(ours.unsorted_indices, theirs.unsorted_indices)
    data, batch_sizes, sorted_indices, unsorted_indices = packed  # a named tuple's fields
    assert data is packed.data and unsorted_indices is packed.unsorted_indices
    assert rnn.invert_permutation(None) is None
    _same(rnn.invert_permutation(nbgrad.tensor([2, 0, 1])),
          trnn.invert_permutation(torch.tensor([2, 0, 1])))


@pytest.mark.parametrize("case", [
    lambda r, t: r.pack_padded_sequence(t.zeros(4, 3, 2), [2, 3, 1]),
    lambda r, t: r.pack_padded_sequence(t.zeros(4, 3, 2), [3, 2]),
    lambda r, t: r.pack_padded_sequence(t.zeros(4, 3, 2), [3, 1, 0]),
    lambda r, t: r.pad_packed_sequence(r.pack_padded_sequence(t.zeros(4, 3, 2), [3, 2, 1]),
                                       total_length=2),
    lambda r, t: r.pad_sequence([t.ones(2, 3)], padding_side="middle"),
    lambda r, t: r.pad_sequence([]),
    lambda r, t: r.pad_sequence(3),
])
def test_errors_match_torch(case):
    with pytest.raises(Exception) as expected:
        case(trnn, torch)
    with pytest.raises(expected.type) as actual:
        case(rnn, nbgrad)
    assert str(actual.value) == str(expected.value)


def test_on_the_device(device):
    ours, theirs = _seqs([3, 1, 2])
    ours = [s.detach().to(device) for s in ours]
    packed = rnn.pack_sequence(ours, enforce_sorted=False)
    tpacked = trnn.pack_sequence(theirs, enforce_sorted=False)
    assert packed.data.device.type == device and packed.batch_sizes.device.type == "cpu"
    _same(packed.data, tpacked.data)
    out, lengths = rnn.pad_packed_sequence(packed, batch_first=True)
    tout, tlengths = trnn.pad_packed_sequence(tpacked, batch_first=True)
    _same(out, tout)
    _same(lengths, tlengths)
    on_host = packed.cpu()
    assert (on_host is packed) == (device == "cpu") and not on_host.is_cuda
    assert on_host.batch_sizes is packed.batch_sizes
    assert on_host.sorted_indices.device.type == on_host.unsorted_indices.device.type == "cpu"
    _same(on_host.data, tpacked.data)
    back = on_host.to(device)
    assert back.is_cuda == (device == "cuda") and back.unsorted_indices.device.type == device
    assert (on_host.cuda().is_cuda if device == "cuda" else back is on_host)
