"""Run an nbgrad.nn module or function on the CPU and on CUDA with the same
weights and inputs, backward the same cotangent, compare everything."""
import copy

import numpy as np

import nbgrad

DTYPES = [nbgrad.float32, nbgrad.float64]
DTYPE_IDS = ["float32", "float64"]
# Layer outputs are sums of products taken in another order on the device
# (tiled matmul vs BLAS): float32 differs by a few ulp of the sums' magnitude.
TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def close(cuda_value, cpu_value, what=""):
    assert cuda_value.device == nbgrad.device("cuda", 0), what
    assert cpu_value.device == nbgrad.device("cpu"), what
    assert cuda_value.dtype is cpu_value.dtype and cuda_value.shape == cpu_value.shape, what
    got = cuda_value.detach().cpu().numpy()
    expected = cpu_value.detach().numpy()
    if cpu_value.dtype.is_floating_point:
        np.testing.assert_allclose(got, expected, err_msg=what, **TOL[cpu_value.dtype.name])
    else:
        np.testing.assert_array_equal(got, expected, err_msg=what)


def on_both(fn, module, inputs, dtype, seed=0, grad_inputs=True):
    """``fn(module, *inputs)`` on both devices (``module`` may be None).
    Floating NumPy inputs become leaves that require grad; the module is
    copied to CUDA with ``.to("cuda")`` (identical weights). Backward runs a
    random cotangent; returns (cpu results, cuda results) as dicts of output,
    input grads and parameter grads, already compared."""
    results = []
    for device in ("cpu", "cuda"):
        mod = None
        if module is not None:
            mod = copy.deepcopy(module).to(device=device, dtype=dtype)
        args = []
        for x in inputs:
            if isinstance(x, np.ndarray):
                floating = x.dtype.kind == "f"
                args.append(nbgrad.tensor(x, dtype=dtype if floating else None, device=device,
                                          requires_grad=floating and grad_inputs))
            else:
                args.append(x)
        nbgrad.manual_seed(seed)  # same dropout masks on both devices
        out = fn(mod, *args)
        if out.requires_grad:
            g = np.random.default_rng(seed).standard_normal(tuple(out.shape))
            out.backward(nbgrad.tensor(g, dtype=out.dtype, device=device))
        grads = {f"input {k}": a.grad for k, a in enumerate(args)
                 if isinstance(a, nbgrad.Tensor) and a.grad is not None}
        if mod is not None:
            grads.update({name: p.grad for name, p in mod.named_parameters()})
        results.append((out, grads, mod))
    (out_cpu, grads_cpu, mod_cpu), (out_cuda, grads_cuda, mod_cuda) = results
    close(out_cuda, out_cpu, "output")
    assert sorted(grads_cpu) == sorted(grads_cuda)
    for name in grads_cpu:
        if grads_cpu[name] is None:
            assert grads_cuda[name] is None, name
        else:
            close(grads_cuda[name], grads_cpu[name], f"grad of {name}")
    if mod_cuda is not None:
        assert all(p.device.type == "cuda" for p in mod_cuda.parameters())
    return results
