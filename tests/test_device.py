"""Devices (nbgrad/device.py) against PyTorch's torch.device, and the clear
refusal of CUDA tensors, which come in a later version."""
import pytest
import torch

import nbgrad
from helpers import raised


DEVICES = [("cpu",), ("cpu:0",), ("cpu", 1), ("cuda",), ("cuda:1",), ("cuda", 0)]


@pytest.mark.parametrize("args", DEVICES, ids=[":".join(map(str, a)) for a in DEVICES])
def test_device_objects_match_torch(args):
    ours, theirs = nbgrad.device(*args), torch.device(*args)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    assert (ours.type, ours.index) == (theirs.type, theirs.index)


def test_device_equality_and_hashing():
    cpu = nbgrad.device("cpu")
    assert cpu == nbgrad.device("cpu") and hash(cpu) == hash(nbgrad.device("cpu"))
    assert cpu != nbgrad.device("cpu:0")  # an explicit index is another device, as in PyTorch
    assert cpu != nbgrad.device("cuda")
    assert nbgrad.device(cpu) == cpu
    assert {cpu: 1}[nbgrad.device("cpu")] == 1
    assert (torch.device("cpu") == torch.device("cpu:0")) is False


@pytest.mark.parametrize("make", [
    lambda L: L.device("gpu"),
    lambda L: L.device("cpu:x"),
    lambda L: L.device("cuda:-1"),
    lambda L: L.device("cpu:01"),
    lambda L: L.device("cuda", -1),
    lambda L: L.device(0),
], ids=["unknown-type", "bad-index", "negative-index", "leading-zero", "negative-index-arg", "int"])
def test_invalid_devices_are_refused(make):
    error = raised(make, nbgrad)
    assert isinstance(error, RuntimeError)
    theirs = raised(make, torch)
    if "Expected one of" in str(theirs):  # PyTorch lists device types nbgrad does not have
        assert str(error) == "Expected one of cpu, cuda device type at start of device string: gpu"
    else:
        assert str(error) == str(theirs)


def test_tensors_live_on_the_cpu():
    t = nbgrad.ones(2)
    assert t.device == nbgrad.device("cpu") and repr(t.device) == "device(type='cpu')"
    assert not t.is_cuda
    assert nbgrad.zeros(2, device="cpu").device == nbgrad.device("cpu")
    assert nbgrad.tensor([1.0], device=nbgrad.device("cpu")).device.type == "cpu"
    assert (t * 2).device == t.device and t.sum().device == t.device
    assert nbgrad.zeros_like(t).device == t.device
    assert t.to("cpu") is t and t.to(nbgrad.device("cpu")) is t


CUDA_REQUESTS = [
    ("zeros", lambda: nbgrad.zeros(2, device="cuda")),
    ("tensor", lambda: nbgrad.tensor([1.0], device="cuda")),
    ("tensor-indexed", lambda: nbgrad.tensor([1.0], device="cuda:0")),
    ("device-object", lambda: nbgrad.ones(2, device=nbgrad.device("cuda"))),
    ("arange", lambda: nbgrad.arange(3, device="cuda")),
    ("rand", lambda: nbgrad.rand(2, device="cuda")),
    ("like", lambda: nbgrad.zeros_like(nbgrad.ones(2), device="cuda")),
    ("to", lambda: nbgrad.ones(2).to("cuda")),
    ("to-keyword", lambda: nbgrad.ones(2).to(device="cuda")),
    ("to-device-object", lambda: nbgrad.ones(2).to(nbgrad.device("cuda", 0))),
]


without_cuda = pytest.mark.skipif(nbgrad.cuda.is_available(), reason="this machine has CUDA")


@without_cuda
@pytest.mark.parametrize("request_cuda", [c[1] for c in CUDA_REQUESTS],
                         ids=[c[0] for c in CUDA_REQUESTS])
def test_cuda_is_refused_with_a_clear_runtime_error(request_cuda):
    # The reason (no driver here; or numba-cuda missing) and what to install.
    with pytest.raises(RuntimeError, match=r"^CUDA is not available: .*pip install 'nbgrad\[cuda\]'"):
        request_cuda()


def test_other_cuda_devices_than_the_first_are_refused():
    with pytest.raises(RuntimeError, match=r"^CUDA device cuda:1 is not supported"):
        nbgrad.zeros(2, device="cuda:1")


@without_cuda
def test_refused_cuda_conversion_leaves_the_tensor_alone():
    t = nbgrad.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError):
        t.to("cuda", nbgrad.float64)
    assert t.device == nbgrad.device("cpu") and t.dtype is nbgrad.float32 and t.is_leaf


@without_cuda
def test_tensor_cuda_method_is_refused_with_a_runtime_error():
    with pytest.raises(RuntimeError, match="cuda"):
        nbgrad.ones(2).cuda()
