"""A short tour of nbgrad: ``python -m nbgrad.demo``.

Fits a small model with autograd, then shows the aliasing rules that make
``detach()`` safe: a write through a detached alias is caught at backward,
naming the in-place op and the line that made it.
"""
import time

import nbgrad


def fit_line():
    nbgrad.manual_seed(0)
    x = nbgrad.linspace(-2, 2, 256).unsqueeze(1)
    y = (3 * x).tanh() + 0.1 * nbgrad.randn(256, 1)
    w1 = (nbgrad.randn(1, 32) * 0.5).requires_grad_()
    b1 = nbgrad.zeros(32, requires_grad=True)
    w2 = (nbgrad.randn(32, 1) * 0.2).requires_grad_()
    start = time.perf_counter()
    for step in range(301):
        pred = (x @ w1 + b1).tanh() @ w2
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        with nbgrad.no_grad():
            for p in (w1, b1, w2):
                p -= 0.1 * p.grad
                p.grad = None
        if step % 100 == 0:
            print(f"  step {step:3d}  loss {loss.item():.4f}")
    print(f"  300 steps in {time.perf_counter() - start:.2f} s (first step includes compilation)")


def aliasing():
    a = nbgrad.tensor([1, 2, 3.0], requires_grad=True)
    out = a.sigmoid()
    print("  out =", out)
    alias = out.detach()  # shares memory AND the version counter with out
    alias.zero_()
    try:
        out.sum().backward()
    except RuntimeError as error:
        print("  caught:", error)
    out = a.sigmoid()
    out.sum().backward()
    print("  without the write, a.grad =", a.grad)


def main():
    print("nbgrad", nbgrad.__version__)
    print("1. Fit tanh(3x) with a 1-32-1 network:")
    fit_line()
    print("2. detach() aliases share a version counter, so stale gradients are caught:")
    aliasing()


if __name__ == "__main__":
    main()
