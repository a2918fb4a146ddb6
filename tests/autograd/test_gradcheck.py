"""``nbgrad.autograd.gradcheck``: central finite differences in float64
against the analytical gradients. It passes for correct functions (including
in-place writes through views), fails loudly for a wrong derivative, and
refuses float32 inputs."""
import math

import numpy as np
import pytest
import torch

import nbgrad
from nbgrad.autograd import GradcheckError, gradcheck
from helpers import values

F64 = nbgrad.float64


def _leaf(values, requires_grad=True):
    return nbgrad.tensor(values, dtype=F64, requires_grad=requires_grad)


def _random(*shape, low=-1.0, high=1.0, seed=0, requires_grad=True):
    rng = np.random.default_rng(seed)
    return _leaf(rng.uniform(low, high, shape).tolist(), requires_grad)


def _copyslices(a, w):
    b = a * 1
    b[1:3].mul_(w)
    return b.sigmoid()


def _inplace_on_a_transposed_clone(a):
    b = a.clone()
    b[1].mul_(b[0] + 1)  # an operand computed from the destination's storage
    b.t()[0].exp_()  # saves its output: nothing may write into b after this
    return b * b


def _view_used_after_its_base_changed(a):
    b = a * 2
    v = b[:, 1:]
    b.tanh_()
    return v.sum(0) * b[0, 0]


CORRECT = {
    "sigmoid": (lambda a: a.sigmoid(), lambda: (_random(2, 3),)),
    "exp, tanh, sin chain": (lambda a: a.exp().tanh().sin(), lambda: (_random(4),)),
    "mul": (lambda a, b: a * b, lambda: (_random(3, seed=1), _random(3, seed=2))),
    "div": (lambda a, b: a / b, lambda: (_random(3, seed=1), _random(3, low=0.5, high=2.0))),
    "pow": (lambda a, b: a ** b, lambda: (_random(3, low=0.5, high=2.0), _random(3, seed=3))),
    "broadcast add": (lambda a, b: (a + b).relu() * b,
                      lambda: (_random(3, 1, seed=4), _random(1, 4, seed=5))),
    "matmul": (lambda a, b: a @ b, lambda: (_random(2, 3, seed=6), _random(3, 2, seed=7))),
    "reductions": (lambda a: a.sum(0) * a.mean() + a.amax(), lambda: (_random(3, 2, seed=8),)),
    "softmax": (lambda a: a.log_softmax(1) + a.softmax(0), lambda: (_random(2, 3, seed=9),)),
    "copyslices": (_copyslices, lambda: (_random(4, seed=10), _random(2, seed=11))),
    "in-place on a transposed clone": (_inplace_on_a_transposed_clone,
                                       lambda: (_random(2, 2, seed=12),)),
    "view after its base changed": (_view_used_after_its_base_changed,
                                    lambda: (_random(2, 3, seed=13),)),
    "two outputs": (lambda a, b: (a * b, a.sin()), lambda: (_random(3), _random(3, seed=14))),
    "an input without grad": (lambda a, c: a * c + c,
                              lambda: (_random(3), _random(3, seed=15, requires_grad=False))),
    "non-contiguous input": (lambda a: a.sigmoid() * a,
                             lambda: (_random(3, 2, seed=16).detach().t().requires_grad_(),)),
}


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_passes_for_correct_functions(name):
    func, make_inputs = CORRECT[name]
    inputs = make_inputs()
    before = [(t.detach().numpy().copy(), t._version) for t in inputs]
    assert gradcheck(func, inputs) is True
    for t, (values, version) in zip(inputs, before):  # inputs left as they were
        np.testing.assert_array_equal(t.detach().numpy(), values)
        assert t._version == version
        assert t.grad is None  # gradcheck uses autograd.grad: nothing accumulated


def test_agrees_with_torch_gradcheck_on_the_same_function():
    values = np.random.default_rng(17).uniform(-1, 1, (2, 3))

    def func(lib, a):
        b = a * 1
        b[:, 1:].mul_(a[:, :2] + 2)
        return (b.exp() * a).sum(1)

    ours = gradcheck(lambda a: func(nbgrad, a), (_leaf(values.tolist()),))
    theirs = torch.autograd.gradcheck(
        lambda a: func(torch, a), (torch.tensor(values, dtype=torch.float64, requires_grad=True),))
    assert ours is True and theirs is True


_square_right = nbgrad.elementwise("gradcheck_square_right", lambda a: a * a,
                                   grads={"a": lambda g, a: 2 * g * a})
_square_wrong = nbgrad.elementwise("gradcheck_square_wrong", lambda a: a * a,
                                   grads={"a": lambda g, a: g * a})  # the 2 is missing
_hypot_wrong_b = nbgrad.elementwise(
    "gradcheck_hypot_wrong_b", lambda a, b: math.sqrt(a * a + b * b),
    grads={"a": lambda g, a, out: g * a / out, "b": lambda g, a, out: g * a / out})  # b's uses a


def test_custom_row_with_the_right_derivative_passes():
    assert gradcheck(_square_right, (_random(5, seed=18),))


def test_custom_row_with_a_wrong_derivative_fails():
    x = _random(5, seed=19)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_square_wrong, (x,))
    assert isinstance(info.value, RuntimeError)
    assert str(info.value).startswith("Jacobian mismatch for output 0 with respect to input 0,\n"
                                      "numerical:")
    assert gradcheck(_square_wrong, (x,), raise_exception=False) is False


def test_the_message_names_the_wrong_input_and_output():
    a, b = _random(3, low=0.5, high=1.0, seed=20), _random(3, low=1.5, high=2.0, seed=21)
    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 0 with respect to "
                                             "input 1,"):
        gradcheck(_hypot_wrong_b, (a, b))
    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 1 with respect to "
                                             "input 0,"):
        gradcheck(lambda t: (t.sigmoid(), _square_wrong(t)), (a,))


def test_refuses_float32_inputs():
    x = nbgrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(GradcheckError, match="float64") as info:
        gradcheck(lambda t: t.sigmoid(), (x,))
    assert isinstance(info.value, RuntimeError)
    # float32 tensors that do not require grad are just constants
    assert gradcheck(lambda a, c: a * c, (_random(2), nbgrad.tensor([3.0, 4.0])))


def test_a_single_tensor_is_accepted_as_inputs():
    assert gradcheck(lambda t: t.exp(), _random(3, seed=22))


# ------------------------------------------------------------ on every device
DEVICE_FUNCTIONS = {
    "elementwise": lambda x, w: (x * w).sigmoid() / (1 + x.exp()),
    "broadcast": lambda x, w: x.pow(2) - w[0],
    "matmul": lambda x, w: x @ w.t(),
    "reductions": lambda x, w: (x.sum(dim=0) * w.amax(dim=0)).softmax(0),
    "indexing": lambda x, w: (x[:, nbgrad.tensor([1, 0, 1], device=x.device)]
                              * w[:, x[0].detach() > 0].sum()),
    "views-cat": lambda x, w: nbgrad.cat([x.t().reshape(-1), w.view(-1)]).max(dim=0).values,
}


@pytest.mark.parametrize("name", sorted(DEVICE_FUNCTIONS))
def test_gradcheck_with_float64_inputs_on_the_device(name, device):
    x, w = (nbgrad.tensor(values((2, 3), seed), dtype=nbgrad.float64, device=device,
                          requires_grad=True) for seed in (8, 9))
    assert gradcheck(DEVICE_FUNCTIONS[name], (x, w))


def test_gradcheck_catches_a_wrong_gradient_on_the_device(device):
    wrong = nbgrad.elementwise("wrong_square", lambda a: a * a, grads={"a": lambda g, a: 3 * g * a})
    x = nbgrad.tensor(values((3,), 10), dtype=nbgrad.float64, device=device, requires_grad=True)
    assert gradcheck(wrong, (x,), raise_exception=False) is False
    with pytest.raises(GradcheckError):
        gradcheck(wrong, (x,))
    assert x.tolist() == values((3,), 10).tolist()  # perturbations are undone
