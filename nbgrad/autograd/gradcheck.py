"""Finite-difference gradient checking (central differences, float64):
``gradcheck`` for first derivatives, ``gradgradcheck`` for second ones."""
import numpy as np

from ..gradients import grad
from ..tape.grad_mode import enable_grad, no_grad
from ..tensor import Tensor


class GradcheckError(RuntimeError):
    pass


def _jacobians(func, inputs, outputs, eps):
    """Numerical and analytical Jacobians, one (n_out, n_in) matrix per differentiable input."""
    diff_inputs = [t for t in inputs if getattr(t, "requires_grad", False)]
    out_sizes = [o.numel() for o in outputs]
    numerical = []
    for t in diff_inputs:
        data = t._data  # perturbed in place (any layout), restored after
        jac = np.zeros((sum(out_sizes), data.size))
        for j, index in enumerate(np.ndindex(data.shape)):  # C order, as reshape(-1) below
            original = data[index].item()  # a value, not a (device) view of it
            with no_grad():
                data[index] = original + eps
                plus = [_flat(o) for o in _outputs(func(*inputs))]
                data[index] = original - eps
                minus = [_flat(o) for o in _outputs(func(*inputs))]
            data[index] = original
            jac[:, j] = np.concatenate([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
        numerical.append(jac)
    analytical = [np.zeros_like(j) for j in numerical]
    row = 0
    for o, size in zip(outputs, out_sizes):
        for k in range(size):
            seed = np.zeros(size, dtype=o._data.dtype)
            seed[k] = 1
            seed = Tensor._wrap(o._backend.asarray(seed.reshape(o._data.shape)), backend=o._backend)
            grads = grad([o], diff_inputs, [seed],
                         retain_graph=True, allow_unused=True)
            for a, g in zip(analytical, grads):
                if g is not None:
                    a[row + k] = _flat(g)
        row += size
    return numerical, analytical


def _flat(t):
    """A tensor's values as a flat float64 host array (any device)."""
    return t._backend.to_numpy(t._data).reshape(-1).astype(np.float64)


def _outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def gradcheck(func, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Compare the gradients of ``func`` at ``inputs`` with central finite
    differences. Inputs that require grad should be float64."""
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    for t in inputs:
        if isinstance(t, Tensor) and t.requires_grad and t.dtype.name != "float64":
            raise GradcheckError("gradcheck expects float64 inputs for accurate finite differences; "
                                 f"got {t.dtype}")
    outputs = [o for o in _outputs(func(*inputs)) if o.requires_grad]
    numerical, analytical = _jacobians(func, inputs, outputs, eps)
    rows = np.cumsum([0] + [o.numel() for o in outputs])
    for k in range(len(outputs)):  # PyTorch's order and wording: per output, per input
        for i, (n, a) in enumerate(zip(numerical, analytical)):
            n, a = n[rows[k]:rows[k + 1]], a[rows[k]:rows[k + 1]]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {k} with respect to "
                                     f"input {i},\nnumerical:{n}\nanalytical:{a}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True):
    """gradgradcheck(func, inputs, grad_outputs=None, eps=1e-06, atol=1e-05, rtol=0.001, raise_exception=True)

    Check the second derivatives of ``func`` at ``inputs`` with central finite
    differences: the first derivatives (``autograd.grad`` with
    ``create_graph=True``, against ``grad_outputs``: random when None) are
    checked by :func:`gradcheck` with respect to the inputs and the
    ``grad_outputs``, as PyTorch's gradgradcheck does."""
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff_inputs = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    outputs = [o for o in _outputs(func(*inputs)) if o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = []
        for o in outputs:
            values = rng.standard_normal(o._data.shape).astype(o.dtype.numpy)
            g = Tensor._wrap(o._backend.asarray(values), o.dtype, o._backend)
            grad_outputs.append(g.requires_grad_(True))
    else:
        grad_outputs = list(_outputs(grad_outputs))
    n = len(inputs)

    def first_derivatives(*args):
        values, cotangents = args[:n], args[n:]
        with enable_grad():  # gradcheck's finite differences call this under no_grad
            outs = [o for o in _outputs(func(*values)) if o.requires_grad]
            diff = [t for t in values if isinstance(t, Tensor) and t.requires_grad]
            grads = grad(outs, diff, cotangents, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
