"""Straight-line Python for an elementwise row's most common call, forward
and backward: all the op layer's generated code, in one module. It is made
from the tape's and Tensor's own templates (``edge_lines``,
``Node.field_lines``, ``SavedTensor.input_lines``/``output_lines``,
``Tensor._result_lines``), so changing a slot of theirs is one edit.

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
from typing import Any, NamedTuple

from ..backends import layout
from ..tape.grad_mode import _state as grad_state
from ..tape.graph import (TEMPLATE_NAMES, Node, SavedTensor, SavedValue, edge_lines, input_meta,
                          metas_for)
from ..tensor import Tensor
from . import dual
from .elementwise import _general_backward, _plan_for, _Recipe, apply, check_tensors

_MISSING = object()
# Argument kinds of the calls a function is generated for: "a" a tensor, "f" a
# Python float, "i" a Python int (not bool: its promotion differs).
_GUARDS = {"a": "isinstance({x}, Tensor)", "f": "{x}.__class__ is float",
           "i": "{x}.__class__ is int"}


def _unpack_lines(name, saved_input):
    """``{name}``'s array from the SavedTensor ``s_{name}``: SavedTensor.unpack
    inlined where it would only return ``data``, called where it may raise
    (or must re-derive a view)."""
    lines = [f"{name} = s_{name}.data",
             f"if {name} is None or s_{name}.counter.value != s_{name}.version:",
             f"    {name} = s_{name}.unpack()"]
    if saved_input:  # an input with history: detached in place, or a view, since?
        lines += [f"elif s_{name}.producer is not None:",
                  f"    t = s_{name}.tensor_ref()",
                  "    if t is not None and (t._base is not None or t._grad_fn is None):",
                  f"        {name} = s_{name}.unpack()"]
    return lines


# The most dimensions the straight-line code takes.
MAX_NDIM = 4


def _by_ndim(kernel_for):
    """Kernels indexed by number of dimensions, made as they are met
    (``_load_kernel``); the backend's ``kernel_for`` at index 0."""
    return [kernel_for] + [None] * MAX_NDIM


def _load_kernel(kernels, ndim):
    found = kernels[ndim] = kernels[0](ndim)
    return found


def backward(recipe, release=False):
    """Straight-line Python for one recipe's backward in the common case (a
    gradient of 1 to 4 dimensions under the backend's small-call size, every
    saved value an array of its shape), else ``_general_backward``. None where the recipe
    never qualifies (saved numbers, casts, a non-differentiable row, a
    backend without small flat kernels). ``release``: ``backward_and_release``,
    which also frees the saved tensors once their values are read."""
    spec, row = recipe.spec, recipe.row
    if recipe.kinds is not None or recipe.cast or not row.differentiable:
        return None
    arity = len(row.inputs)
    result = ["None"] * arity
    for i in spec.passed:
        result[i] = "grad"
    namespace = {"general": _general_backward}
    lines = ["def backward(node, grad):"]
    if spec.wanted:
        small = recipe.backend.elementwise_small_backward(row, spec.wanted, recipe.dtype.numpy)
        if small is None:
            return None
        namespace.update(kernels=_by_ndim(small.kernel_for), load_kernel=_load_kernel,
                         below=small.below, new=small.new, MAX_NDIM=MAX_NDIM)
        sources = small.sources
        names = {-1: "grad", -2: "out"}
        names.update((k, f"x{k}") for k in spec.saves)
        body = ["args = node.args"] if spec.saves else []
        for k in spec.saves:
            body += [f"s_x{k} = args[{k}]"] + _unpack_lines(f"x{k}", True)
        if spec.saves_out:
            body += ["s_out = node.out"] + _unpack_lines("out", False)
        checks = [f"x{k}.shape == shape" for k in spec.saves]
        grads = [f"grad{i}" for i in spec.wanted]
        for i in spec.wanted:
            result[i] = f"grad{i}"
        inner = ["dtype = grad.dtype"] + [f"{g} = new(shape, dtype)" for g in grads]
        inner += ["kernel = kernels[ndim] or load_kernel(kernels, ndim)",
                  f"kernel({', '.join([names[k] for k in sources] + grads)})"]
        if release:  # node.saved holds exactly these (no numbers: recipe.kinds is None)
            inner += [f"s_x{k}.data = None" for k in spec.saves]
            inner += ["s_out.data = None"] if spec.saves_out else []
        inner.append(f"return [{', '.join(result)}]")
        if checks:
            body.append(f"if {' and '.join(checks)}:")
            inner = ["    " + line for line in inner]
        body += inner
        if checks:  # a saved input to broadcast: the general backward, with what is unpacked
            unpacked = "{" + ", ".join(f"{k}: x{k}" for k in spec.saves) + "}"
            fallback = f"general(node, grad, {unpacked}, {'out' if spec.saves_out else 'None'})"
            body += (["grads = " + fallback, "node.release_saved()", "return grads"] if release
                     else ["return " + fallback])
        lines += ["    shape = grad.shape", "    ndim = len(shape)",
                  "    if 0 < ndim <= MAX_NDIM and grad.size < below:"]
        lines += ["        " + line for line in body]
        lines += ["    grads = general(node, grad)", "    node.release_saved()",
                  "    return grads"] if release else ["    return general(node, grad)"]
    else:  # every gradient is ``grad`` itself (add) or None
        if release and (spec.saves or spec.saves_out):
            lines.append("    node.release_saved()")
        lines.append(f"    return [{', '.join(result)}]")
    exec("\n".join(lines), namespace)
    return namespace["backward"]



class Entry(NamedTuple):
    """What the straight-line path needs for calls of one row, argument kinds
    and dtype (the generated code unpacks it in this order)."""
    kernels: list  # by number of dimensions (_by_ndim)
    below: int  # calls of fewer elements take the path
    new_array: Any  # new_array(shape, dtype): the output's allocator
    out_np: Any
    out_dtype: Any
    recipes: dict  # the plan's recipes by gradient mask
    dtype: Any
    backend: Any
    metas: dict  # shape -> InputMeta, for this dtype and backend
    converts: tuple  # per number argument: its conversion


_UNPACKED = ", ".join(Entry._fields)


def _entry(row, args, kinds):
    """What the straight-line path needs for calls of these kinds and the
    dtype of their tensors, or None where those calls take the general path:
    a cast (remembered for the dtype), or a backend without a small-call
    kernel (not remembered: the dtype alone does not decide that)."""
    plan = _plan_for(row, args)  # raises what apply would raise
    tensor_at = kinds.index("a")
    entry = None
    # (float16 computes in float32 through the backend's general path, which converts)
    if plan.dtype.compute is plan.dtype.numpy and all(
            c is None for c, kind in zip(plan.convert, kinds) if kind == "a"):
        small = plan.backend.elementwise_small_forward(
            row, "".join("a" if kind == "a" else "s" for kind in kinds), plan.out_np)
        if small is None:
            return None
        entry = Entry(_by_ndim(small.kernel_for), small.below, small.new, plan.out_np,
                      plan.out_dtype, plan.recipes, plan.dtype, plan.backend,
                      metas_for(plan.dtype, plan.backend),
                      tuple(c for c, kind in zip(plan.convert, kinds) if kind != "a"))
    row._straight_entries.setdefault(kinds, {})[args[tensor_at].dtype] = entry
    return entry


def _recipe(recipes, row, args, dtype, backend, mask):
    recipe = recipes[mask] = _Recipe(row, args, dtype, backend, mask, False, None)
    return recipe


def _node_lines(row, kinds, first):
    """Lines that set ``node`` (None when no input needs a gradient)."""
    inputs = range(len(kinds))
    graded = [k for k in row.differentiable if kinds[k] == "a"]
    edges = [f"e{k}" if k in graded else "None" for k in inputs]
    body = [line for k in graded for line in edge_lines(f"e{k}", f"x{k}")]
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
        f"meta = metas.get(shape) or input_meta(x{first})",
        *Node.field_lines("node", f"[{', '.join(edges)}]",
                          "meta.alone" if len(kinds) == 1 else "meta.pairs[mask]"),
        "node.recipe = recipe",
    ]
    # What is saved depends on which inputs need a gradient: one branch per mask.
    branches = []
    for mask in range(1, 1 << len(kinds)):
        if any(mask >> k & 1 and k not in graded for k in inputs):
            continue  # never set
        spec = row._spec_for_mask(mask)
        tensors = [k for k in spec.saves if kinds[k] == "a"]
        branch = [line for k in tensors
                  for line in [f"s{k} = new(SavedTensor)", *SavedTensor.input_lines(f"s{k}", f"x{k}")]]
        # A saved number is kept as the kernel sees it, in a SavedValue
        # (ElementwiseBackward.record's rule).
        for k in spec.saves:
            if kinds[k] != "a":
                branch += [f"s{k} = new(SavedValue)", f"s{k}.data = v{k}"]
        branch.append("node.args = (" + "".join(
            "None, " if k not in spec.saves else f"s{k}, " for k in inputs) + ")")
        if spec.saves_out:  # SavedTensor(result, recipe.title): the result gets vc
            branch += ["s = new(SavedTensor)", "vc = VersionCounter()",
                       *SavedTensor.output_lines("s", "out", "vc", "0", "recipe.title"),
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
    converts = "".join(f"convert{k}, " for k in numbers)
    operands = ", ".join(f"x{k}._data" if kinds[k] == "a" else f"v{k}" for k in range(len(kinds)))
    lines = [
        f"dtype = x{first}.dtype",
        f"backend = x{first}._backend",
        f"data = x{first}._data",
        "shape = data.shape",
        "ndim = len(shape)",
        # More than one dimension: C-contiguous inputs only, whose result is
        # C-contiguous too (apply gives others the layout PyTorch does).
        # With a wrapped number PyTorch has no fast_set_up: size-1 strides count too.
        # (an open forward-AD level takes the general path, which computes tangents)
        "if " + " and ".join(same + ["dual.LEVEL is None", "0 < ndim <= MAX_NDIM",
                                     "(ndim == 1 or " + " and ".join(
            f"x{k}._data.flags.c_contiguous" + (
                f" and (1 not in shape or has_c_strides(x{k}._data))"
                if numbers and row.wraps_numbers else "") for k in tensors) + ")"]) + ":",
        f"    entry = entries_{kinds}.get(dtype, MISSING)",
        "    if entry is MISSING:",
        f"        entry = make_entry(row, ({''.join(f'x{k}, ' for k in range(len(kinds)))}), "
        f"{kinds!r})",
        "    if entry is not None and entry.backend is backend and data.size < entry.below:",
        f"        {_UNPACKED} = entry",
    ]
    if numbers:
        lines.append(f"        {converts}= converts")
    lines.append("        kernel = kernels[ndim] or load_kernel(kernels, ndim)")
    lines += [f"        v{k} = convert{k}(x{k})" for k in numbers]
    lines += ["        out = new_array(shape, out_np)", f"        kernel(out, {operands})"]
    node = _node_lines(row, kinds, first) if any(
        kinds[k] == "a" for k in row.differentiable) else ["node = vc = None"]
    lines += ["        " + line for line in node + [
        *Tensor._result_lines("result", "out", "backend", "out_dtype", "node", "vc"),
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
        **TEMPLATE_NAMES,
        "Tensor": Tensor, "row": row, "apply": apply, "make_entry": _entry, "MISSING": _MISSING,
        "grad_state": grad_state, "_recipe": _recipe, "input_meta": input_meta,
        "SavedTensor": SavedTensor, "SavedValue": SavedValue, "has_c_strides": layout.has_c_strides,
        "MAX_NDIM": MAX_NDIM, "load_kernel": _load_kernel, "dual": dual,
        **{f"entries_{kinds}": row._straight_entries.setdefault(kinds, {})
           for kinds in all_kinds},
        **extra,
    }
    exec(_source(row, name, header, prologue, all_kinds, self_at, fallback), namespace)
    return namespace[name]


_BINARY = ["aa", "af", "ai"]


def _binary(row):
    """The argument kinds of a two-input row's calls: tensors only where
    PyTorch's signature takes no number (maximum)."""
    return ["aa"] if row.tensors is not None else _BINARY


def method(row):
    """``Tensor.<row>(*args)``: the straight-line path when a one- or
    two-input row is called with tensors (or a tensor and a Python number),
    else ``apply``."""
    if len(row.inputs) == 1:
        return _compile(row, row.name, "(x0, *rest)", ("not rest",), ["a"], 0,
                        "apply(row, (x0, *rest))")
    # A method's positions, in PyTorch's TypeError, start after self.
    general = ("apply(row, (x0, *rest))" if row.tensors is None else
               "apply(row, check_tensors(row, (x0, *rest), 0))")
    return _compile(row, row.name, "(x0, *rest)", ("len(rest) == 1", "x1 = rest[0]"),
                    _binary(row), 0, general, check_tensors=check_tensors)


def function(row):
    """``row(*args)`` (``nbgrad.<row>``, a user's own row): as ``method``,
    with the first argument's type checked too."""
    if len(row.inputs) == 1:
        return _compile(row, row.name, "(*args)", ("len(args) == 1", "x0, = args"), ["a"],
                        None, "apply(row, args)")
    return _compile(row, row.name, "(*args)", ("len(args) == 2", "x0, x1 = args"), _binary(row),
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
