"""Straight-line Python for an elementwise row's most common call.

In a chain of small ops nearly every call has as arguments tensors of one
dtype, on one device, of one shape, none of them a view (or one such tensor
and a Python number), and the Python around the kernel costs more than the
kernel. For those calls this module generates, per row, the Tensor method and
operators themselves with nothing generic left in them: one dict hit for the
kernel, the output allocated, the kernel called, and the node's edges and
saved values written out for that row and for which inputs need a gradient.
Every other call (broadcasting, casts, views, inputs of two or more
dimensions that are not C-contiguous, 0-d or more than MAX_NDIM dimensions,
large arrays, another backend) goes to the general path,
``elementwise.apply``, which this must match exactly
(tests/ops/test_straight_line.py runs every row both ways).
"""
import weakref

from ..autograd.grad_mode import _state as grad_state
from ..autograd.graph import _SEQUENCE, SavedTensor, SavedValue, input_meta, metas_for
from ..autograd.version_counter import VersionCounter
from ..tensor import Tensor
from .elementwise import STRAIGHT_MAX_NDIM as MAX_NDIM
from .elementwise import _by_ndim, _load_kernel, _plan_for, _Recipe, apply

_MISSING = object()
# Argument kinds of the calls a function is generated for: "a" a tensor, "f" a
# Python float, "i" a Python int (not bool: its promotion differs).
_GUARDS = {"a": "isinstance({x}, Tensor)", "f": "{x}.__class__ is float",
           "i": "{x}.__class__ is int"}


def _entry(row, args, kinds):
    """What the straight-line path needs for calls of these kinds and the
    dtype of their tensors, or None where those calls take the general path:
    a cast (remembered for the dtype), or a backend without a small-call
    kernel (not remembered: the dtype alone does not decide that)."""
    plan = _plan_for(row, args)  # raises what apply would raise
    tensor_at = kinds.index("a")
    entry = None
    if all(c is None for c, kind in zip(plan.convert, kinds) if kind == "a"):
        small = plan.backend.elementwise_small_forward(
            row, "".join("a" if kind == "a" else "s" for kind in kinds), plan.out_np)
        if small is None:
            return None
        kernel_for, below, new = small
        entry = (_by_ndim(kernel_for), below, new, plan.out_np, plan.out_dtype, plan.recipes,
                 plan.dtype, plan.backend, metas_for(plan.dtype, plan.backend),
                 *(c for c, kind in zip(plan.convert, kinds) if kind != "a"))
    row._straight_entries.setdefault(kinds, {})[args[tensor_at].dtype] = entry
    return entry


def _recipe(recipes, row, args, dtype, backend, mask):
    recipe = recipes[mask] = _Recipe(row, args, dtype, backend, mask, False, None)
    return recipe


def _edge_lines(k):
    """``e{k}``: where input k's gradient goes (ElementwiseBackward's rule
    for a tensor that is not a view)."""
    return [
        f"e{k} = x{k}._grad_fn",
        f"if e{k} is None and x{k}._requires_grad:",
        f"    ref = x{k}._grad_accumulator",
        f"    e{k} = (ref() if ref is not None else None) or x{k}._gradient_edge()",
    ]


def _save_input_lines(k):
    """``s{k} = SavedTensor(x{k})``, inlined (x{k} is not a view)."""
    return [f"s{k} = new(SavedTensor)",
            f"s{k}.data = x{k}._data",
            f"c = x{k}._vc",
            "if c is None:",
            f"    c = x{k}._vc = VersionCounter()",
            f"s{k}.counter = c",
            f"s{k}.version = c.value",
            f"s{k}.tensor_ref = weak_ref(x{k})",
            f"s{k}.producer = x{k}._grad_fn"]


def _node_lines(row, kinds, first):
    """Lines that set ``node`` (None when no input needs a gradient)."""
    inputs = range(len(kinds))
    graded = [k for k in row.differentiable if kinds[k] == "a"]
    edges = [f"e{k}" if k in graded else "None" for k in inputs]
    body = [line for k in graded for line in _edge_lines(k)]
    if len(graded) == 1:  # the mask is known once the one edge is
        body.append(f"if e{graded[0]} is not None:")
        body.append(f"    mask = {1 << graded[0]}")
    else:
        body.append("mask = " + " | ".join(f"(e{k} is not None) << {k}" for k in graded))
        body.append("if mask:")
    args = "".join(f"x{k}, " for k in inputs)
    node = [
        "recipe = recipes.get(mask)",
        "if recipe is None:",
        f"    recipe = _recipe(recipes, row, ({args}), dtype, backend, mask)",
        "node = new(recipe.node_class)",
        f"node.next_edges = [{', '.join(edges)}]",
        f"meta = metas.get(shape) or input_meta(x{first})",
        "node.input_meta = meta.alone" if len(kinds) == 1 else "node.input_meta = meta.pairs[mask]",
        "node.pre_hooks = None",
        "node.retained = None",
        "node.sequence_nr = next_sequence()",
        "node.recipe = recipe",
    ]
    # What is saved depends on which inputs need a gradient: one branch per mask.
    branches = []
    for mask in range(1, 1 << len(kinds)):
        if any(mask >> k & 1 and k not in graded for k in inputs):
            continue  # never set
        spec = row._spec_for_mask(mask)
        tensors = [k for k in spec.saves if kinds[k] == "a"]
        branch = [line for k in tensors for line in _save_input_lines(k)]
        # A saved number is kept as the kernel sees it, in a SavedValue
        # (ElementwiseBackward.record's rule).
        for k in spec.saves:
            if kinds[k] != "a":
                branch += [f"s{k} = new(SavedValue)", f"s{k}.data = v{k}"]
        branch.append("node.args = (" + "".join(
            "None, " if k not in spec.saves else f"s{k}, " for k in inputs) + ")")
        if spec.saves_out:  # SavedTensor(result, recipe.title), inlined: result gets vc
            branch += ["s = new(SavedTensor)",
                       "s.data = out",
                       "s.counter = vc = VersionCounter()",
                       "s.version = 0",
                       "s.tensor_ref = None",
                       "s.producer = recipe.title",
                       "node.out = s"]
        else:
            branch.append("node.out = False")
        branch.append("node.saved = (" + "".join(f"s{k}, " for k in spec.saves)
                      + ("s, " if spec.saves_out else "") + ")")
        branches.append((mask, branch))
    for i, (mask, branch) in enumerate(branches):
        if len(branches) > 1:
            node.append("else:" if i == len(branches) - 1 else
                        f"{'if' if i == 0 else 'elif'} mask == {mask}:")
            branch = ["    " + line for line in branch]
        node += branch
    body += ["    " + line for line in node]
    return ["node = vc = None", "if grad_state.enabled:"] + ["    " + line for line in body]


def _branch(row, kinds):
    """The body for calls whose arguments are of ``kinds``: returns the result,
    or falls through where the call is not the straight-line kind after all."""
    tensors = [k for k, kind in enumerate(kinds) if kind == "a"]
    numbers = [k for k, kind in enumerate(kinds) if kind != "a"]
    first = tensors[0]
    same = [f"x{k}.dtype is dtype" for k in tensors[1:]]
    same += [f"x{k}._backend is backend" for k in tensors[1:]]
    same += [f"x{k}._data.shape == shape" for k in tensors[1:]]
    same += [f"x{k}._base is None" for k in tensors]
    unpacked = ", ".join(["kernels", "_", "new_array", "out_np", "out_dtype", "recipes", "dtype",
                          "_", "metas"] + [f"convert{k}" for k in numbers])
    operands = ", ".join(f"x{k}._data" if kinds[k] == "a" else f"v{k}" for k in range(len(kinds)))
    lines = [
        f"dtype = x{first}.dtype",
        f"backend = x{first}._backend",
        f"data = x{first}._data",
        "shape = data.shape",
        "ndim = len(shape)",
        # More than one dimension: C-contiguous inputs only, whose result is
        # C-contiguous too (apply gives others the layout PyTorch does).
        "if " + " and ".join(same + ["0 < ndim <= MAX_NDIM", "(ndim == 1 or " + " and ".join(
            f"x{k}._data.flags.c_contiguous" for k in tensors) + ")"]) + ":",
        f"    entry = entries_{kinds}.get(dtype, MISSING)",
        "    if entry is MISSING:",
        f"        entry = make_entry(row, ({''.join(f'x{k}, ' for k in range(len(kinds)))}), "
        f"{kinds!r})",
        "    if entry is not None and entry[7] is backend and data.size < entry[1]:",
        f"        {unpacked} = entry",
        "        kernel = kernels[ndim] or load_kernel(kernels, ndim)",
    ]
    lines += [f"        v{k} = convert{k}(x{k})" for k in numbers]
    lines += ["        out = new_array(shape, out_np)", f"        kernel(out, {operands})"]
    node = _node_lines(row, kinds, first) if any(
        kinds[k] == "a" for k in row.differentiable) else ["node = vc = None"]
    lines += ["        " + line for line in node + [
        "result = new(Tensor)",
        "result._data = out",
        "result._backend = backend",
        "result.dtype = out_dtype",
        "result._vc = vc",
        "result._base = None",
        "result._requires_grad = False",
        "result._grad_fn = node",
        "result._grad = None",
        "return result",
    ]]
    return lines


def _source(row, name, header, prologue, all_kinds, self_at, fallback):
    """``def name(header)``: after ``prologue`` (a condition and lines run when
    it holds, or None), one branch per argument kinds in ``all_kinds``, each
    guarded by its arguments' types (``self_at``: the argument that is the
    tensor the method was called on, unchecked; None for a function)."""
    lines = [f"def {name}{header}:"]
    indent = "    "
    if prologue:
        lines.append(f"    if {prologue[0]}:")
        lines += [f"        {line}" for line in prologue[1:]]
        indent = "        "
    for i, kinds in enumerate(all_kinds):
        guard = " and ".join(_GUARDS[kind].format(x=f"x{k}") for k, kind in enumerate(kinds)
                             if k != self_at)
        if guard:
            lines.append(f"{indent}{'if' if i == 0 else 'elif'} {guard}:")
            lines += [f"{indent}    {line}" for line in _branch(row, kinds)]
        else:  # the only kinds: the tensor the method was called on
            lines += [f"{indent}{line}" for line in _branch(row, kinds)]
    lines.append(f"    return {fallback}")
    return "\n".join(lines)


def _compile(row, name, header, prologue, all_kinds, self_at, fallback, **extra):
    namespace = {
        "Tensor": Tensor, "row": row, "apply": apply, "make_entry": _entry, "MISSING": _MISSING,
        "grad_state": grad_state, "_recipe": _recipe, "new": object.__new__,
        "input_meta": input_meta, "next_sequence": _SEQUENCE.__next__,
        "SavedTensor": SavedTensor, "SavedValue": SavedValue, "VersionCounter": VersionCounter,
        "weak_ref": weakref.ref,
        "MAX_NDIM": MAX_NDIM, "load_kernel": _load_kernel,
        **{f"entries_{kinds}": row._straight_entries.setdefault(kinds, {})
           for kinds in all_kinds},
        **extra,
    }
    exec(_source(row, name, header, prologue, all_kinds, self_at, fallback), namespace)
    return namespace[name]


_BINARY = ["aa", "af", "ai"]


def method(row):
    """``Tensor.<row>(*args)``: the straight-line path when a one- or
    two-input row is called with tensors (or a tensor and a Python number),
    else ``apply``."""
    if len(row.inputs) == 1:
        return _compile(row, row.name, "(x0, *rest)", ("not rest",), ["a"], 0,
                        "apply(row, (x0, *rest))")
    return _compile(row, row.name, "(x0, *rest)", ("len(rest) == 1", "x1 = rest[0]"), _BINARY,
                    0, "apply(row, (x0, *rest))")


def function(row):
    """``row(*args)`` (``nbgrad.<row>``, a user's own row): as ``method``,
    with the first argument's type checked too."""
    if len(row.inputs) == 1:
        return _compile(row, row.name, "(*args)", ("len(args) == 1", "x0, = args"), ["a"],
                        None, "apply(row, args)")
    return _compile(row, row.name, "(*args)", ("len(args) == 2", "x0, x1 = args"), _BINARY,
                    None, "apply(row, args)")


def operator(row, dunder, is_operand):
    """``a.__<dunder>__(b)`` for a two-input row: as ``method``; NotImplemented
    for an operand that is neither a tensor nor a number, so Python falls back."""
    return _compile(row, f"__{dunder}__", "(x0, x1)", None, _BINARY, 0,
                    "apply(row, (x0, x1)) if is_operand(x1) else NotImplemented",
                    is_operand=is_operand)


def reversed_operator(row, dunder, is_operand):
    """``a.__r<dunder>__(b)``, i.e. ``row(b, a)``: straight-line for a Python number ``b``."""
    # Parameters named so that x0 is the row's first input: the number, passed second.
    return _compile(row, f"__r{dunder}__", "(x1, x0)", None, ["fa", "ia"], 1,
                    "apply(row, (x0, x1)) if is_operand(x0) else NotImplemented",
                    is_operand=is_operand)


def supported(row):
    """Rows the straight-line path is generated for: one or two inputs, no masks."""
    return len(row.inputs) in (1, 2) and not row.bool_inputs
