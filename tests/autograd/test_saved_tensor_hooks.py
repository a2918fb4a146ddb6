"""Saved-tensor hooks (``nbgrad.autograd.graph``) against PyTorch 2.13:
``saved_tensors_hooks`` on every path that saves (generated straight-line
code, the general path, views, matmul, reductions, in-place ops), nesting,
the grad mode hooks run in, their errors, ``save_on_cpu``,
``disable_saved_tensors_hooks``; and ``grad_fn._saved_<name>``.

Where nbgrad differs: an in-place write to a tensor whose storage the
unpack hook gives back (identity hooks) is caught as without hooks (PyTorch
checks no version through hooks, and computes with the new values); mul
packs ``self`` before ``other``; a broadcasting elementwise op unpacks twice
on the CPU (marked xfail below)."""
import threading

import numpy as np
import pytest
import torch

import nbgrad
from differential import differential
from helpers import assert_close, assert_same_tensor, leaf, values

F32 = nbgrad.float32


def _graph(lib):
    return lib.autograd.graph


def _pairs(lib, device="cpu"):
    a = leaf(lib, values((2, 3), 1), F32, device, requires_grad=True)
    b = leaf(lib, values((2, 3), 2), F32, device, requires_grad=True)
    return a, b


# What each op saves, PyTorch's and nbgrad's alike: (name, function of a, b).
SAVING_OPS = [
    ("mul", lambda a, b: a * b, 2),
    ("div", lambda a, b: a / (b.abs() + 1), 3),  # abs saves its input too
    ("sigmoid (its result)", lambda a, b: a.sigmoid(), 1),
    ("exp (its result)", lambda a, b: a.exp(), 1),
    ("log", lambda a, b: (a.abs() + 1).log(), 2),
    ("mul with a number", lambda a, b: a * 3.0, 0),
    ("add", lambda a, b: a + b, 0),
    ("broadcast mul (general path)", lambda a, b: a * b[0], 2),
    ("mul of views", lambda a, b: a[:, 1:] * b[:, :2], 2),
    ("matmul", lambda a, b: a @ b.T, 2),
    ("softmax (its result)", lambda a, b: a.softmax(1), 1),
    ("sum", lambda a, b: a.sum(), 0),
]


@pytest.mark.parametrize("name,fn,count", SAVING_OPS, ids=[s[0] for s in SAVING_OPS])
def test_every_saved_tensor_goes_through_the_hooks_like_torch(name, fn, count, device):
    seen = {}
    grads = {}
    for lib in (nbgrad, torch):
        a, b = _pairs(lib, device if lib is nbgrad else "cpu")
        packed, unpacked = [], []

        def pack(x):
            packed.append(sorted(np.round(x.detach().cpu().numpy().ravel(), 4).tolist()))
            return x.detach()

        def unpack(x):
            unpacked.append(1)
            return x
        with _graph(lib).saved_tensors_hooks(pack, unpack):
            out = fn(a, b)
        assert len(unpacked) == 0
        out.sum().backward()
        seen[lib] = (sorted(packed), len(unpacked))
        grads[lib] = (a.grad, b.grad)
    assert seen[nbgrad] == seen[torch]
    assert len(seen[nbgrad][0]) == count
    for ours, theirs in zip(grads[nbgrad], grads[torch]):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert ours.device.type == device
            assert_same_tensor(ours, theirs)


def test_an_in_place_op_packs_what_it_saves():
    def scenario(lib, tr):
        a = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        shapes = []
        with lib.autograd.graph.saved_tensors_hooks(
                lambda x: shapes.append(tuple(x.shape)) or x.detach().clone(), lambda x: x):
            y = a * 1
            y.sigmoid_()  # saves its result, after the write
        tr.note("packed", shapes)
        y.sum().backward()
        tr.grad("a.grad", a)

    differential(scenario)


def test_the_pack_hook_sees_the_tensors_themselves():
    for lib in (nbgrad, torch):
        a = lib.tensor([0.5, -1.0], requires_grad=True)
        b = lib.tensor([[0.5, -1.0]], requires_grad=True)
        seen = []
        with lib.autograd.graph.saved_tensors_hooks(lambda x: seen.append(x) or x.detach(),
                                                    lambda x: x):
            a.sin()  # saves its input
            z = a.exp()  # its output
            w = (a + b).softmax(1)  # the general path's output
        assert seen[0] is a
        assert seen[1] is z and seen[1].grad_fn is z.grad_fn
        assert seen[2] is w and seen[2].grad_fn is w.grad_fn


def test_innermost_hooks_apply_and_the_outer_ones_come_back():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        log = []

        def hooks(name):
            return (lambda x: log.append(name) or x.detach(), lambda x: x)
        with lib.autograd.graph.saved_tensors_hooks(*hooks("outer")):
            with lib.autograd.graph.saved_tensors_hooks(*hooks("inner")):
                y = a * a
            z = a.sin()
        w = a.cos()  # no hooks
        tr.note("packs", log)
        (y + z + w).sum().backward()
        tr.grad("a.grad", a)

    differential(scenario)


def test_hooks_run_with_grad_mode_off_except_unpack_in_a_graph_building_backward():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        log = []

        def pack(x):
            log.append(("pack", lib.is_grad_enabled()))
            y = x * x  # records nothing: grad mode is off
            log.append(("pack result requires grad", y.requires_grad))
            return x.detach()

        def unpack(x):
            log.append(("unpack", lib.is_grad_enabled()))
            return x
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = a * a
        lib.autograd.grad(y.sum(), a, create_graph=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = a * a
        y.sum().backward()
        tr.note("grad modes", log)
        tr.grad("a.grad", a)

    differential(scenario)


def test_a_pack_hook_may_return_anything_its_unpack_hook_understands(device):
    grads = {}
    for lib in (nbgrad, torch):
        a, b = _pairs(lib, device if lib is nbgrad else "cpu")
        store = []

        def pack(x):
            store.append(x.detach().clone())
            return len(store) - 1  # an index, not a tensor

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda i: store[i]):
            out = (a * b).sigmoid() * a
        out.sum().backward()
        grads[lib] = a.grad, b.grad
    for ours, theirs in zip(grads[nbgrad], grads[torch]):
        assert_same_tensor(ours, theirs)


def test_hook_errors_like_torch():
    def scenario(lib, tr):
        graph = lib.autograd.graph
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        with graph.saved_tensors_hooks(lambda x: x.detach(), lambda x: 5):
            y = a * a
        tr.call("unpack returns an int", lambda: y.sum().backward())
        with graph.saved_tensors_hooks(lambda x: x.detach(), lambda x: x):
            y = a * a
        y.sum().backward()
        tr.call("a second backward", lambda: y.sum().backward())
        with graph.saved_tensors_hooks(lambda x: x.detach(), lambda x: x.double()):
            y = a * a
        y.sum().backward()  # another dtype: computed in the saved dtype
        tr.grad("a.grad", a)

        def pack_raises(x):
            raise ValueError("no packing today")
        with graph.saved_tensors_hooks(pack_raises, lambda x: x):
            tr.call("pack raises", lambda: a * a)
            tr.call("an op that saves nothing", lambda: (a + a).sum().item())

    differential(scenario)


def test_an_unpack_hook_may_give_back_another_layout_like_torch(device):
    grads = {}
    for lib in (nbgrad, torch):
        a, b = _pairs(lib, device if lib is nbgrad else "cpu")
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x.detach().t().contiguous(),
                                                    lambda x: x.t()):  # a transposed view
            out = (a * b).sigmoid()
        out.sum().backward()
        grads[lib] = a.grad, b.grad
    for ours, theirs in zip(grads[nbgrad], grads[torch]):
        assert_same_tensor(ours, theirs)


def test_an_unpack_hook_of_another_size_is_refused():
    a = nbgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with nbgrad.autograd.graph.saved_tensors_hooks(lambda x: x.detach(), lambda x: x[:2]):
        y = a * a
    with pytest.raises(RuntimeError, match=r"unpack_hook returned a tensor of size \[2\], but "
                                           r"the tensor saved had size \[3\]"):
        y.sum().backward()


def test_a_copy_taken_by_the_hooks_does_not_go_stale_like_torch(device):
    grads = {}
    for lib in (nbgrad, torch):
        a, b = _pairs(lib, device if lib is nbgrad else "cpu")
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x.detach().clone(), lambda x: x):
            h = a * 1
            y = h * b
        with lib.no_grad():
            h.add_(1)  # the hooks hold a copy made before the write
        y.sum().backward()
        grads[lib] = b.grad
    assert_same_tensor(grads[nbgrad], grads[torch])


def test_the_saved_storage_given_back_is_still_version_checked():
    # PyTorch checks no version through hooks (and computes with the new
    # values); nbgrad catches the write as it does without hooks.
    a = nbgrad.tensor([1.0, 2.0], requires_grad=True)
    with nbgrad.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
        h = a * 1
        y = h * a
    h.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: .* which is "
                                           r"output 0 of Add, is at version 1; expected version "
                                           r"0 instead\. It was modified in place by add_\(\)"):
        y.sum().backward()


def test_second_derivatives_through_hooks_match_torch():
    def scenario(lib, tr):
        a = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x.detach().clone(),
                                                    lambda x: x):
            y = (a * a.sin()).sum()
            (g,) = lib.autograd.grad(y, a, create_graph=True)
        tr.values("first", g)
        g.sum().backward()
        tr.grad("second", a)

    differential(scenario)


def test_hooks_are_per_thread():
    a = nbgrad.tensor([1.0, 2.0], requires_grad=True)
    packed, results = [], {}

    def other_thread():
        results["y"] = a * a  # no hooks here
    with nbgrad.autograd.graph.saved_tensors_hooks(lambda x: packed.append(1) or x.detach(),
                                                  lambda x: x):
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert packed == []
    results["y"].sum().backward()
    assert a.grad.tolist() == [2.0, 4.0]


def test_disable_saved_tensors_hooks_like_torch():
    def scenario(lib, tr):
        graph = lib.autograd.graph
        a = lib.tensor([1.0, 2.0], requires_grad=True)

        def enter_hooks():
            with graph.saved_tensors_hooks(lambda x: x, lambda x: x):
                pass
        with graph.disable_saved_tensors_hooks("hooks are off here"):
            tr.call("hooks inside", enter_hooks)
            tr.values("an op still works", a * a)
        tr.call("hooks after", enter_hooks)

        def disable_inside_hooks():
            with graph.saved_tensors_hooks(lambda x: x, lambda x: x):
                with graph.disable_saved_tensors_hooks("too late"):
                    pass
        tr.call("disable inside hooks", disable_inside_hooks)

    differential(scenario)


# ------------------------------------------------------------ save_on_cpu
def test_save_on_cpu_keeps_a_cpu_tensor_as_it_is_like_torch():
    def scenario(lib, tr):
        a = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.save_on_cpu():
            y = (a * a.exp()).sigmoid()
        tr.note("the saved input is the input", y.grad_fn._saved_result is not None)
        y.sum().backward()
        tr.grad("a.grad", a)

    differential(scenario)


def test_save_on_cpu_moves_saved_tensors_to_the_host_and_back(device):
    a = nbgrad.tensor(values((3, 4), 3), dtype=F32, device=device, requires_grad=True)
    b = nbgrad.tensor(values((3, 4), 4), dtype=F32, device=device, requires_grad=True)
    with nbgrad.autograd.graph.save_on_cpu(pin_memory=False):
        y = (a * b).tanh()
    packed = [s.data.value for s in y.grad_fn.saved] + \
             [s.data.value for s in y.grad_fn.next_functions[0][0].saved]
    assert packed and all(d.type == device and t.device.type == "cpu" for d, t in packed)
    y.sum().backward()
    ta, tb = (torch.tensor(values((3, 4), k), dtype=torch.float32, requires_grad=True)
              for k in (3, 4))
    (ta * tb).tanh().sum().backward()
    assert a.grad.device.type == device
    assert_close(a.grad, ta.grad)
    assert_close(b.grad, tb.grad)


# ------------------------------------------------------------ grad_fn._saved_<name>
SAVED_NAMES = [
    ("mul", lambda a, b, x, w: a * b),
    ("div", lambda a, b, x, w: a / b),
    ("pow with a number", lambda a, b, x, w: a ** 2),
    ("pow of tensors", lambda a, b, x, w: a ** b),
    ("sigmoid", lambda a, b, x, w: a.sigmoid()),
    ("tanh", lambda a, b, x, w: a.tanh()),
    ("exp", lambda a, b, x, w: a.exp()),
    ("log", lambda a, b, x, w: a.log()),
    ("sqrt", lambda a, b, x, w: a.sqrt()),
    ("relu", lambda a, b, x, w: a.relu()),
    ("sin", lambda a, b, x, w: a.sin()),
    ("maximum", lambda a, b, x, w: a.maximum(b)),
    ("sum", lambda a, b, x, w: x.sum()),
    ("mean", lambda a, b, x, w: x.mean()),
    ("view", lambda a, b, x, w: x.view(6)),
    ("expand", lambda a, b, x, w: a.expand(2, 3)),
    ("softmax", lambda a, b, x, w: x.softmax(0)),
    ("add", lambda a, b, x, w: a + b),
]
# PyTorch's MmBackward0 also has the operands' strides.
_EXTRA = {"_saved_mat2_sym_strides", "_saved_self_sym_strides"}


def _operands(lib):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    x = lib.ones(2, 3, requires_grad=True)
    w = lib.ones(3, 4, requires_grad=True)
    return a, b, x, w


def _saved_names(fn):
    return sorted(n for n in dir(fn) if n.startswith(("_saved_", "_raw_saved_")))


@pytest.mark.parametrize("name,fn", SAVED_NAMES, ids=[s[0] for s in SAVED_NAMES])
def test_saved_values_have_torchs_names_and_values(name, fn):
    ours, theirs = fn(*_operands(nbgrad)).grad_fn, fn(*_operands(torch)).grad_fn
    assert _saved_names(ours) == _saved_names(theirs)
    for attr in _saved_names(ours):
        if attr.startswith("_raw_"):
            continue
        got, want = getattr(ours, attr), getattr(theirs, attr)
        if isinstance(want, torch.Tensor):
            assert_close(got, want)
        else:
            assert got == want, attr


def test_matmul_saves_self_and_mat2():
    ours, theirs = ((x @ w).grad_fn for _, _, x, w in (_operands(nbgrad), _operands(torch)))
    assert set(_saved_names(ours)) == set(_saved_names(theirs)) - _EXTRA
    assert_close(ours._saved_self, theirs._saved_self)
    assert_close(ours._saved_mat2, theirs._saved_mat2)
    assert ours._saved_self_sym_sizes == tuple(theirs._saved_self_sym_sizes)
    assert ours._saved_mat2_sym_sizes == tuple(theirs._saved_mat2_sym_sizes)


def test_saved_values_are_the_inputs_themselves_and_results_with_their_node():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = a * b
        tr.note("_saved_self is a", y.grad_fn._saved_self is a)
        tr.note("_saved_other is b", y.grad_fn._saved_other is b)
        s = a.sigmoid()
        result = s.grad_fn._saved_result
        tr.values("_saved_result", result)
        tr.note("its grad_fn is the node", result.grad_fn is s.grad_fn)
        tr.note("pow's exponent", float((a ** 2).grad_fn._saved_exponent))
        summed = lib.ones(2, 3, requires_grad=True).sum()
        tr.note("sum's sizes", summed.grad_fn._saved_self_sym_sizes)
        y.sum().backward()
        tr.call("read after backward", lambda: y.grad_fn._saved_self)
        tr.call("a name the node lacks", lambda: y.grad_fn._saved_result)

    differential(scenario)


def test_raw_saved_tensors_take_hooks_of_their_own():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = a.exp()
        log = []
        y.grad_fn._raw_saved_result.register_hooks(
            lambda x: log.append(("pack", x.tolist())) or x.detach() * 2,
            lambda x: log.append(("unpack", x.tolist())) or x / 2)
        y.sum().backward()
        tr.note("hooks", log)
        tr.grad("a.grad", a)

    differential(scenario)
