"""In-place writes on the device (nbgrad/ops/mutation.py): version counters
shared by views and ``detach()``, ``.data``'s own counter, the refusals and
their messages exactly as on the CPU (the stale saved tensor names the op
and the file:line of the write), history rebased through views."""
import pytest

import nbgrad

from .support import assert_same, host, on_both, run_both, same_error, values


def test_version_counter_is_shared_by_views_and_detach_but_not_data():
    for device in ("cpu", "cuda"):
        t = nbgrad.tensor(values((2, 3), 1), device=device)
        view, alias, data = t[1], t.detach(), t.data
        view.add_(1)
        assert t._version == view._version == alias._version == 1
        alias.mul_(2)
        assert t._version == 2
        data.zero_()
        assert t._version == 2 and data._version == 1
        assert host(t).sum() == 0.0


def _stale(kind):
    """Build a graph on ``x`` that saves a tensor, then make it stale."""
    def run(x):
        if kind == "input":  # mul saves its inputs
            y = x * 1
            z = y * y
            y.add_(1)
        elif kind == "output":  # sigmoid saves its output
            z = (x * 1).sigmoid()
            z.mul_(2)
        elif kind == "view":  # an in-place write through a view of the saved tensor
            y = x * 1
            z = y.sin()  # saves its input
            y[0].zero_()
        else:  # the saved tensor's detach() alias is written
            y = x * 1
            z = y.tanh()
            z.detach().fill_(0.5)
        z.sum().backward()
    return run


@pytest.mark.parametrize("kind", ["input", "output", "view", "detach"])
def test_stale_saved_tensor_message_as_on_the_cpu(kind):
    cpu, cuda = on_both(values((3,), 2), dtype=nbgrad.float32, requires_grad=True)
    error = same_error(_stale(kind), (cpu,), (cuda,))
    message = str(error)
    assert message.startswith("one of the variables needed for gradient computation has been "
                              "modified by an inplace operation: [nbgrad.FloatTensor [3]]")
    assert "It was modified in place by" in message and "test_mutation.py:" in message


@pytest.mark.parametrize("call", [
    lambda x: x.add_(1), lambda x: x[0].mul_(2), lambda x: x.t().zero_(),
    lambda x: x.__setitem__(0, 1.0), lambda x: x.copy_(x.detach() * 2),
    lambda x: x.view(-1).fill_(1),
], ids=["leaf", "view-of-leaf", "transposed-leaf", "setitem", "copy", "flat-view"])
def test_inplace_on_leaves_is_refused_as_on_the_cpu(call):
    cpu, cuda = on_both(values((2, 2), 3), requires_grad=True)
    error = same_error(call, (cpu,), (cuda,))
    assert "leaf Variable that requires grad is being used in an in-place operation" in str(error)
    assert cuda._version == 0 and host(cuda).tolist() == cpu.detach().numpy().tolist()


def test_no_grad_view_and_detach_view_refusals():
    def write_no_grad_view(x):
        y = x * 1
        with nbgrad.no_grad():
            v = y[0]
        v.mul_(2)

    def detach_view(x):
        x[0].detach_()
    cpu, cuda = on_both(values((2, 2), 4), requires_grad=True)
    same_error(write_no_grad_view, (cpu,), (cuda,))
    same_error(detach_view, (cpu,), (cuda,))


def test_inplace_under_no_grad_writes_the_leaf():
    cpu, cuda = on_both(values((2, 2), 5), requires_grad=True)
    for t in (cpu, cuda):
        with nbgrad.no_grad():
            t.mul_(2)
            t[0, 0] = 1.0
        assert t._version == 2 and t.is_leaf
    assert_same(cuda.detach(), cpu.detach())


def test_rebased_history_of_a_non_leaf():
    def fn(x):
        y = x * 2
        y.mul_(3)
        y.sigmoid_()
        return y
    out, want = run_both(fn, values((2, 3), 6))
    assert out.grad_fn.name() == want.grad_fn.name()


@pytest.mark.parametrize("write", [
    lambda v, w: v.mul_(w[0]), lambda v, w: v.copy_(w[1]), lambda v, w: v.exp_(),
    lambda v, w: v.__setitem__(1, w[0, 0]), lambda v, w: v.clamp_(-0.5, 0.5),
], ids=["mul", "copy", "exp", "setitem", "clamp"])
def test_copy_slices_through_a_view(write):
    """An in-place op on a view of a non-leaf rebases the base's history
    (CopySlices); the base and other views get the right gradients."""
    def fn(x, w):
        base = x * 1
        other = base[:, 0]  # a second view, re-derived from the new history
        view = base.t()[1]
        write(view, w)
        return base * 2 + other.sum()
    out, want = run_both(fn, values((3, 3), 7), values((2, 3), 8), dtype=nbgrad.float64)
    assert out.grad_fn.name() == want.grad_fn.name()


def test_view_history_after_base_write():
    cpu, cuda = on_both(values((2, 3), 9), requires_grad=True)
    names = []
    for x in (cpu, cuda):
        base = x * 1
        view = base[0]
        base.add_(1)
        names.append(view.grad_fn.name())
        view.sum().backward()
    assert names[0] == names[1]
    assert_same(cuda.grad, cpu.grad)


def test_backward_twice_and_without_grad_fn_as_on_the_cpu():
    def twice(x):
        y = x.sigmoid().sum()
        y.backward()
        y.backward()

    def no_graph(x):
        x.detach().sum().backward()
    cpu, cuda = on_both(values((2,), 10), requires_grad=True)
    assert "backward through the graph a second time" in str(same_error(twice, (cpu,), (cuda,)))
    same_error(no_graph, (cpu,), (cuda,))
    same_error(lambda x: (x * 2).backward(), (cpu,), (cuda,))  # not a scalar
