"""The differential harness: a scenario written once against a library
``lib`` runs in nbgrad and in PyTorch 2.13, and the two traces (values, flags,
versions, which call raised and with which normalised message, warnings,
gradients) must agree."""
import contextlib
import re
import warnings

import numpy as np
import pytest
import torch

import nbgrad


def normalise(message):
    """PyTorch's text and nbgrad's, made comparable (see design.md): drop
    PyTorch's trailing hint and nbgrad's "It was modified in place by ..."
    sentence, name the library nbgrad, drop node-name overload suffixes."""
    text = str(message)
    for tail in (" Hint:", " It was modified in place by"):
        text = text.split(tail)[0]
    text = text.replace("torch::autograd::", "").replace("torch.", "nbgrad.")
    text = re.sub(r"(output \d+ of [A-Za-z]+)\d+,", r"\1,", text)  # PyTorch's "of Pow1,"
    return re.sub(r"(Backward)\d+\b", r"\1", text)


def _builtin_base(error):
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins").__name__


def _node_name(fn):
    """``MulBackward0`` and ``torch::autograd::CopySlices`` as nbgrad names them
    (PyTorch's ``CopyBackwards`` is nbgrad's ``CopyBackward``)."""
    if fn is None:
        return None
    return re.sub(r"(Backward)s?\d*$", r"\1", fn.name().rsplit("::", 1)[-1])


class Trace:
    """What a scenario observed, in order."""

    def __init__(self, lib):
        self.lib = lib
        self.events = []
        self.errors = []  # the raw exceptions, for library-specific checks

    def _try(self, fn):
        try:
            return fn()
        except Exception as error:  # recorded, compared with the other library
            self.errors.append(error)
            return ("raised", _builtin_base(error), normalise(error))

    def state(self, label, t):
        """Values, dtype, version, requires_grad, is_leaf and grad_fn's name."""
        self.events.append((label, "values", t.detach().numpy().copy()))
        self.events.append((label, "meta", (
            str(t.dtype).split(".")[-1], t._version, t.requires_grad,
            self._try(lambda: t.is_leaf), self._try(lambda: _node_name(t.grad_fn)))))

    def version(self, label, *tensors):
        self.events.append((label, "versions", tuple(t._version for t in tensors)))

    def grad(self, label, t):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch warns on a non-leaf's .grad
            g = t.grad
        self.events.append((label, "grad", None if g is None else g.numpy().copy()))

    def call(self, label, fn):
        """Run ``fn``; record whether it raised (and how). Returns its result or None."""
        result = self._try(fn)
        raised = isinstance(result, tuple) and result[:1] == ("raised",)
        self.events.append((label, "call", result if raised else "ok"))
        return None if raised else result

    def note(self, label, value):
        self.events.append((label, "note", value))

    def values(self, label, t):
        """Values and dtype only (the _version of a fresh gradient is PyTorch's internals)."""
        self.events.append((label, "values", t.detach().numpy().copy()))
        self.events.append((label, "flags", (t.requires_grad, t.grad_fn is None)))

    def warns(self, label, fn):
        """Run ``fn``; record the (normalised) texts of the warnings it issued."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.call(label, fn)
        texts = [normalise(str(w.message).split(" (Triggered internally at")[0]) for w in caught]
        self.events.append((label, "warnings", texts))


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True))
    return a == b


@contextlib.contextmanager
def pytorch_version_rule():
    """nbgrad under PyTorch's per-storage version rule, for comparisons with
    PyTorch; its default region rule is tested in tests/autograd/test_mutation_safety.py."""
    previous = nbgrad.autograd.get_version_check()
    nbgrad.autograd.set_version_check("storage")
    try:
        yield
    finally:
        nbgrad.autograd.set_version_check(previous)


def differential(scenario):
    """Run ``scenario(lib, trace)`` in nbgrad (under PyTorch's version rule)
    and in torch; assert the traces agree. Returns the nbgrad trace."""
    traces = {}
    for lib in (torch, nbgrad):
        trace = Trace(lib)
        with pytorch_version_rule():
            scenario(lib, trace)
        traces[lib] = trace
    ours, theirs = traces[nbgrad].events, traces[torch].events
    report = []
    for k in range(max(len(ours), len(theirs))):
        a = ours[k] if k < len(ours) else None
        b = theirs[k] if k < len(theirs) else None
        same = a is not None and b is not None and a[:2] == b[:2] and _same(a[2], b[2])
        report.append(f"{'  ' if same else '!!'} nbgrad {a!r}\n   torch  {b!r}")
    if len(ours) != len(theirs) or not all(r.startswith("  ") for r in report):
        pytest.fail("nbgrad and torch disagree:\n" + "\n".join(report), pytrace=False)
    return traces[nbgrad]
