"""Autograd on the device (nbgrad/autograd): hooks, retain_grad,
``autograd.grad``, ``backward(inputs=)``, grad modes, gradcheck with float64
CUDA inputs."""
import pytest

import nbgrad

from .support import assert_same, host, on_both, raised, run_both, same_error, values


def test_tensor_hooks_see_and_replace_device_gradients():
    seen = {}
    for device in ("cpu", "cuda"):
        x = nbgrad.tensor(values((2, 3), 1), device=device, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g, d=device: g * 3)
        handle = x.register_hook(lambda g, d=device: seen.setdefault(d, g.device) and None)
        y.sum().backward()
        handle.remove()
        seen[device + "-grad"] = x.grad
    assert seen["cuda"] == nbgrad.device("cuda:0") and seen["cpu"] == nbgrad.device("cpu")
    assert_same(seen["cuda-grad"], seen["cpu-grad"])


def test_hook_that_changes_dtype_is_refused_as_on_the_cpu():
    def run(x):
        y = x * 2
        y.register_hook(lambda g: g.double())
        y.sum().backward()
    cpu, cuda = on_both(values((2,), 2), dtype=nbgrad.float32, requires_grad=True)
    on_cpu, on_cuda = raised(run, cpu), raised(run, cuda)
    assert type(on_cuda) is type(on_cpu) is RuntimeError
    # torch names the types with their device (CUDAFloatType); nbgrad as Tensor.type() does
    assert str(on_cuda) == str(on_cpu).replace("nbgrad.", "nbgrad.cuda.")
    assert "(was nbgrad.FloatTensor got nbgrad.DoubleTensor)" in str(on_cpu)


def test_retain_grad_on_the_device():
    def fn(x):
        y = x.sigmoid()
        y.retain_grad()
        z = y * y
        fn.retained.append(y)
        return z
    fn.retained = []
    run_both(fn, values((2, 3), 3))
    cpu_y, cuda_y = fn.retained
    assert cuda_y.grad.is_cuda
    assert_same(cuda_y.grad, cpu_y.grad)


def test_autograd_grad_returns_device_tensors():
    results = {}
    for device in ("cpu", "cuda"):
        x = nbgrad.tensor(values((2, 3), 4), device=device, requires_grad=True)
        w = nbgrad.tensor(values((3,), 5), device=device, requires_grad=True)
        out = (x * w).tanh().sum(dim=1)
        seed = nbgrad.tensor([1.0, -2.0], dtype=nbgrad.float64, device=device)
        gx, gw = nbgrad.autograd.grad(out, (x, w), seed)
        assert x.grad is None and gx.device.type == device
        results[device] = gx, gw
    for got, want in zip(results["cuda"], results["cpu"]):
        assert_same(got, want)


def test_grad_output_on_another_device_is_refused():
    x = nbgrad.ones(2, device="cuda", requires_grad=True)
    error = raised(lambda: (x * 2).backward(nbgrad.ones(2)))
    assert str(error) == "invalid gradient at index 0 - expected device cuda:0 but got cpu"


def test_backward_with_inputs_only_fills_those():
    for device in ("cpu", "cuda"):
        a = nbgrad.ones(2, device=device, requires_grad=True)
        b = nbgrad.ones(2, device=device, requires_grad=True)
        (a * b * 3).sum().backward(inputs=[b])
        assert a.grad is None and host(b.grad).tolist() == [3.0, 3.0] and b.grad.device == b.device


def test_grad_modes_on_the_device():
    x = nbgrad.ones(2, device="cuda", requires_grad=True)
    with nbgrad.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None
    with nbgrad.enable_grad():
        assert (x * 2).requires_grad
    assert str(raised(lambda: (x * 2).requires_grad_(False))).startswith(
        "you can only change requires_grad flags of leaf variables")


def test_a_zero_dim_leaf_used_three_times():
    x = nbgrad.tensor(1.5, dtype=nbgrad.float64, device="cuda", requires_grad=True)
    (x * x + x).backward()
    assert x.grad.is_cuda and x.grad.item() == 4.0  # 2x + 1


def test_a_long_chain_through_many_ops():
    def fn(x, w):
        h = (x @ w).relu() + x.mean(dim=1, keepdim=True)
        h = nbgrad.cat([h, h.exp()], dim=1).log_softmax(1)
        return h[:, ::2].sum(dim=0) * h.amax()
    run_both(fn, values((2, 3), 6), values((3, 2), 7), dtype=nbgrad.float64)


def _functions():
    return {
        "elementwise": lambda x, w: (x * w).sigmoid() / (1 + x.exp()),
        "broadcast": lambda x, w: x.pow(2) - w[0],
        "matmul": lambda x, w: x @ w.t(),
        "reductions": lambda x, w: (x.sum(dim=0) * w.amax(dim=0)).softmax(0),
        "indexing": lambda x, w: (x[:, nbgrad.tensor([1, 0, 1], device=x.device)]
                                  * w[:, x[0].detach() > 0].sum()),
        "views-cat": lambda x, w: nbgrad.cat([x.t().reshape(-1), w.view(-1)]).max(dim=0).values,
    }


@pytest.mark.parametrize("name", sorted(_functions()))
def test_gradcheck_with_float64_device_inputs(name):
    fn = _functions()[name]
    x = nbgrad.tensor(values((2, 3), 8), dtype=nbgrad.float64, device="cuda", requires_grad=True)
    w = nbgrad.tensor(values((2, 3), 9), dtype=nbgrad.float64, device="cuda", requires_grad=True)
    assert nbgrad.autograd.gradcheck(fn, (x, w))


def test_gradcheck_catches_a_wrong_device_gradient():
    wrong = nbgrad.elementwise("wrong_square", lambda a: a * a, grads={"a": lambda g, a: 3 * g * a})
    x = nbgrad.tensor(values((3,), 10), dtype=nbgrad.float64, device="cuda", requires_grad=True)
    assert nbgrad.autograd.gradcheck(wrong, (x,), raise_exception=False) is False
    error = raised(nbgrad.autograd.gradcheck, wrong, (x,))
    assert isinstance(error, nbgrad.autograd.GradcheckError)
    assert host(x).tolist() == values((3,), 10).tolist()  # perturbations are undone


def test_hook_that_moves_the_gradient_to_the_cpu_is_refused():
    x = nbgrad.ones(2, device="cuda", requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g.cpu())
    error = raised(y.sum().backward)
    assert type(error) is RuntimeError and "has changed the type of value" in str(error)
    assert "(was nbgrad.cuda.FloatTensor got nbgrad.FloatTensor)" in str(error)
