"""Mutation safety beyond PyTorch (nbgrad/autograd/mutation_check.py,
nbgrad/tape/regions.py, nbgrad/custom_kernel.py): region-aware version
checks (no false alarm on disjoint writes; PyTorch's rule on request), the
stale error naming where the tensor was saved, ``detect_mutation`` for
writes that bypass the counters, and ``nbgrad.kernel``."""
import re
import sys

import numba
import numpy as np
import pytest
import torch
from numba import cuda

import nbgrad
from helpers import assert_close, cuda_only, normalize_error

STALE = "one of the variables needed for gradient computation has been modified by an inplace"


def _line():
    return sys._getframe(1).f_lineno


@pytest.fixture
def storage_rule():
    nbgrad.autograd.set_version_check("storage")
    yield
    nbgrad.autograd.set_version_check("region")


# (id, saved part, written part) of a (4, 6) tensor y = x * 1: the product
# y[saved] * y[saved] saves y[saved]; then y[written] is written in place.
DISJOINT = [
    ("rows", lambda y: y[:2], lambda y: y[2:]),
    ("columns", lambda y: y[:, :3], lambda y: y[:, 3:]),
    ("even-odd-rows", lambda y: y[::2], lambda y: y[1::2]),
    ("transposed-column", lambda y: y.t()[0], lambda y: y[:, 1]),
    ("one-element", lambda y: y[0, :5], lambda y: y[0, 5]),
]
OVERLAPPING = [
    ("same-row", lambda y: y[1], lambda y: y[1, 2:4]),
    ("column-in-rows", lambda y: y[:2], lambda y: y[:, 0]),
    ("transposed", lambda y: y.t()[2], lambda y: y[1:3, 2]),
    ("whole", lambda y: y[2:], lambda y: y),
]


def _scenario(lib, saved, written):
    x = lib.tensor(np.arange(24.0).reshape(4, 6) / 10, dtype=lib.float64, requires_grad=True)
    y = x * 1
    part = saved(y)
    out = (part * part).sum()
    written(y).mul_(2)
    return x, y, out


@pytest.mark.parametrize("saved, written", [c[1:] for c in DISJOINT], ids=[c[0] for c in DISJOINT])
def test_a_write_beside_the_saved_elements_does_not_raise(saved, written):
    x, y, out = _scenario(nbgrad, saved, written)
    out.backward()
    tx = torch.tensor(np.arange(24.0).reshape(4, 6) / 10, requires_grad=True)
    (saved(tx) * saved(tx)).sum().backward()  # the gradient before the write: the same values
    assert_close(x.grad, tx.grad)
    assert y._version == 1  # every write is still counted


@pytest.mark.parametrize("saved, written", [c[1:] for c in DISJOINT + OVERLAPPING],
                         ids=[c[0] for c in DISJOINT + OVERLAPPING])
def test_the_storage_rule_raises_as_pytorch_does(saved, written, storage_rule):
    _, _, out = _scenario(nbgrad, saved, written)
    with pytest.raises(RuntimeError) as ours:
        out.backward()
    _, _, tout = _scenario(torch, saved, written)
    with pytest.raises(RuntimeError) as theirs:
        tout.backward()
    versions = r"is at version \d+; expected version \d+ instead\."
    assert str(ours.value).startswith(STALE) and str(theirs.value).startswith(STALE)
    assert (re.search(versions, str(ours.value)).group()
            == re.search(versions, str(theirs.value)).group())


@pytest.mark.parametrize("saved, written", [c[1:] for c in OVERLAPPING],
                         ids=[c[0] for c in OVERLAPPING])
def test_a_write_over_saved_elements_raises(saved, written):
    _, _, out = _scenario(nbgrad, saved, written)
    with pytest.raises(RuntimeError, match=STALE):
        out.backward()


def test_only_writes_after_the_save_count_and_the_first_overlapping_one_is_named():
    x = nbgrad.ones(4, 6, requires_grad=True)
    y = x * 1
    y[0].add_(1)  # before the save
    z = y[1:].exp(); saved_line = _line()  # noqa: E702  (exp saves its output z)
    z[0, :3].zero_()  # overlaps z
    y[0].add_(1)  # beside it
    with pytest.raises(RuntimeError) as info:
        z.sum().backward()
    message = str(info.value)
    assert "It was modified in place by zero_()" in message
    assert message.endswith(f"It was saved for ExpBackward by the forward call at {__file__}:"
                            f"{saved_line}.")
    assert "is at version 1; expected version 0 instead" in message  # z's own storage's counter


def test_the_rule_is_read_and_chosen_by_name():
    assert nbgrad.autograd.get_version_check() == "region"
    with pytest.raises(ValueError, match="mode must be 'region' or 'storage'"):
        nbgrad.autograd.set_version_check("elements")
    assert nbgrad.autograd.get_version_check() == "region"


def test_forgotten_writes_count_as_overlapping():
    """Writes older than the counter remembers cannot be ruled out: raise."""
    x = nbgrad.ones(40, requires_grad=True)
    y = x * 1
    z = y[:1] * y[:1]  # saves y[:1]
    for k in range(1, 40):  # 39 disjoint writes: more than the counter keeps
        y[k].add_(1)
    with pytest.raises(RuntimeError, match=STALE):
        z.sum().backward()
    y = x * 1
    z = y[:1] * y[:1]
    for k in range(1, 20):
        y[k].add_(1)
    z.sum().backward()  # all remembered, all beside it


# ------------------------------------------------------------ detect_mutation
def _bypassing_writes():
    return [
        (".data", lambda t: t.data.add_(1)),
        ("numpy alias", lambda t: np.add(t.detach().numpy(), 1, out=t.detach().numpy())),
        ("dlpack-like alias", lambda t: t.detach().numpy().__setitem__(0, 7.0)),
    ]


@pytest.mark.parametrize("name, write", _bypassing_writes(),
                         ids=[n for n, _ in _bypassing_writes()])
def test_detect_mutation_catches_writes_the_counter_cannot_see(name, write):
    x = nbgrad.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with nbgrad.autograd.detect_mutation():
        y = x.exp(); saved_line = _line()  # noqa: E702
        write(y)
        assert y._version == 0
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    message = str(info.value)
    assert "bypassed version tracking" in message and "[nbgrad.FloatTensor [3]]" in message
    assert message.endswith(f"It was saved for ExpBackward by the forward call at {__file__}:"
                            f"{saved_line}.")
    y = x.exp()
    write(y)
    y.sum().backward()  # off again: the silent wrong gradient PyTorch gives too


def test_detect_mutation_passes_clean_graphs_and_tracked_writes_keep_their_error(device):
    x = nbgrad.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True, device=device)
    with nbgrad.autograd.detect_mutation():
        y = x * 1
        loss = (y.sigmoid() * y[:, :2].tanh().sum()).sum()
        y[:, 3:].mul_(2)  # a tracked write beside what was saved
        loss.backward()
        tx = torch.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=torch.float64,
                          requires_grad=True)
        ty = tx * 1
        (ty.sigmoid() * ty[:, :2].tanh().sum()).sum().backward()
        assert_close(x.grad, tx.grad)
        z = x.exp()
        z.add_(1)  # tracked: the stale-tensor error names it
        with pytest.raises(RuntimeError, match="It was modified in place by add_"):
            z.sum().backward()


def test_detect_mutation_is_a_switch_and_a_context_manager():
    assert not nbgrad.autograd.is_mutation_detection_enabled()
    nbgrad.autograd.detect_mutation(True)
    try:
        assert nbgrad.autograd.is_mutation_detection_enabled()
        with nbgrad.autograd.detect_mutation(False):
            assert not nbgrad.autograd.is_mutation_detection_enabled()
        assert nbgrad.autograd.is_mutation_detection_enabled()
    finally:
        nbgrad.autograd.detect_mutation(False)
    assert not nbgrad.autograd.is_mutation_detection_enabled()


def test_checksums_see_one_bit_and_a_swap(device):
    from nbgrad.backends import backend_of
    a = nbgrad.tensor(np.arange(1000, dtype=np.float32).reshape(10, 100), device=device)._data
    backend = backend_of(a)
    flipped = nbgrad.tensor(np.arange(1000, dtype=np.float32).reshape(10, 100), device=device)
    flipped[3, 7] = float(np.nextafter(np.float32(307), np.float32(400)))
    swapped = np.arange(1000, dtype=np.float32).reshape(10, 100)
    swapped[0, :2] = swapped[0, 1::-1]
    sums = {backend.checksum(a), backend.checksum(flipped._data),
            backend.checksum(nbgrad.tensor(swapped, device=device)._data)}
    assert len(sums) == 3
    strided = a[:, ::3]
    assert backend.checksum(strided) == backend.checksum(backend.ascontiguous(strided))


# ------------------------------------------------------------ nbgrad.kernel
@numba.njit
def _double_into(x, out):
    for i in range(x.shape[0]):
        out[i] = 2 * x[i]


@numba.njit
def _write_through_helper(x, out):
    _double_into(x, out[1:])


@numba.njit
def _reads_only(x, out):
    return np.sum(x) + out.shape[0]


@pytest.mark.parametrize("fn, writes", [(_double_into, {1}), (_write_through_helper, {1}),
                                        (_reads_only, set())])
def test_kernel_finds_the_arguments_it_writes(fn, writes):
    assert nbgrad.kernel(fn).writes == writes


def test_kernel_bumps_exactly_the_written_tensors_and_names_itself():
    x = nbgrad.arange(4.0)
    out = nbgrad.zeros(4)
    nbgrad.kernel(_double_into)(x, out)
    assert out.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert (x._version, out._version) == (0, 1)
    assert out._version_counter.write_that_made(1)[0] == "_double_into"


def test_kernel_refuses_a_write_into_saved_elements_before_launching():
    kernel = nbgrad.kernel(_double_into)
    x = nbgrad.arange(4.0)
    w = nbgrad.ones(8, requires_grad=True)
    z = (w * 1).exp()  # saves its output z
    before = z.detach().numpy().copy()
    with pytest.raises(RuntimeError, match=r"_double_into\(\) writes its argument 1, "
                       r"\[nbgrad.FloatTensor \[4\]\], whose elements a tensor saved for "
                       r"backward \(output 0 of Exp\) covers"):
        kernel(x, z.detach()[2:6])
    assert np.array_equal(z.detach().numpy(), before) and z._version == 0
    kernel(x, (w * 1).detach())  # a storage nothing saved
    z.sum().backward()
    kernel(x, z.detach())  # the graph has run: nothing saved remains
    assert z._version == 1


def test_kernel_allows_a_write_beside_the_saved_elements():
    kernel = nbgrad.kernel(_double_into)
    w = nbgrad.ones(8, requires_grad=True)
    y = w * 1
    z = y[:4].exp()  # saves z, its own storage
    p = y[4:] * y[4:]  # saves y[4:]
    with nbgrad.no_grad():
        kernel(nbgrad.arange(4.0), y[:4])  # beside y[4:]
    (z.sum() + p.sum()).backward()
    assert_close(w.grad, torch.cat([torch.ones(4).exp(), 2 * torch.ones(4)]))


def test_kernel_refuses_a_write_into_a_tensor_requiring_grad():
    y = nbgrad.ones(4, requires_grad=True) * 1
    with pytest.raises(RuntimeError, match="requires grad: the write would have no gradient"):
        nbgrad.kernel(_double_into)(nbgrad.arange(4.0), y)
    assert y._version == 0


def test_kernel_inside_a_function_with_mark_dirty():
    class DoubleInPlace(nbgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            nbgrad.kernel(_double_into)(x.detach().clone(), x)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    w = nbgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = w * 1
    out = DoubleInPlace.apply(y)
    assert out is y and y.tolist() == [2.0, 4.0, 6.0]
    assert y._version == 2  # the kernel's write and mark_dirty's
    out.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]


@cuda.jit
def _double_into_on_device(x, out):  # (a module global: the simulator swaps `cuda` there)
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = 2 * x[i]
        cuda.atomic.add(out, 0, 0.0)  # an atomic target counts as written


@cuda_only
def test_kernel_launches_a_cuda_kernel_on_device_tensors(device):
    kernel = nbgrad.kernel(_double_into_on_device)
    assert kernel.writes == {1}
    x = nbgrad.arange(8.0, device=device)
    out = nbgrad.zeros(16, device=device)[::2]  # a strided view, written where it lies
    kernel[1, 32](x, out)
    assert out.cpu().tolist() == [2.0 * k for k in range(8)]
    assert (x._version, out._version) == (0, 1)
    z = (nbgrad.ones(8, requires_grad=True, device=device) * 1).exp()
    with pytest.raises(RuntimeError, match="whose elements a tensor saved for backward"):
        kernel[1, 32](x, z.detach())
