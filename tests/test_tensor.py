"""The Tensor object itself, side by side with PyTorch 2.13: metadata
(shape, size(), ndim, numel, dtype, device, stride, is_contiguous), Python
conversions (item, tolist, len, iter, bool, float, int), NumPy interop
(numpy() shares memory, __array__), and the autograd attributes (requires_grad,
requires_grad_, is_leaf, the grad setter)."""
import copy
import os
import pickle
import warnings

import numpy as np
import pytest
import torch

import nbgrad

from differential import differential
from helpers import assert_close, assert_same_tensor, cuda_only, values



def _dtype(dtype):
    return str(dtype).split(".")[-1]


def _metadata(tr, label, t):
    tr.note(f"{label}: shape", tuple(t.shape))
    tr.note(f"{label}: Size repr", repr(t.shape).replace("torch.", "nbgrad."))
    tr.note(f"{label}: size()", (tuple(t.size()), [t.size(d) for d in range(-t.ndim, t.ndim)]))
    tr.note(f"{label}: ndim, dim(), numel(), nelement()",
            (t.ndim, t.dim(), t.numel(), t.nelement()))
    tr.note(f"{label}: dtype", _dtype(t.dtype))
    tr.note(f"{label}: device", (str(t.device), t.device.type, t.is_cuda))
    tr.note(f"{label}: stride", (t.stride(), [t.stride(d) for d in range(t.ndim)]))
    tr.note(f"{label}: storage_offset", t.storage_offset())
    tr.note(f"{label}: is_contiguous", t.is_contiguous())
    tr.note(f"{label}: element_size, is_floating_point", (t.element_size(), t.is_floating_point()))


def test_metadata_of_tensors_and_views():
    def scenario(lib, tr):
        base = lib.arange(24, dtype=lib.float32).reshape(2, 3, 4)
        for label, t in (("contiguous", base), ("transposed", base.transpose(0, 2)),
                         ("sliced", base[1:, 1]), ("selected", base[1, 2]),
                         ("strided", base[:, ::2, 1:]), ("0-d", lib.tensor(3.5)),
                         ("empty", lib.zeros(0, 3)), ("float64", lib.ones(2, dtype=lib.float64)),
                         ("int64", lib.tensor([1, 2, 3])), ("bool", lib.tensor([True, False])),
                         ("unsqueezed", base[0].unsqueeze(1)),
                         ("expanded", lib.ones(3, 1).expand(3, 4))):
            _metadata(tr, label, t)
        tr.call("size(3) of a 3-d tensor", lambda: base.size(3))
        tr.call("stride(-4)", lambda: base.stride(-4))
        tr.note("Size is a tuple", isinstance(base.shape, tuple) and base.shape == (2, 3, 4))
        tr.note("Size.numel()", base.shape.numel())

    differential(scenario)


def test_python_conversions():
    def scenario(lib, tr):
        tr.call("item of 24 elements", lambda: lib.zeros(24).item())
        tr.call("item of an empty tensor", lambda: lib.zeros(0).item())
        for label, t in (("0-d float", lib.tensor(3.5)), ("[1] int", lib.tensor([7])),
                         ("[[1]] float64", lib.tensor([[2.25]], dtype=lib.float64)),
                         ("0-d bool", lib.tensor(True))):
            item = t.item()
            tr.note(f"{label}: item", (item, type(item).__name__))
            tr.note(f"{label}: float, int, bool", (float(t), int(t), bool(t)))
        tr.note("tolist 2-d int", lib.tensor([[1, 2], [3, 4]]).tolist())
        tr.note("tolist 0-d", lib.tensor(2.5).tolist())
        tr.note("tolist of a transpose", lib.tensor([[1.0, 2.0], [3.0, 4.0]]).t().tolist())
        tr.note("tolist empty", lib.zeros(2, 0).tolist())
        tr.note("len", (len(lib.zeros(3, 2)), len(lib.zeros(0))))
        tr.call("len of 0-d", lambda: len(lib.tensor(1.0)))
        rows = list(lib.tensor([[1, 2], [3, 4]]))
        tr.note("iter gives rows", [r.tolist() for r in rows])
        tr.note("iter over a vector gives 0-d tensors", [r.ndim for r in lib.tensor([1.0, 2.0])])
        tr.call("iter over 0-d", lambda: list(lib.tensor(1.0)))
        tr.note("bool", (bool(lib.tensor([0.0])), bool(lib.tensor(2)), bool(lib.tensor([[1]]))))
        tr.call("bool of two", lambda: bool(lib.tensor([1.0, 2.0])))
        tr.call("bool of none", lambda: bool(lib.tensor([])))
        tr.call("float of two", lambda: float(lib.tensor([1.0, 2.0])))
        tr.call("int of none", lambda: int(lib.zeros(0)))
        tr.note("int truncates", int(lib.tensor(-3.7)))
        tr.note("__index__", [10, 20, 30][lib.tensor(1)])
        tr.call("__index__ of a float", lambda: [10, 20, 30][lib.tensor(1.0)])
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        tr.warns("float() of a tensor requiring grad", lambda: float(x.sum()))
        tr.warns("item() of one", lambda: x.sum().item())
        tr.warns("tolist() of one", lambda: x.tolist())
        tr.warns("float() of a plain one", lambda: float(lib.tensor(1.0)))

    differential(scenario)


def test_numpy_shares_memory_and_refuses_when_requires_grad():
    def scenario(lib, tr):
        t = lib.zeros(3)
        n = t.numpy()
        n[0] = 5.0  # written through NumPy: seen by the tensor, not counted
        tr.state("t", t)
        t.add_(1)  # and the other way round
        tr.note("numpy sees the tensor's write", n.tolist())
        tr.note("dtype", n.dtype.name)
        v = t[1:].numpy()
        tr.note("numpy() of a view", (v.tolist(), v.base is not None))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        tr.call("numpy() of a tensor requiring grad", lambda: x.numpy())
        tr.call("np.asarray of it", lambda: np.asarray(x))
        tr.call("numpy() of a non-leaf", lambda: (x * 2).numpy())
        tr.note("detach().numpy()", x.detach().numpy().tolist())
        with lib.no_grad():
            tr.call("allowed under no_grad", lambda: x.numpy())

    differential(scenario)
    t = nbgrad.zeros(3)
    assert np.shares_memory(t.numpy(), t.numpy())
    assert np.shares_memory(t[1:].numpy(), t.numpy())


def test_array_protocol():
    def scenario(lib, tr):
        t = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        a = np.asarray(t)
        tr.note("np.asarray", (a.tolist(), a.dtype.name, a.shape))
        tr.note("np.asarray with a dtype",
                np.asarray(lib.tensor([1, 2]), dtype=np.float64).dtype.name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # torch's __array__ has no copy=
            copied = np.array(t)
        tr.note("np.array copies", np.shares_memory(copied, t.numpy()))
        copied[0, 0] = 100.0
        tr.note("so writing the copy leaves t alone", t.tolist())
        tr.note("np.asarray shares", np.shares_memory(np.asarray(t), t.numpy()))
        tr.note("0-d", np.asarray(lib.tensor(2.5)).tolist())

    differential(scenario)
    t = nbgrad.tensor([1.0, 2.0])
    assert np.shares_memory(np.asarray(t, dtype=np.float32), t.numpy())  # same dtype: no copy
    assert not np.shares_memory(np.array(t, copy=True), t.numpy())
    with pytest.raises(ValueError):
        np.array(t, dtype=np.float64, copy=False)
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), [1.0, 2.0])


def test_requires_grad_flags_and_is_leaf():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        plain = lib.ones(2)
        for label, t in (("leaf", x), ("non-leaf", y), ("plain", plain), ("detached", y.detach()),
                         ("view of leaf", x[1:]), ("sum", y.sum())):
            tr.note(f"{label}: requires_grad, is_leaf", (t.requires_grad, t.is_leaf))
        tr.call("requires_grad_(False) on a non-leaf", lambda: y.requires_grad_(False))
        tr.call("requires_grad = False on a non-leaf", lambda: setattr(y, "requires_grad", False))
        tr.call("requires_grad_() on an int tensor", lambda: lib.tensor([1, 2]).requires_grad_())
        tr.call("requires_grad=True at creation of an int tensor",
                lambda: lib.tensor([1, 2], requires_grad=True))
        tr.call("requires_grad_(False) on an int tensor",
                lambda: lib.tensor([1, 2]).requires_grad_(False))
        tr.note("requires_grad_ returns self", plain.requires_grad_() is plain)
        tr.note("and sets the flag", (plain.requires_grad, plain.is_leaf))
        tr.call("requires_grad_(True) on a non-leaf is fine", lambda: y.requires_grad_(True))
        x.requires_grad_(False)
        tr.note("a leaf can turn it off", (x.requires_grad, x.is_leaf))

    differential(scenario)


def test_grad_setter():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        tr.call("right size and dtype", lambda: setattr(x, "grad", lib.tensor([3.0, 4.0])))
        tr.grad("x.grad", x)
        (x * 2).sum().backward()  # accumulates into the assigned tensor
        tr.grad("x.grad after backward", x)
        tr.call("wrong size", lambda: setattr(x, "grad", lib.ones(3)))
        tr.call("wrong dtype", lambda: setattr(x, "grad", lib.ones(2, dtype=lib.float64)))
        tr.call("wrong size and dtype", lambda: setattr(x, "grad", lib.ones(3, dtype=lib.float64)))
        tr.call("int grad", lambda: setattr(x, "grad", lib.tensor([1, 2])))
        tr.call("not a tensor", lambda: setattr(x, "grad", [1.0, 2.0]))
        tr.call("its own grad", lambda: setattr(x, "grad", x))
        tr.grad("x.grad unchanged by the refusals", x)
        tr.call("None", lambda: setattr(x, "grad", None))
        tr.grad("x.grad", x)
        y = x * 2
        tr.call("a grad for a non-leaf", lambda: setattr(y, "grad", lib.ones(2)))
        tr.warns("reading it back", lambda: tr.grad("y.grad", y))
        z = x * 3
        tr.warns("reading .grad of a non-leaf", lambda: z.grad)

    differential(scenario)


def test_elementwise_results_keep_the_layout_of_their_inputs():
    def scenario(lib, tr):
        a = lib.arange(6, dtype=lib.float32).reshape(2, 3).t()
        y = a.sigmoid()
        tr.note("stride", (y.stride(), (a + 1).stride()))
        tr.note("is_contiguous", y.is_contiguous())
        flat = y.reshape(-1)
        flat[0] = 100.0
        tr.note("a write into reshape(-1) reaches y", y.tolist())

    differential(scenario)


# (id, leaf, loss): the layout of a leaf's first .grad (PyTorch's gradient
# layout contract: a dense leaf's strides, else C order), whatever the
# gradient's own layout, and kept by later accumulation.
GRAD_LAYOUTS = [
    ("contiguous-leaf-transposed-use", lambda L: L.ones(3, 2), lambda L, x: x.t() * L.ones(2, 3)),
    ("transposed-leaf", lambda L: L.ones(3, 2).t(), lambda L, x: x * 2),
    ("transposed-leaf-sum", lambda L: L.ones(3, 2).t(), lambda L, x: x),
    ("transposed-leaf-matmul", lambda L: L.ones(3, 2).t(), lambda L, x: x @ L.ones(3, 3)),
    ("stepped-leaf", lambda L: L.ones(3, 4)[:, ::2], lambda L, x: x * 2),
    ("expanded-leaf", lambda L: L.ones(3, 1).expand(3, 4), lambda L, x: x * 2),
    ("size-1-dims-leaf", lambda L: L.ones(2, 1, 3).permute(2, 1, 0), lambda L, x: x * 2),
]


@pytest.mark.parametrize("leaf, loss", [c[1:] for c in GRAD_LAYOUTS],
                         ids=[c[0] for c in GRAD_LAYOUTS])
def test_leaf_grad_follows_the_gradient_layout_contract(leaf, loss):
    results = []
    for lib in (nbgrad, torch):
        x = leaf(lib).detach().requires_grad_()
        loss(lib, x).sum().backward()
        first = x.grad.stride()
        loss(lib, x).sum().backward()
        results.append((first, x.grad.stride(), x.grad.numpy().copy()))
    (first, second, values), (t_first, t_second, t_values) = results
    assert first == t_first and second == t_second
    np.testing.assert_array_equal(values, t_values)


def test_deepcopy_copies_a_leaf_and_refuses_a_non_leaf_like_torch():
    import copy

    for lib in (nbgrad, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * 3).sum().backward()
        y = copy.deepcopy(x)
        assert y.requires_grad and y.is_leaf
        assert y.tolist() == [1.0, 2.0] and y.grad.tolist() == [3.0, 3.0]
        with lib.no_grad():
            y.add_(1)
        assert x.tolist() == [1.0, 2.0]  # new storage
        with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
            copy.deepcopy(x * 2)


# ------------------------------------------------------------ on every device
def test_metadata_on_the_device_matches_torch(device):
    ours, theirs = nbgrad.tensor(values((2, 3), 1), device=device), torch.tensor(values((2, 3), 1))
    assert ours.is_cuda == (device == "cuda")
    assert repr(ours.device) == ("device(type='cuda', index=0)" if device == "cuda"
                                 else "device(type='cpu')")
    for view in (lambda t: t, lambda t: t.t(), lambda t: t[:, 1:], lambda t: t[1]):
        a, b = view(ours), view(theirs)
        assert (a.shape, a.stride(), a.storage_offset(), a.is_contiguous(), a.numel(), a.ndim,
                a.element_size(), str(a.dtype)) == (
            b.shape, b.stride(), b.storage_offset(), b.is_contiguous(), b.numel(), b.ndim,
            b.element_size(), str(b.dtype).replace("torch.", "nbgrad."))


def test_python_conversions_read_the_device(device):
    t = nbgrad.tensor([[1.5, 2.0], [3.0, 4.0]], device=device)
    assert t[0, 0].item() == 1.5 and float(t[0, 0]) == 1.5 and int(t[1, 1]) == 4
    assert t.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    assert bool(t[0, 1] > 1) is True
    assert [row.tolist() for row in t] == [[1.5, 2.0], [3.0, 4.0]] and len(t) == 2
    assert [10, 20, 30][nbgrad.tensor(1, device=device)] == 20
    with pytest.raises(RuntimeError, match="^a Tensor with 4 elements cannot be converted to "
                                           "Scalar$"):
        t.item()


def test_gradients_stay_on_the_device(device):
    x = nbgrad.tensor(values((2, 3), 1), device=device, requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.device == x.device
    assert x.grad.dtype is x.dtype and x.grad.grad_fn is None and not x.grad.requires_grad
    (x * 3).sum().backward()  # accumulates in place, on the device
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2 * x.detach().cpu().numpy() + 3, rtol=1e-6)


def test_detach_and_data_alias_the_buffer_on_the_device_like_torch(device):
    ours = nbgrad.tensor(values((2, 3), 1), device=device, requires_grad=True)
    theirs = torch.tensor(values((2, 3), 1), requires_grad=True)
    for t in (ours, theirs):
        d = t.detach()
        assert d.device == t.device and not d.requires_grad
        d[0, 0] = 7.0  # visible through t, and counted in t's version
        assert t[0, 0].item() == 7.0 and t._version == 1
        alias = t.data
        alias[0, 1] = 8.0  # its own counter: not seen by t's
        assert t[0, 1].item() == 8.0 and t._version == 1
    assert_same_tensor(ours.detach(), theirs.detach())


def test_deepcopy_copies_the_device_buffer_and_grad(device):
    x = nbgrad.tensor(values((2,), 1), device=device, requires_grad=True)
    (x * 2).sum().backward()
    y = copy.deepcopy(x)
    assert y.device == x.device and y.requires_grad and y.grad.device == x.device
    y.detach()[0] = 9.0
    assert x[0].item() != 9.0
    assert y.grad.tolist() == [2.0, 2.0]


# ------------------------------------------------------------------ on CUDA
@cuda_only
def test_repr_names_the_device(device):
    t = nbgrad.tensor([[1.0, 2.5], [3.0, -4.0]], device=device)
    assert repr(t) == "tensor([[ 1.0000,  2.5000],\n        [ 3.0000, -4.0000]], device='cuda:0')"
    assert repr(nbgrad.tensor([1, 2], device=device)) == "tensor([1, 2], device='cuda:0')"
    assert repr(nbgrad.zeros(2, dtype=nbgrad.float64, device=device, requires_grad=True)) == (
        "tensor([0., 0.], device='cuda:0', dtype=nbgrad.float64, requires_grad=True)")
    x = nbgrad.tensor([2.0, 2.0], requires_grad=True)
    assert repr(x.to(device) * 2) == repr(x * 2).replace(", grad_fn", ", device='cuda:0', grad_fn")
    assert repr(nbgrad.zeros(0, 2, device=device)) == "tensor([], device='cuda:0', size=(0, 2))"


@cuda_only
def test_numpy_refuses_a_cuda_tensor(device):
    t = nbgrad.ones(2, device=device)
    with pytest.raises(TypeError, match=r"^can't convert cuda:0 device type tensor to numpy\. Use "
                                        r"Tensor\.cpu\(\) to copy the tensor to host memory "
                                        r"first\.$"):  # torch's type and words
        t.numpy()
    with pytest.raises(TypeError):
        np.asarray(t)
    grad = nbgrad.ones(2, device=device, requires_grad=True)  # torch checks requires grad first
    with pytest.raises(RuntimeError, match="^Can't call numpy\\(\\) on Tensor that requires grad"):
        grad.numpy()
    np.testing.assert_array_equal(t.cpu().numpy(), [1.0, 1.0])


def _read_interface(t):
    """The values behind ``__cuda_array_interface__``, read without nbgrad."""
    face = t.__cuda_array_interface__
    assert set(face) >= {"shape", "strides", "data", "typestr", "version"}
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        from numba import cuda
        return cuda.as_cuda_array(t).copy_to_host()

    class Host:  # the simulator's device memory is host memory: read it as NumPy would
        __array_interface__ = {k: face[k] for k in ("shape", "strides", "data", "typestr")}
        __array_interface__["version"] = 3
    return np.array(Host(), copy=True)


@cuda_only
@pytest.mark.parametrize("view", [lambda t: t, lambda t: t.t(), lambda t: t[1:, ::2],
                                  lambda t: t[1]], ids=["whole", "transposed", "sliced", "row"])
def test_cuda_array_interface_exposes_the_buffer(view, device):
    cpu = nbgrad.tensor(values((3, 4), 2), dtype=nbgrad.float32)
    t = view(cpu.to(device))
    face = t.__cuda_array_interface__
    assert face["shape"] == tuple(t.shape) and face["typestr"] == "<f4"
    assert face["strides"] in (None, tuple(s * 4 for s in t.stride()))
    assert (face["strides"] is None) == t.is_contiguous()
    assert face["data"][1] is False  # writable
    np.testing.assert_array_equal(_read_interface(t), view(cpu).numpy())


@cuda_only
def test_cuda_array_interface_shares_memory(device):
    t = nbgrad.zeros(2, 3, device=device)
    row = t[1]
    assert row.__cuda_array_interface__["data"][0] == t.__cuda_array_interface__["data"][0] + 12
    t[1, 2] = 5.0
    assert _read_interface(row)[2] == 5.0


@cuda_only
def test_cuda_array_interface_is_absent_on_cpu_and_refused_with_grad(device):
    assert not hasattr(nbgrad.ones(2), "__cuda_array_interface__")
    with pytest.raises(AttributeError):
        nbgrad.ones(2).__cuda_array_interface__
    grad = nbgrad.ones(2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        grad.__cuda_array_interface__
    assert grad.detach().__cuda_array_interface__["shape"] == (2,)


@cuda_only
def test_grad_assignment_checks_the_device(device):
    x = nbgrad.ones(2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^attempting to assign a gradient with device type "
                                           r"'cpu' to a tensor with device type 'cuda'\. Please "
                                           r"ensure that the gradient and the tensor are on the "
                                           r"same device$"):
        x.grad = nbgrad.zeros(2)
    x.grad = nbgrad.full((2,), 3.0, device=device)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


@cuda_only
def test_data_setter_moves_the_tensor_to_another_device(device):
    x = nbgrad.zeros(2, requires_grad=True)
    x.data = nbgrad.ones(2, device=device)
    assert x.is_cuda and x.device == nbgrad.device("cuda", 0)
    (x * 2).sum().backward()
    assert x.grad.is_cuda and x.grad.tolist() == [2.0, 2.0]


# -- pickling (pickle, worker processes, whole-module saves) ---------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_tensors_pickle_as_torch(dtype, device):
    """Values, dtype, device and requires_grad come back, as a new leaf (a view
    pickles as its own values; history and .grad are not kept), as in PyTorch."""
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(np.arange(12).reshape(3, 4) % 5, dtype=getattr(lib, dtype),
                       **({"device": device} if lib is nbgrad else {}))
        if dtype.startswith("float"):
            x.requires_grad_()
        results.append([pickle.loads(pickle.dumps(t)) for t in (x, x[1:, ::2], x * 2)])
    for ours, theirs in zip(*results):
        assert ours.is_leaf and ours.grad is None
        assert ours.requires_grad == theirs.requires_grad
        assert ours.device.type == nbgrad.device(device).type
        assert_close(ours.detach(), theirs.detach())


def test_modules_and_optimizers_pickle_together():
    """One pickle keeps the optimizer's parameters those of the module; the
    copy trains on as the original (Parameter and Buffer types, buffers'
    persistence and the optimizer's state kept)."""
    model = nbgrad.nn.Sequential(nbgrad.nn.Linear(3, 2), nbgrad.nn.BatchNorm1d(2))
    model[1].register_buffer("scratch", nbgrad.zeros(2), persistent=False)
    opt = nbgrad.optim.Adam(model.parameters(), lr=0.1)
    x = nbgrad.tensor(np.random.default_rng(0).standard_normal((4, 3)), dtype=nbgrad.float32)

    def step(m, o):
        o.zero_grad()
        m(x).square().sum().backward()
        o.step()
    step(model, opt)
    model2, opt2 = pickle.loads(pickle.dumps((model, opt)))
    assert opt2.param_groups[0]["params"][0] is model2[0].weight
    assert type(model2[0].weight) is nbgrad.nn.Parameter and model2[0].weight.requires_grad
    assert "scratch" not in model2.state_dict() and "running_mean" in model2[1]._buffers
    step(model, opt)
    step(model2, opt2)
    for a, b in zip(model.parameters(), model2.parameters()):
        assert_close(a.detach(), b.detach())
