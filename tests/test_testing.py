"""nbgrad.testing (nbgrad/testing.py) against torch.testing: assert_close
passes and fails on the same inputs, with the same exception type and text;
make_tensor's shape, dtype, device, range and layout."""
import pytest
import torch

import nbgrad
from helpers import assert_same_error

NAN = float("nan")

# fn(lib): a call of lib.testing.assert_close that torch fails
FAILING = [
    lambda L: L.testing.assert_close(L.tensor([1.0, 2, 3]), L.tensor([1.0, 2.5, 3])),
    lambda L: L.testing.assert_close(L.tensor([[1.0, 2], [3, 4]]), L.tensor([[1.0, 2], [3, 5]])),
    lambda L: L.testing.assert_close(L.tensor([1.0, 2.0], dtype=L.float64),
                                     L.tensor([1.0, 2.0 + 5e-7], dtype=L.float64)),
    lambda L: L.testing.assert_close(L.tensor([1, 2, 3]), L.tensor([1, 4, 3])),
    lambda L: L.testing.assert_close(L.tensor([True]), L.tensor([False])),
    lambda L: L.testing.assert_close(L.tensor([0.0, 1.0]), L.tensor([1.0, 0.0])),
    lambda L: L.testing.assert_close(L.tensor([NAN]), L.tensor([NAN])),
    lambda L: L.testing.assert_close(L.tensor([1.0, 2, 3]), L.tensor([1.0, 2, 3], dtype=L.float64)),
    lambda L: L.testing.assert_close(L.tensor([1.0, 2, 3]), L.tensor([1.0, 2])),
    lambda L: L.testing.assert_close(L.tensor([1.0, 2, 3]), L.tensor([1.0, 2.5, 3]),
                                     rtol=0.1, atol=0),
    lambda L: L.testing.assert_close(L.tensor([1.0, 2, 3]), L.tensor([1.0, 2.2, 3]).double(),
                                     check_dtype=False),
    lambda L: L.testing.assert_close(L.tensor([1.0]), L.tensor([1.5]), msg="custom"),
    lambda L: L.testing.assert_close(L.tensor([1.0]), L.tensor([1.5]), msg=lambda m: m[:10]),
    lambda L: L.testing.assert_close(L.tensor([1.0]), L.tensor([1.0]), rtol=1e-3),
    lambda L: L.testing.assert_close(1.0, 1.1),
    lambda L: L.testing.assert_close(1, 2),
    lambda L: L.testing.assert_close(L.tensor(1.0), L.tensor(1.5)),
    lambda L: L.testing.assert_close(L.tensor(1), L.tensor(2)),
    lambda L: L.testing.assert_close([L.tensor([[1.0, 2]])], [L.tensor([[1.0, 3]])]),
    lambda L: L.testing.assert_close({"a": [L.tensor([1.0, 3])]}, {"a": [L.tensor([1.0, 2])]}),
    lambda L: L.testing.assert_close({"a": L.ones(2)}, {"a": L.ones(3)}),
    lambda L: L.testing.assert_close({"a": 1, "b": 2}, {"a": 1, "c": 2}),
    lambda L: L.testing.assert_close([L.tensor([1.0])], [L.tensor([1.5])], msg="m"),
    lambda L: L.testing.assert_close([L.tensor(1.0)], [L.tensor(1.0), L.tensor(2.0)]),
    lambda L: L.testing.assert_close({"a": L.tensor(1.0)}, {"a": L.tensor(1.5)}),
]

PASSING = [
    lambda L: L.testing.assert_close(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0 + 1e-6])),
    lambda L: L.testing.assert_close(L.tensor([NAN, 1.0]), L.tensor([NAN, 1.0]), equal_nan=True),
    lambda L: L.testing.assert_close(L.tensor([1.0, 2, 3]), L.tensor([1.0, 2, 3]).double(),
                                     check_dtype=False),
    lambda L: L.testing.assert_close(L.tensor([1.0, 2, 3]), L.tensor([1.0, 2.2, 3]),
                                     rtol=0.2, atol=0),
    lambda L: L.testing.assert_close([L.tensor(1), 2.0], (L.tensor(1), 2.0)),
    lambda L: L.testing.assert_close({"w": L.ones(2)}, {"w": L.ones(2)}),
    lambda L: L.testing.assert_close(L.tensor([float("inf")]), L.tensor([float("inf")])),
]


@pytest.mark.parametrize("call", FAILING)
def test_failures_like_torch(call):
    assert_same_error(call)


@pytest.mark.parametrize("call", PASSING)
def test_passes_like_torch(call):
    assert call(torch) is None and call(nbgrad) is None


def test_compares_on_the_device(device):
    a = nbgrad.tensor([1.0, 2.0], device=device)
    nbgrad.testing.assert_close(a, a * 1.0)
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        nbgrad.testing.assert_close(a, a + nbgrad.tensor([0.0, 1.0], device=device))


@pytest.mark.parametrize("dtype", [nbgrad.float32, nbgrad.float64, nbgrad.int64, nbgrad.uint8,
                                   nbgrad.bool])
def test_make_tensor(dtype, device):
    t = nbgrad.testing.make_tensor(4, 5, dtype=dtype, device=device, low=0, high=3,
                                   exclude_zero=True)
    assert t.shape == (4, 5) and t.dtype is dtype and t.device.type == device
    v = t.cpu().numpy()
    assert (v != 0).all() and (v.astype(float) < 3).all() and (v.astype(float) >= 0).all()
    g = nbgrad.testing.make_tensor((2, 3), dtype=nbgrad.float64, device=device,
                                   requires_grad=True, noncontiguous=True)
    assert g.requires_grad and g.shape == (2, 3) and not g.is_contiguous()
    with pytest.raises(ValueError):
        nbgrad.testing.make_tensor(2, dtype=dtype, device=device, low=2, high=1)
