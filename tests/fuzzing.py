"""A differential graph fuzzer: random autograd programs run in nbgrad and in
PyTorch 2.13, step by step, and must agree.

A *program* is a list of :class:`Step` s, each one line of Python against a
module ``lib`` (``nbgrad`` or ``torch``): make a leaf (0-d, size-0 dims,
float32/float64 and sometimes int64/bool, values from a pool with NaN, inf,
-inf, 0., -0., 1e-30, 1e30 and subnormals, made non-contiguous by a
transpose, a slice with a step or an expand, requiring grad or not), apply an
elementwise op of the op table (tensor or Python-scalar operands), a
reduction, softmax/log_softmax, a view, an integer-list or mask index,
cat/stack, matmul, an in-place write (``add_``, ``copy_``, ``fill_``,
``zero_``, ``x[key] = v``, ``relu_``, ...) on a leaf, an intermediate or a
view, detach, clone, a cast, an SGD-like update under ``no_grad``, and a
scalar loss and ``backward`` (sometimes twice, sometimes with
``retain_graph=True``).

The generator draws a program step by step and runs each step in PyTorch as it
goes, so that it knows the shapes and dtypes it builds on; most steps it keeps
are valid, some raise (in PyTorch: then nbgrad must raise too).

The interpreter runs a program against ``lib`` and records, per step: whether
it raised and the built-in exception type; the dtype, shape, strides (those of
dims of size > 1 in a non-empty tensor: the others are not a layout),
values (NaN-aware, exact for integers and for the sign of zeros, relative
tolerance 1e-5 for float32 and 1e-12 for float64, scaled by the inputs'
magnitude for ops that accumulate), ``requires_grad`` and ``is_leaf`` of its
result; the ``_version`` of every live tensor; and, at a ``backward`` and at
the end, the ``.grad`` of every leaf. A step that raised in both libraries
is skipped and the program goes on; the first step where the two records
differ is the program's divergence. Results computed from values that already
differ within tolerance (a float32 sum in another order) are not compared
again (see :func:`first_divergence`).

A divergence gets a short *cause* key, the step's op and what differed
(``"relu: strides"``, ``"add_ on empty: raised only in nbgrad: RuntimeError:
<start of the message>"``, ``"backward: grad nan"``; a refusal names empty and
expanded inputs), and :func:`minimize` shrinks a diverging program
(drops steps, shrinks shapes, plainer values and layouts) to a small
reproducer with the same cause, printed as a Python snippet.

Profiles:

- CI: ``tests/test_fuzz_differential.py`` runs a fixed list of seeds with a
  small menu of shapes (few Numba specialisations) and fails on any
  divergence that neither :data:`DOCUMENTED` (differences kept on purpose or
  pinned by a strict xfail) nor :data:`OPEN` (found, not fixed yet) lists.
- Exploring, for developers (from the repository root)::

      python -m tests.fuzzing --minutes 10 --seed 1

  runs random programs for the time budget, prints the figures (programs,
  steps, ops, divergences by cause, with one minimized reproducer per cause)
  and exits with status 1 when a divergence is not in :data:`DOCUMENTED`
  (an :data:`OPEN` one counts).
  It draws from a wider shape menu than CI (``--shapes ci`` for CI's: less
  compiling); the first run compiles many kernel specialisations (cached on
  disk afterwards).
"""
import argparse
import collections
import math
import os
import re
import sys
import time
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # for python -m tests.fuzzing

import nbgrad  # noqa: E402
from differential import _builtin_base, normalise, pytorch_version_rule  # noqa: E402

# Documented differences: (regular expression on the cause key, reason). A
# divergence whose cause matches one of them is not a failure.
DOCUMENTED = [
    (r"^matmul: _version$",
     "PyTorch internals: a 1-D @ 2-D (or empty) matmul writes its fresh result through an out= "
     "kernel, so torch's result is at _version 1; nbgrad's fresh result is at 0 (as any new "
     "tensor; nothing aliases it)"),
    (r"^backward: raised only in torch: RuntimeError: Trying to backward through the graph a "
     r"second time",
     "PyTorch saves (and frees) what a one-input op's formula reads even when its input has no "
     "gradient edge; nbgrad saves only what a needed derivative reads, so a second backward "
     "succeeds; pinned by the strict xfail autograd/test_version_counter.py::test_one_input_ops_"
     "save_even_when_the_input_has_no_gradient_edge"),
    # (cause keys keep the first 72 characters of the message)
    (r"^backward: raised only in torch: RuntimeError: one of the variables needed for gradient "
     r"computation has been modified b",
     "nbgrad saves what a needed derivative reads, PyTorch what its formulas read whenever any "
     "input needs a gradient (pow(t, t) saves its result for the exponent's formula even when "
     "only the base needs a gradient; a one-input op saves even when its input has no gradient "
     "edge), so a later write to what only PyTorch saved makes only PyTorch's backward refuse; "
     "the gradient nbgrad computes is right (every value it reads is checked). Pinned by the "
     "strict xfail autograd/test_version_counter.py::test_one_input_ops_save_even_when_the_input_"
     "has_no_gradient_edge. Reproducer: x = lib.tensor([1.], dtype=lib.float64, "
     "requires_grad=True); y = x ** lib.tensor([1.]); y.clamp_(max=1e30); y.sum().backward()"),
    (r"^(maximum|minimum)\(t,t\): sign of zero$",
     "PyTorch internals: its sign for a tie of +0 and -0 depends on the loop an element takes: "
     "the SIMD body (vmaxps/vminps: the second operand) for contiguous runs of a full vector (16 "
     "float32 or 8 float64 lanes with AVX-512), the scalar tail and strided loops std::max/"
     "std::min (the first); nbgrad always gives the first, so it agrees below one vector "
     "(tests/ops/test_table.py::test_a_tie_of_zeros_gives_the_first_operand)"),
    (r"^(min|max|amin|amax): sign of zero$",
     "PyTorch internals: which of tied +0 and -0 a full reduction keeps depends on how its "
     "SIMD lanes split the elements (torch.tensor([0., 1., -0., 0., 1., -0.]).min() is +0. in "
     "float64, -0. in float32; a 16-element amin differs likewise); nbgrad keeps a fixed "
     "one. Reproducer: lib.cat([x, x], -1).min() for x = lib.tensor([[-0.366, 1.0, -0.0]], "
     "dtype=lib.float64).clamp(0.0, 1.0)"),
    (r"^setitem(\.mask)?=t: requires_grad$",
     "PyTorch bug: writing a value that requires grad into a bool or integer tensor through "
     "masked_fill_ (a mask and a one-element value) or fill_ (a basic key and a 0-d value) "
     "records a grad_fn on the non-differentiable tensor (requires_grad True; copy_ does not), "
     "and a backward through it then fails with an INTERNAL ASSERT (isDifferentiableType); "
     "nbgrad records nothing, as copy_. Reproducer: x = lib.tensor([1.], requires_grad=True); "
     "b = x.lt(2.); b[lib.tensor([True])] = x; b.requires_grad"),
]

# Open divergences the fuzzer found that no strict xfail pins yet (each with a
# reproducer): the CI profile lets them pass so that the suite stays green
# while they are fixed; the exploring profile counts them as failures. Delete
# an entry when its fix lands.
OPEN = [
]

NAN, INF = math.nan, math.inf
SPECIALS = [NAN, INF, -INF, 0.0, -0.0, 1e-30, -1e-30, 1e30, -1e30, 1e-40, -1e-40, 1e-310]
ORDINARY = [-2.5, -1.0, -0.5, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0]
SCALARS = [2.0, -1.5, 0.5, 0.0, -0.0, 3, -2, 1, NAN, INF, -INF, 1e30, 1e-30]
# Shape menus: few ranks and layouts keep the number of Numba specialisations small.
SHAPES = {
    "ci": [(), (0,), (3,), (2, 3), (3, 1), (1, 3), (2, 0), (2, 2)],
    "wide": [(), (0,), (1,), (3,), (5,), (2, 3), (3, 2), (3, 1), (1, 3), (2, 0), (0, 3),
             (2, 2), (2, 3, 2), (1, 2, 3), (2, 1, 3)],
}
UNARY = ["neg", "exp", "log", "sqrt", "abs", "sin", "cos", "tanh", "sigmoid", "relu"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum",
          "eq", "ne", "lt", "le", "gt", "ge"]
OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}
INPLACE_UNARY = ["neg_", "exp_", "abs_", "tanh_", "sigmoid_", "relu_", "sqrt_", "zero_"]
INPLACE_BINARY = ["add_", "sub_", "mul_", "div_", "pow_", "copy_"]
ACCUMULATING = ("sum", "mean", "matmul", "softmax", "log_softmax", "loss", "backward", "sgd")


class Step:
    """One line of a program: ``name = code`` (or a statement, ``name=None``).

    ``deps`` are the names it reads (a step whose dependency is missing is
    skipped), ``target`` the tensor whose state is recorded after it, ``label``
    the op it applies (the cause keys name it). A leaf keeps its ``spec`` so
    that the minimizer can shrink it; its code is made from the spec."""

    __slots__ = ("name", "code", "deps", "target", "label", "spec")

    def __init__(self, name, code, deps, label, target=None, spec=None):
        self.name, self.code, self.deps, self.label = name, code, tuple(deps), label
        self.spec = spec
        self.target = name if target is None else target

    def with_spec(self, spec):
        return leaf_step(self.name, spec)

    def source(self):
        return f"{self.name} = {self.code}" if self.name and not self.code.startswith("\n") \
            else self.code.lstrip("\n")


# -- leaves -------------------------------------------------------------------

def _base_shape(shape, layout):
    if layout == "t":
        return shape[:-2] + (shape[-1], shape[-2])
    if layout == "step":
        return (2 * shape[0],) + shape[1:]
    if layout == "expand":
        return (1,) + shape[1:]
    return shape


def leaf_step(name, spec):
    """A leaf from ``spec = (shape, dtype, values, requires_grad, layout)``."""
    shape, dtype, values, requires_grad, layout = spec
    base = np.array(values, dtype=object).reshape(_base_shape(shape, layout)).tolist()
    code = f"lib.tensor({base!r}, dtype=lib.{dtype})"
    if 0 in shape:  # nested lists lose the sizes after a 0
        code += f".reshape{_base_shape(shape, layout)!r}"
    code += {"t": ".transpose(-1, -2)", "step": "[::2]", "expand": f".expand({shape})",
             "contig": ""}[layout]
    if requires_grad:
        code += ".requires_grad_()"
    return Step(name, code, (), f"leaf.{layout}" if layout != "contig" else "leaf", spec=spec)


def _draw_values(rng, dtype, n):
    if dtype == "bool":
        return [bool(v) for v in rng.integers(0, 2, n)]
    if dtype == "int64":
        return [int(v) for v in rng.integers(-3, 4, n)]
    out = []
    for _ in range(n):
        u = rng.random()
        out.append(SPECIALS[rng.integers(len(SPECIALS))] if u < 0.25 else
                   ORDINARY[rng.integers(len(ORDINARY))] if u < 0.6 else
                   round(float(rng.normal()) * 2, 3))
    return out


def _draw_leaf_spec(rng, shape, dtype=None, requires_grad=None):
    if dtype is None:
        u = rng.random()
        dtype = "float32" if u < 0.55 else "float64" if u < 0.9 else "int64" if u < 0.96 else "bool"
    floating = dtype.startswith("float")
    if requires_grad is None:
        requires_grad = floating and rng.random() < 0.75
    layouts = ["contig"] * 4
    if len(shape) >= 2:
        layouts.append("t")
    if len(shape) >= 1 and shape[0] > 0:
        layouts.append("step")
    if len(shape) >= 1 and shape[0] > 1:
        layouts.append("expand")
    layout = layouts[rng.integers(len(layouts))]
    n = int(np.prod(_base_shape(shape, layout), dtype=np.int64))
    values = _draw_values(rng, dtype, n)
    return tuple(shape), dtype, values, bool(requires_grad and floating), layout


# -- the generator --------------------------------------------------------------

class _Builder:
    """Draws steps, runs each in PyTorch (the shape oracle), keeps most valid ones."""

    def __init__(self, rng, shapes):
        self.rng, self.shapes = rng, shapes
        self.steps, self.ns, self.count = [], {"lib": torch, "nan": NAN, "inf": INF}, 0

    def fresh(self):
        self.count += 1
        return f"x{self.count}"

    def pick(self, pred=lambda t: True):
        names = [s.name for s in self.steps
                 if isinstance(self.ns.get(s.name), torch.Tensor) and pred(self.ns[s.name])]
        if not names:
            return None
        # mostly one of the latest
        k = len(names) - 1 - min(int(self.rng.exponential(2.0)), len(names) - 1)
        return names[k]

    def choice(self, seq):
        return seq[self.rng.integers(len(seq))]

    def add(self, step, keep_error=0.2):
        """Run ``step`` in torch; keep it if it ran, or with ``keep_error`` if it raised."""
        error = _execute(step, self.ns)
        ok = error is None
        if ok or (self.rng.random() < keep_error and not isinstance(error, AttributeError)):
            self.steps.append(step)
            return ok
        self.ns.pop(step.name, None)
        return False

    def leaf(self, shape=None, **kw):
        shape = self.choice(self.shapes) if shape is None else shape
        name = self.fresh()
        self.add(leaf_step(name, _draw_leaf_spec(self.rng, shape, **kw)))
        return name

    def operand(self, shape, dtype=None):
        """A tensor broadcastable to ``shape``: an existing one or a new leaf."""
        shape = tuple(shape)
        existing = self.pick(lambda t: tuple(t.shape) == shape)
        if existing and self.rng.random() < 0.5:
            return existing
        u = self.rng.random()
        if u < 0.6 or not shape:
            other = shape
        elif u < 0.8:
            other = shape[-1:]
        else:
            other = tuple(1 if self.rng.random() < 0.5 else d for d in shape)
        return self.leaf(other, dtype=dtype)

    def scalar(self):
        return self.choice(SCALARS)


def _dim(rng, ndim):
    return int(rng.integers(-max(ndim, 1), max(ndim, 1)))


def _basic_key(rng, shape):
    items = []
    for d in shape:
        u = rng.random()
        if u < 0.3:
            items.append(str(int(rng.integers(-d, d)) if d else 0))
        elif u < 0.55:
            items.append(f"{int(rng.integers(0, 2))}::{int(rng.integers(1, 3))}")
        elif u < 0.7:
            items.append(f":{int(rng.integers(0, d + 1))}")
        else:
            items.append(":")
        if rng.random() < 0.1:
            items.append("None")
    if not shape or rng.random() < 0.1:
        items.append(rng.choice(["None", "...", ":"] if shape else ["None", "...", "()"]))
    key = ", ".join(items)
    return key if key != "()" else "()"


def _advanced_key(b, t):
    rng, shape = b.rng, tuple(t.shape)
    if shape and rng.random() < 0.6:
        n = shape[0]
        idx = [int(v) for v in rng.integers(-max(n, 1), max(n, 1), int(rng.integers(0, 4)))]
        return repr(idx), ()
    mask = np.asarray(rng.random(shape) < 0.5).tolist() if shape else bool(rng.random() < 0.5)
    return f"lib.tensor({mask!r})", ()


def _new_shape(rng, shape):
    n = int(np.prod(shape, dtype=np.int64))
    options = [(-1,), (n,), shape + (1,), (1,) + shape]
    for a in (2, 3):
        if n % a == 0:
            options.append((a, -1))
    return options[rng.integers(len(options))]


def _gen_op(b):
    """One op step (out of place, in place, view, ...)."""
    rng = b.rng
    kind = b.choice(["unary"] * 4 + ["binary"] * 4 + ["scalar"] * 3 + ["reduce"] * 2 + ["view"] * 4
                    + ["index", "setitem", "softmax", "clamp", "where", "join", "matmul",
                       "detach", "clone", "cast", "alias"] + ["inplace"] * 4)
    x = b.pick()
    if x is None:
        b.leaf()
        return
    t = b.ns[x]
    shape, nd = tuple(t.shape), t.ndim
    y = b.fresh()
    if kind == "unary":
        op = b.choice(UNARY)
        b.add(Step(y, f"{x}.{op}()", [x], op))
    elif kind == "binary":
        op = b.choice(BINARY)
        z = b.operand(shape)
        if op in OPERATORS and rng.random() < 0.5:
            b.add(Step(y, f"{x} {OPERATORS[op]} {z}", [x, z], op + "(t,t)"))
        else:
            b.add(Step(y, f"{x}.{op}({z})", [x, z], op + "(t,t)"))
    elif kind == "scalar":
        op, s = b.choice(list(OPERATORS) + ["maximum", "eq", "lt"]), b.scalar()
        if op in OPERATORS and rng.random() < 0.4:
            b.add(Step(y, f"{s!r} {OPERATORS[op]} {x}", [x], f"r{op}(s,t)"))
        elif op in OPERATORS:
            b.add(Step(y, f"{x} {OPERATORS[op]} {s!r}", [x], f"{op}(t,s)"))
        else:
            b.add(Step(y, f"{x}.{op}({s!r})", [x], f"{op}(t,s)"))
    elif kind == "reduce":
        op = b.choice(["sum", "mean", "max", "min", "amax", "amin"])
        u = rng.random()
        if u < 0.3 and op not in ("amax", "amin"):
            b.add(Step(y, f"{x}.{op}()", [x], op))
        elif op in ("max", "min"):
            d, keep = _dim(rng, nd), bool(rng.random() < 0.3)
            b.add(Step(y, f"{x}.{op}({d}, keepdim={keep})[0]", [x], op + "(dim)"))
            if rng.random() < 0.3:
                b.add(Step(b.fresh(), f"{x}.{op}({d}, keepdim={keep})[1]", [x],
                           op + "(dim).indices"))
        else:
            dim = _dim(rng, nd) if rng.random() < 0.7 or nd < 2 else (0, -1)
            keep = bool(rng.random() < 0.3)
            b.add(Step(y, f"{x}.{op}({dim!r}, keepdim={keep})", [x], op + "(dim)"))
    elif kind == "softmax":
        op = b.choice(["softmax", "log_softmax"])
        b.add(Step(y, f"{x}.{op}({_dim(rng, nd)})", [x], op))
    elif kind == "clamp":
        lo, hi = b.choice([None, -0.5, 0.0, NAN]), b.choice([None, 1.0, 0.0, INF])
        b.add(Step(y, f"{x}.clamp({lo!r}, {hi!r})", [x], "clamp"))
    elif kind == "where":
        c = b.pick(lambda u: u.dtype == torch.bool)
        if c is None or rng.random() < 0.3:
            c = b.fresh()
            b.add(Step(c, f"{x} > {b.choice([0.0, 1.0, -0.0])}", [x], "gt(t,s)"))
            if c not in b.ns:
                return
        cshape = tuple(b.ns[c].shape)
        z = b.operand(cshape, dtype=str(t.dtype).split(".")[-1] if t.is_floating_point() else None)
        b.add(Step(y, f"lib.where({c}, {x}, {z})", [c, x, z], "where"))
    elif kind == "view":
        op = b.choice(["view", "reshape", "transpose", "permute", "unsqueeze", "squeeze",
                       "expand", "flatten", "t", "getitem", "getitem", "select"])
        if op in ("view", "reshape"):
            code = f"{x}.{op}{_new_shape(rng, shape)!r}"
        elif op == "transpose":
            code = f"{x}.transpose({_dim(rng, nd)}, {_dim(rng, nd)})"
        elif op == "permute":
            code = f"{x}.permute{tuple(int(v) for v in rng.permutation(nd))!r}"
        elif op == "unsqueeze":
            code = f"{x}.unsqueeze({int(rng.integers(-nd - 1, nd + 1))})"
        elif op == "squeeze":
            code = f"{x}.squeeze({_dim(rng, nd)})" if rng.random() < 0.6 else f"{x}.squeeze()"
        elif op == "expand":
            new = tuple(int(rng.integers(2, 4)) if d == 1 else -1 for d in shape)
            if rng.random() < 0.3:
                new = (2,) + new
            code = f"{x}.expand{new!r}" if len(new) != 1 else f"{x}.expand({new[0]})"
        elif op == "flatten":
            code = f"{x}.flatten()"
        elif op == "t":
            code = f"{x}.t()"
        elif op == "select":
            code = f"{x}[{int(rng.integers(-shape[0], shape[0])) if nd and shape[0] else 0}]"
        else:
            code = f"{x}[{_basic_key(rng, shape)}]"
        b.add(Step(y, code, [x], op))
    elif kind == "index":
        key, deps = _advanced_key(b, t)
        b.add(Step(y, f"{x}[{key}]", [x, *deps], "index.mask" if "tensor" in key else "index.list"))
    elif kind == "setitem":
        if rng.random() < 0.6:
            key, label = _basic_key(rng, shape), "setitem"
        else:
            key, _ = _advanced_key(b, t)
            label = "setitem.mask" if "tensor" in key else "setitem.list"
        try:
            region = tuple(t[eval(f"np.s_[{key}]", {"np": np, "lib": torch})].shape)
        except Exception:  # noqa: BLE001 - an invalid key: keep it, it must raise in both
            region = ()
        if rng.random() < 0.5:
            b.add(Step(None, f"\n{x}[{key}] = {b.scalar()!r}", [x], label + "=s", target=x))
        else:
            z = b.operand(region, dtype=str(t.dtype).split(".")[-1])
            b.add(Step(None, f"\n{x}[{key}] = {z}", [x, z], label + "=t", target=x))
    elif kind == "join":
        op, z = b.choice(["cat", "stack"]), b.operand(shape) if rng.random() < 0.7 else x
        b.add(Step(y, f"lib.{op}([{x}, {z}], {_dim(rng, nd + (op == 'stack'))})", [x, z], op))
    elif kind == "matmul":
        if nd == 0 or nd > 2:
            return
        k = shape[-1]
        other = b.choice([(k,), (k, 2), (k, 1)])
        z = b.leaf(other, dtype=str(t.dtype).split(".")[-1] if rng.random() < 0.9 else None)
        b.add(Step(y, f"{x} @ {z}" if rng.random() < 0.5 else f"lib.matmul({x}, {z})", [x, z],
                   "matmul"))
    elif kind == "detach":
        b.add(Step(y, f"{x}.detach()", [x], "detach"))
    elif kind == "alias":  # design.md: .data has its own version counter; detach_ refuses views
        u = rng.random()
        if u < 0.4:
            b.add(Step(y, f"{x}.data", [x], "data"))
        elif u < 0.7:  # its .grad is compared as a leaf's is
            b.add(Step(None, f"\n{x}.retain_grad()", [x], "retain_grad", target=x))
        else:
            b.add(Step(None, f"\n{x}.detach_()", [x], "detach_", target=x), keep_error=0.5)
    elif kind == "clone":
        b.add(Step(y, f"{x}.clone()", [x], "clone"))
    elif kind == "cast":
        op = b.choice(["float", "double"])
        b.add(Step(y, f"{x}.{op}()", [x], op))
    else:  # in place
        u = rng.random()
        if u < 0.35:
            op = b.choice(INPLACE_UNARY)
            b.add(Step(None, f"\n{x}.{op}()", [x], op, target=x))
        elif u < 0.6:
            op = b.choice(INPLACE_BINARY)
            z = b.operand(shape)
            b.add(Step(None, f"\n{x}.{op}({z})", [x, z], op + "(t)", target=x))
        elif u < 0.8:
            op, s = b.choice(["add_", "mul_", "fill_", "clamp_"]), b.scalar()
            code = f"{x}.clamp_(max={s!r})" if op == "clamp_" else f"{x}.{op}({s!r})"
            b.add(Step(None, "\n" + code, [x], op + "(s)", target=x))
        else:
            op = b.choice(["+=", "*=", "-="])
            z = b.operand(shape) if rng.random() < 0.5 else repr(b.scalar())
            deps = [x, z] if z.startswith("x") else [x]
            b.add(Step(None, f"\n{x} {op} {z}", deps, op, target=x))


def _gen_loss(b):
    rng = b.rng
    parts, deps = [], []
    for _ in range(int(rng.integers(1, 3))):
        x = b.pick(lambda t: t.is_floating_point() and t.requires_grad)
        if x is None or x in deps:
            continue
        t = b.ns[x]
        w = np.array([b.choice(ORDINARY) for _ in range(t.numel())], dtype=object)
        dtype = str(t.dtype).split(".")[-1]
        weights = f"lib.tensor({w.reshape(tuple(t.shape)).tolist()!r}, dtype=lib.{dtype})"
        parts.append(f"({x} * {weights}).sum()")
        deps.append(x)
    if not parts:
        return
    loss = b.fresh()
    if not b.add(Step(loss, " + ".join(parts), deps, "loss")):
        return
    retain = bool(rng.random() < 0.3)
    call = f"\n{loss}.backward(retain_graph=True)" if retain else f"\n{loss}.backward()"
    b.add(Step(None, call, [loss], "backward", target=""), keep_error=0.5)
    if rng.random() < 0.15:
        b.add(Step(None, f"\n{loss}.backward()", [loss], "backward", target=""), keep_error=1.0)
    if rng.random() < 0.15:
        leaves = [s.name for s in b.steps if s.spec and s.spec[3]]
        if leaves:
            x = b.choice(leaves)
            code = f"\nwith lib.no_grad():\n    {x} -= 0.5 * {x}.grad"
            b.add(Step(None, code, [x], "sgd", target=x))


def generate(seed, shapes="ci", steps=None):
    """A random program (list of :class:`Step`) from ``seed``."""
    rng = np.random.default_rng(seed)
    b = _Builder(rng, SHAPES[shapes])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b.leaf()
        for _ in range(int(rng.integers(3, 11)) if steps is None else steps):
            if rng.random() < 0.12:
                _gen_loss(b)
            else:
                _gen_op(b)
        _gen_loss(b)
    return b.steps


# -- the interpreter ------------------------------------------------------------

_COMPILED = {}


def _execute(step, ns):
    """Run one step in ``ns``; None, or the exception it raised."""
    source = step.source()
    code = _COMPILED.get(source)
    if code is None:
        if len(_COMPILED) > 20000:
            _COMPILED.clear()
        code = _COMPILED[source] = compile(source, "<fuzz>", "exec")
    try:
        exec(code, ns)  # noqa: S102 - the programs are ours
    except Exception as error:  # noqa: BLE001 - compared with the other library
        return error
    return None


def _array(t):
    return t.detach().numpy().copy()


def _state(t):
    shape = tuple(t.shape)
    strides = tuple(s for s, d in zip(t.stride(), shape) if d > 1) if 0 not in shape else ()
    return {"dtype": str(t.dtype).split(".")[-1], "shape": shape, "strides": strides,
            "values": _array(t), "requires_grad": t.requires_grad, "is_leaf": t.is_leaf}


def run(program, lib):
    """Run ``program`` against ``lib``: one record per step (None where skipped)."""
    ns = {"lib": lib, "nan": NAN, "inf": INF}
    tensor_type = nbgrad.Tensor if lib is nbgrad else torch.Tensor
    # the tensors whose .grad is compared: leaves and those told to retain it
    leaves = [s.target for s in program if s.spec is not None or s.label == "retain_grad"]
    records = []
    with warnings.catch_warnings(), pytorch_version_rule():
        warnings.simplefilter("ignore")
        if lib is nbgrad:  # NumPy's floating-point warnings must not reach the user
            warnings.simplefilter("error", RuntimeWarning)
        for step in program:
            if any(not isinstance(ns.get(d), tensor_type) for d in step.deps):
                records.append(None)
                continue
            error = _execute(step, ns)
            rec = {"raised": None if error is None else (_builtin_base(error), normalise(error))}
            if step.target and isinstance(ns.get(step.target), tensor_type):
                rec["out"] = _state(ns[step.target])
            live = [s.name for s in program if s.name and isinstance(ns.get(s.name), tensor_type)]
            rec["versions"] = tuple((n, ns[n]._version) for n in live)
            if step.label in ("backward", "sgd"):
                rec["grads"] = _grads(ns, leaves, tensor_type)
            records.append(rec)
        records.append({"raised": None, "grads": _grads(ns, leaves, tensor_type)})
    return records


def _grads(ns, leaves, tensor_type):
    out = {}
    for n in leaves:
        t = ns.get(n)
        if isinstance(t, tensor_type) and (t.is_leaf or t.retains_grad):
            out[n] = None if t.grad is None else _state(t.grad)
    return out


# -- comparison and causes --------------------------------------------------------

_RTOL = {"float32": 1e-5, "float64": 1e-12}
_TINY = {"float32": 4 * 1.4e-45, "float64": 4 * 5e-324}


def _compare_values(a, b, dtype, accumulating, scale):
    """What differs between ``a`` (nbgrad) and ``b`` (torch); None when nothing."""
    if a.shape != b.shape:
        return "shape"
    if dtype not in _RTOL:
        return None if np.array_equal(a, b) else "values"
    a, b = a.astype(np.float64), b.astype(np.float64)
    na, nb = np.isnan(a), np.isnan(b)
    if (na != nb).any():
        return "nan" if na.sum() > nb.sum() else "values (torch nan)"
    fa, fb = np.isfinite(a) | na, np.isfinite(b) | nb
    if (fa != fb).any() or (a[~fa] != b[~fb]).any():
        return "inf"
    rtol = _RTOL[dtype]
    atol = rtol * scale if accumulating else _TINY[dtype]
    ok = np.abs(a[fa & ~na] - b[fb & ~nb]) <= atol + rtol * np.abs(b[fb & ~nb])
    if not ok.all():
        return "values"
    if not accumulating:
        zero = (a == 0) & (b == 0)
        if (np.signbit(a[zero]) != np.signbit(b[zero])).any():
            return "sign of zero"
    return None


def _scale(values):
    finite = [np.abs(v[np.isfinite(v)]).sum() for v in values if v.size and v.dtype.kind == "f"]
    return max(1.0, float(max(finite, default=0.0)))  # terms of magnitude 1 may cancel


def _compare_state(a, b, accumulating, scale, rtol_dtype=None):
    for field in ("dtype", "shape"):
        if a[field] != b[field]:
            return field
    dtype = rtol_dtype if rtol_dtype and a["dtype"] in _RTOL else a["dtype"]
    what = _compare_values(a["values"], b["values"], dtype, accumulating, scale)
    if what:
        return what
    for field in ("strides", "requires_grad", "is_leaf"):
        if a[field] != b[field]:
            return field
    return None


_VALUE_WHATS = ("nan", "values (torch nan)", "inf", "values", "sign of zero", "shape")


def _short(message):
    """The start of an error message, numbers elided: part of a cause key."""
    return re.sub(r"\d+", "#", message.split("\n")[0])[:72]


def _identical(a, b):
    """Bit for bit (NaN-aware, signed zeros) the same values."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind != "f":
        return np.array_equal(a, b)
    return bool(np.array_equal(a, b, equal_nan=True) and (np.signbit(a) == np.signbit(b)).all())


def first_divergence(program, ours=None, theirs=None):
    """(index of the first diverging step, cause key, detail), or None.

    The index is len(program) for a difference in the final gradients. Values
    computed from *inexact* inputs (results that differ, within tolerance,
    from PyTorch's, e.g. a float32 sum in another order) are not compared: a
    rounding difference may flip a later comparison, mask or NaN. Such a
    program's cause is None when that made the libraries part ways (one
    raised); its gradients are then compared by shape and dtype only."""
    ours = run(program, nbgrad) if ours is None else ours
    theirs = run(program, torch) if theirs is None else theirs
    values = {}  # the torch values so far, to scale tolerances of accumulating ops
    inexact, inexact_grads = set(), set()
    kinds = {}  # name -> ("empty", "expanded"): what a refusal may depend on
    single = False  # a float32 value so far: gradients get float32's tolerance
    for k, (a, b) in enumerate(zip(ours, theirs)):
        step = program[k] if k < len(program) else None
        label = step.label if step else "end"
        if (a is None) != (b is None):
            return k, f"{label}: ran in one library only", (a, b)
        if a is None:
            continue
        deps = step.deps if step else ()
        # an SGD step reads its leaf's .grad too
        loose = any(d in inexact or (label == "sgd" and d in inexact_grads) for d in deps)
        ra, rb = a["raised"], b["raised"]
        if ra != rb:  # name what the inputs were: a refusal often depends on it
            label += "".join(f" on {flag}" for flag in ("empty", "expanded")
                             if any(flag in kinds.get(d, ()) for d in deps))
        if (ra is None) != (rb is None) and loose:
            return k, None, "parted after inexact values"
        if ra is None and rb is not None:
            return k, f"{label}: raised only in torch: {rb[0]}: {_short(rb[1])}", rb[1]
        if ra is not None and rb is None:
            return k, f"{label}: raised only in nbgrad: {ra[0]}: {_short(ra[1])}", ra[1]
        if ra is not None and ra[0] != rb[0]:
            return k, f"{label}: raised {ra[0]} vs torch's {rb[0]}: {_short(rb[1])}", (ra[1], rb[1])
        accumulating = label.split("(")[0].split(".")[0] in ACCUMULATING
        scale = math.prod(_scale([values[d]]) for d in deps if d in values)
        if ("out" in a) != ("out" in b):
            return k, f"{label}: result is a tensor in one library only", None
        if "out" in a:
            oa, ob = a["out"], b["out"]
            # A float32 input: the result may carry float32 rounding (a mixed sum).
            single_in = any(values[d].dtype == np.float32 for d in deps if d in values)
            what = _compare_state(oa, ob, accumulating, scale, "float32" if single_in else None)
            if what and not (loose and what in _VALUE_WHATS):
                return k, f"{label}: {what}", (oa, ob)
            if loose or not _identical(oa["values"], ob["values"]):
                inexact.add(step.target)
            values[step.target] = ob["values"]
            kinds[step.target] = (("empty",) * (0 in ob["shape"])
                                  + ("expanded",) * (0 in ob["strides"]))
            single |= ob["dtype"] == "float32"
        if "grads" in a:
            for n, gb in b["grads"].items():
                ga = a["grads"].get(n, "not a leaf")
                if isinstance(ga, str) or (ga is None) != (gb is None):
                    where = "nbgrad" if ga is None or isinstance(ga, str) else "torch"
                    return k, f"{label}: grad None in {where}", (n, ga, gb)
                if ga is None:
                    continue
                if not _identical(ga["values"], gb["values"]):
                    inexact_grads.add(n)
                what = _compare_state(ga, gb, True, _scale([gb["values"]]),
                                      "float32" if single else None)
                if inexact and what in _VALUE_WHATS[:-1]:
                    continue
                if what and what != "strides":  # a gradient's layout is not compared
                    return k, f"{label}: grad {what}", (n, ga, gb)
                zero = (ga["values"] == 0) & (gb["values"] == 0)
                if not inexact and (np.signbit(ga["values"][zero])
                                    != np.signbit(gb["values"][zero])).any():
                    return k, f"{label}: grad sign of zero", (n, ga, gb)
        if "versions" in a and a["versions"] != b["versions"]:
            return k, f"{label}: _version", (a["versions"], b["versions"])
    return None


def documented(cause, entries=DOCUMENTED):
    """The reason of the :data:`DOCUMENTED` entry that covers ``cause``, or None."""
    for pattern, reason in entries:
        if re.search(pattern, cause):
            return reason
    return None


# -- the minimizer ----------------------------------------------------------------

def _cause(program):
    found = first_divergence(program)
    return None if found is None else found[1]


def _smaller_specs(spec):
    """Simpler leaves than ``spec``: no grad, contiguous, a dim of 1, a plain value."""
    shape, dtype, values, rg, layout = spec
    if rg:
        yield (shape, dtype, values, False, layout)
    if layout != "contig":
        n = int(np.prod(shape, dtype=np.int64))
        yield (shape, dtype, (values * n)[:n], rg, "contig")
    for i, d in enumerate(shape):
        if d > 1:
            new = shape[:i] + (1,) + shape[i + 1:]
            yield (new, dtype, values[:int(np.prod(_base_shape(new, layout)))], rg, layout)
    plain = 1.0 if dtype.startswith("float") else values[0] if values else 0
    for i, v in enumerate(values):
        if v is not plain and not (isinstance(v, float) and v == 1.0):
            yield (shape, dtype, values[:i] + [plain] + values[i + 1:], rg, layout)


def minimize(program, cause=None, budget=300):
    """A smaller program with the same cause (greedy: drop steps, shrink leaves)."""
    cause = _cause(program) if cause is None else cause
    program = list(program)
    tries = 0
    changed = True
    while changed and tries < budget:
        changed = False
        for k in range(len(program) - 1, -1, -1):
            if k >= len(program) or tries >= budget:
                continue
            candidate = program[:k] + program[k + 1:]
            tries += 1
            if _cause(candidate) == cause:
                program, changed = candidate, True
        for k, step in enumerate(program):
            if step.spec is None:
                continue
            for spec in _smaller_specs(step.spec):
                if tries >= budget:
                    break
                try:
                    candidate = program[:k] + [step.with_spec(spec)] + program[k + 1:]
                except ValueError:  # values no longer fill the shape
                    continue
                tries += 1
                if _cause(candidate) == cause:
                    program, changed = candidate, True
                    break  # the next round shrinks the new spec further
    return program


def render(program):
    """The program as a Python snippet (run it with ``lib`` = nbgrad, then torch)."""
    lines = ["import nbgrad as lib  # the same with: import torch as lib",
             "nan, inf = float('nan'), float('inf')"]
    return "\n".join(lines + [s.source() for s in program])


def context_key(program, cause):
    """``cause`` with the ops of a (minimized) program that led to it."""
    found = first_divergence(program)
    k = found[0] if found else len(program)
    ops = sorted({s.label for s in program[:k] if s.label not in ("loss",)})
    return f"{cause} [{', '.join(ops)}]" if ops else cause


# -- profiles ------------------------------------------------------------------

def fuzz(seeds, shapes="ci", deadline=None, minimize_per_cause=3, minimize_documented=True,
         log=None):
    """Run the programs of ``seeds`` (until ``deadline``, a ``time.monotonic()``).

    Returns (figures, ops, causes, examples): counters of programs, steps and
    diverging programs, and of op labels; the seeds by cause; and up to
    ``minimize_per_cause`` minimized reproducers by cause, (steps, cause with
    its ops, snippet), of the documented causes too if ``minimize_documented``."""
    figures = collections.Counter()
    ops = collections.Counter()
    causes = collections.defaultdict(list)  # coarse cause -> [seed, ...]
    examples = {}  # coarse cause -> [(len, refined key, snippet)]
    for seed in seeds:
        if deadline is not None and time.monotonic() > deadline:
            break
        program = generate(seed, shapes)
        figures["programs"] += 1
        figures["steps"] += len(program)
        ours, theirs = run(program, nbgrad), run(program, torch)
        for step, record in zip(program, theirs):
            ops[step.label] += 1
            if record and record["raised"]:
                ops[step.label + " (raised)"] += 1
        found = first_divergence(program, ours, theirs)
        if found is None:
            continue
        if found[1] is None:
            figures["parted after inexact values"] += 1
            continue
        figures["diverging programs"] += 1
        cause = found[1]
        causes[cause].append(seed)
        wanted = minimize_documented or status(cause)[0] == "undocumented"
        if wanted and len(examples.setdefault(cause, [])) < minimize_per_cause:
            small = minimize(program, cause)
            examples[cause].append((len(small), context_key(small, cause), render(small)))
            if log:
                log(f"seed {seed}: {cause}")
    return figures, ops, causes, examples


def status(cause):
    """("documented" | "open" | "undocumented", reason)."""
    for kind, entries in (("documented", DOCUMENTED), ("open", OPEN)):
        reason = documented(cause, entries)
        if reason:
            return kind, reason
    return "undocumented", None


def report(figures, ops, causes, examples, out=print):
    """Print the figures of :func:`fuzz`; returns the number of causes that
    :data:`DOCUMENTED` does not cover."""
    out(f"programs {figures['programs']}, steps {figures['steps']}, "
        f"diverging programs {figures['diverging programs']}, parted after inexact values "
        f"{figures['parted after inexact values']} (not compared further)")
    out("ops: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
    failing = 0
    for cause, seeds in sorted(causes.items(), key=lambda kv: (status(kv[0])[0], -len(kv[1]))):
        kind, reason = status(cause)
        failing += kind != "documented"
        out(f"\n== {len(seeds)} x {cause}   (seeds {seeds[:5]})\n   {kind}"
            + (f": {reason}" if reason else ""))
        for key in sorted({e[1] for e in examples.get(cause, [])}):
            out(f"   minimized cause: {key}")
        if examples.get(cause):
            out("   " + min(examples[cause])[2].replace("\n", "\n   "))
    return failing


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0, help="the first seed (then seed+1, ...)")
    parser.add_argument("--shapes", choices=sorted(SHAPES), default="wide")
    args = parser.parse_args(argv)
    print(f"nbgrad from {os.path.dirname(nbgrad.__file__)}", flush=True)
    deadline = time.monotonic() + 60 * args.minutes
    seeds = iter(range(args.seed * 10 ** 7, (args.seed + 1) * 10 ** 7))
    figures, ops, causes, examples = fuzz(seeds, args.shapes, deadline,
                                          log=lambda m: print(m, flush=True))
    failing = report(figures, ops, causes, examples)
    print(f"\n{failing} cause(s) not documented (open or new)")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
