"""``t[key]`` and ``t[key] = value`` on the device (nbgrad/ops/indexing.py):
basic keys give views of the device buffer, integer-array and mask keys
gather and scatter on the device; gradients as on the CPU."""
import numpy as np
import pytest

import nbgrad

from .support import MIXED, assert_same, host, on_both, raised, run_both, same_error, values

MASK = np.array([[True, False, True], [False, False, True], [True, True, False]])


def _keys(device):
    """Keys for a (3, 3) tensor; index tensors live on ``device``."""
    index = nbgrad.tensor([2, 0, 2], device=device)

    def on(values):
        return nbgrad.tensor(values, device=device)
    return {
        "int": 1, "negative": -1, "slice": slice(1, None),
        "step": (slice(None), slice(None, None, 2)), "none": (None, 1), "ellipsis": (Ellipsis, 0),
        "int-slice": (1, slice(0, 2)), "list": [0, 2, 2], "tensor": index,
        "tensor-pair": (index, on([1, 1, 0])), "tensor-slice": (slice(1, None), index[:2]),
        "int-tensor": (1, index), "mask": on(MASK), "row-mask": on([True, False, True]),
        "mask-slice": (slice(None), on([False, True, True])), "numpy-mask": MASK,
        "0d-index": on(2), "bool": True,
        "2d-index": on([[0, 1], [2, 2]]),
    }


KEYS = sorted(_keys("cpu"))


@pytest.mark.parametrize("name", KEYS)
def test_getitem_values_and_gradients(name):
    def fn(x):
        return x[_keys(x.device.type)[name]] * 3
    run_both(fn, values((3, 3), 1))
    cpu, cuda = on_both(values((3, 3), 1))
    a, b = cuda[_keys("cuda")[name]], cpu[_keys("cpu")[name]]
    assert (a._base is not None) == (b._base is not None)  # a view exactly when on the CPU
    if a._base is not None:
        assert (a.stride(), a.storage_offset()) == (b.stride(), b.storage_offset())


@pytest.mark.parametrize("value", ["number", "tensor", "broadcast", "grad"])
@pytest.mark.parametrize("name", KEYS)
def test_setitem_values_and_gradients(name, value):
    """A write into a non-leaf (so the history is rebased: CopySlices or
    IndexPut), with a number, a tensor of the region's shape, a broadcast
    one, or one that requires grad."""
    cpu, _ = on_both(values((3, 3), 2))
    region = cpu[_keys("cpu")[name]].shape

    def fn(x, v):
        y = x * 1
        key = _keys(x.device.type)[name]
        if value == "number":
            y[key] = -4.5
        elif value == "broadcast":
            y[key] = v[..., :1].sum() if not region else v.reshape(-1)[:1].expand(region[-1:])
        else:
            source = v if value == "grad" else v.detach()
            y[key] = source.reshape(-1)[:max(1, int(np.prod(region)))].reshape(region)
        return y * x
    source = values((27,), 3)
    run_both(fn, values((3, 3), 4), source, dtype=nbgrad.float64)


def test_setitem_with_repeated_indices_on_the_device():
    """Repeated positions: one of the writes wins on both (here, all equal)."""
    cpu, cuda = on_both(np.zeros((3,)))
    for t in (cpu, cuda):
        t[nbgrad.tensor([1, 1, 2], device=t.device)] = 5.0
    assert_same(cuda, cpu)


def test_gather_gradient_accumulates_repeated_indices():
    def fn(x):
        return x[nbgrad.tensor([0, 0, 2, 0], device=x.device)]
    out, _ = run_both(fn, values((3, 2), 5))
    assert out.grad_fn.name() == "IndexBackward"


def test_integer_tensor_indexing_and_writes():
    cpu, cuda = on_both(np.arange(12).reshape(3, 4))
    for t in (cpu, cuda):
        t[t > 6] = 0
        t[0, ::2] = nbgrad.tensor([-1, -2], device=t.device)
    assert_same(cuda, cpu)
    assert_same(cuda[nbgrad.tensor([2, 0], device="cuda")], cpu[nbgrad.tensor([2, 0])])


@pytest.mark.parametrize("call", [
    lambda t: t[3], lambda t: t[0, 0, 0], lambda t: t[..., ...], lambda t: t[[0, 5]],
    lambda t: t[np.array([True, False])], lambda t: t[0.5],
    lambda t: t[nbgrad.tensor([0.0], device=t.device)],
    lambda t: t.__setitem__((slice(None),), nbgrad.ones(2, 2, device=t.device)),
    lambda t: t.__setitem__([0, 1], nbgrad.ones(3, 3, device=t.device)),
    lambda t: t.__setitem__([0, 1], nbgrad.ones(3, dtype=nbgrad.float64, device=t.device)),
], ids=["int-range", "too-many", "two-ellipses", "list-range", "mask-shape", "float",
        "float-tensor", "set-shape", "put-shape", "put-dtype"])
def test_index_errors_as_on_the_cpu(call):
    cpu, cuda = on_both(values((3, 3), 6), dtype=nbgrad.float32)
    error = same_error(call, (cpu,), (cuda,))
    assert isinstance(error, (IndexError, RuntimeError, ValueError))


def test_cuda_indices_into_a_cpu_tensor_are_refused():
    cpu = nbgrad.ones(3)
    error = raised(lambda: cpu[nbgrad.tensor([0, 1], device="cuda")])
    assert str(error) == ("indices should be either on cpu or on the same device as the indexed "
                          "tensor (cpu)")


def test_cpu_indices_into_a_cuda_tensor_are_read_on_the_host():
    cpu, cuda = on_both(values((3,), 7))
    assert_same(cuda[nbgrad.tensor([2, 0])], cpu[nbgrad.tensor([2, 0])])


def test_basic_setitem_copies_across_devices_as_copy_does():
    """A basic key writes with copy_, which copies across devices (taped)."""
    source = nbgrad.tensor([1.0, 2.0], requires_grad=True)
    target = nbgrad.zeros(2, 2, device="cuda") * 1
    target[0] = source
    assert host(target).tolist() == [[1.0, 2.0], [0.0, 0.0]]
    (target * 3).sum().backward()
    assert not source.grad.is_cuda and source.grad.tolist() == [3.0, 3.0]
    host_target = nbgrad.zeros(2, 2)
    host_target[:, 1] = nbgrad.tensor([5.0, 6.0], device="cuda")
    assert host_target.tolist() == [[0.0, 5.0], [0.0, 6.0]]


def test_advanced_setitem_refuses_a_value_on_another_device():
    cuda = nbgrad.zeros(3, device="cuda")
    error = raised(cuda.__setitem__, [0, 2], nbgrad.ones(2))
    assert type(error) is RuntimeError and str(error) == MIXED.format("cuda:0", "cpu")
    error = raised(nbgrad.zeros(3).__setitem__, [0, 2], nbgrad.ones(2, device="cuda"))
    assert str(error) == MIXED.format("cuda:0", "cpu")
    assert cuda._version == 0


def test_a_zero_dim_value_moves_to_the_indexed_tensors_device():
    cpu, cuda = on_both(np.zeros(3))
    cuda[[0, 2]] = nbgrad.tensor(4.0, dtype=nbgrad.float64)
    cpu[nbgrad.tensor([0, 2])] = nbgrad.tensor(4.0, dtype=nbgrad.float64, device="cuda")
    assert_same(cuda, cpu)
