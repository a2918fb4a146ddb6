"""Which array arguments a user's Numba function writes, read from its Numba
IR (``@njit`` and ``@cuda.jit`` functions alike; ``nbgrad.kernel`` bumps
exactly those tensors' versions).

The analysis follows aliases: a variable made from an argument by indexing,
slicing or an attribute (``out[1:]``, ``a.T``, ``a.reshape(...)``) is that
argument, as is a tuple holding it. An argument is written when an alias is
the target of an item assignment, the first argument of ``cuda.atomic.*``,
an ``out=`` keyword, or an argument that a called Numba function writes
(analysed in turn). NumPy, ``math`` and built-in functions read their
arguments; any other callee given an alias is assumed to write it, so the
answer errs towards "written", never the other way.
"""
import builtins
import math
import types

import numpy as np
from numba.core import compiler, ir

_READ_ONLY_MODULES = (np, math, builtins, np.linalg, np.random)


def written_arguments(fn, _seen=None):
    """Positions of the array arguments ``fn`` (a Numba dispatcher or a
    Python function) may write."""
    py_func = getattr(fn, "py_func", fn)
    seen = _seen if _seen is not None else {}
    if py_func in seen:  # recursion: what is known so far
        return seen[py_func]
    seen[py_func] = set()
    function_ir = compiler.run_frontend(py_func)
    statements = [s for block in function_ir.blocks.values() for s in block.body]
    aliases = _aliases(statements)
    objects = _objects(statements)
    written = set()

    def write(var):
        written.update(aliases.get(var.name, ()))

    for s in statements:
        if isinstance(s, (ir.SetItem, ir.StaticSetItem)):
            write(s.target)
        elif isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr) and s.value.op == "call":
            call = s.value
            for name, var in call.kws:
                if name == "out":
                    write(var)
            callee = objects.get(call.func.name)
            if _is_atomic(callee):
                write(call.args[0])
            elif callee is not None and hasattr(callee, "py_func"):  # a Numba function
                for k in written_arguments(callee, seen):
                    if k < len(call.args):
                        write(call.args[k])
            elif not _reads_only(callee, call.func.name, aliases):
                for var in list(call.args) + [v for _, v in call.kws]:
                    write(var)
    seen[py_func] = written
    return written


def _aliases(statements):
    """Variable name -> positions of the arguments it may alias."""
    aliases = {}
    changed = True
    while changed:
        changed = False
        for s in statements:
            if not isinstance(s, ir.Assign):
                continue
            value, sources = s.value, ()
            if isinstance(value, ir.Arg):
                sources = {value.index}
            elif isinstance(value, ir.Var):
                sources = aliases.get(value.name, ())
            elif isinstance(value, ir.Expr):
                if value.op in ("getitem", "static_getitem", "getattr", "cast", "getiter",
                                "iternext", "pair_first", "exhaust_iter", "static_getitem"):
                    sources = aliases.get(value.value.name, ())
                elif value.op in ("build_tuple", "build_list"):
                    sources = set().union(*(aliases.get(v.name, ()) for v in value.items))
                elif value.op == "call":  # a method of an alias (a.reshape(...)) may return a view
                    sources = aliases.get(value.func.name, ())
            if sources and not set(sources) <= aliases.get(s.target.name, set()):
                aliases.setdefault(s.target.name, set()).update(sources)
                changed = True
    return aliases


class _Attribute:
    """An attribute path that does not resolve outside a kernel
    (``cuda.atomic.add`` in the CUDA simulator)."""

    def __init__(self, path):
        self.path = path


def _objects(statements):
    """Variable name -> the Python object it holds, where it is a global,
    a free variable or an attribute of one (``np.sum``, ``cuda.atomic.add``)."""
    objects = {}
    for s in statements:
        if not isinstance(s, ir.Assign):
            continue
        value = s.value
        if isinstance(value, (ir.Global, ir.FreeVar)):
            objects[s.target.name] = value.value
        elif isinstance(value, ir.Expr) and value.op == "getattr" and value.value.name in objects:
            owner = objects[value.value.name]
            if isinstance(owner, _Attribute):
                objects[s.target.name] = _Attribute(f"{owner.path}.{value.attr}")
            elif isinstance(owner, types.ModuleType) and not hasattr(owner, value.attr):
                objects[s.target.name] = _Attribute(f"{owner.__name__}.{value.attr}")
            elif hasattr(owner, value.attr):
                objects[s.target.name] = getattr(owner, value.attr)
    return objects


def _is_atomic(callee):
    """``cuda.atomic.add`` and its kin (the stubs, or the simulator's methods)."""
    if isinstance(callee, _Attribute):
        return ".atomic." in callee.path
    qualname = getattr(callee, "__qualname__", None) or type(callee).__qualname__
    module = getattr(callee, "__module__", None) or ""
    return "cuda" in module and "atomic" in qualname.lower()


def _reads_only(callee, name, aliases):
    """Whether a call reads its arguments only: NumPy, ``math`` and built-in
    functions, the CUDA thread-index helpers; and a method of a non-alias."""
    if callee is None:
        return name not in aliases  # a method of a local (a number, a range), not of an argument
    if isinstance(callee, type):
        return True  # a constructor: range, slice, a dtype
    if isinstance(callee, _Attribute):
        return callee.path.startswith("numba.")
    module = getattr(callee, "__module__", None) or ""
    if module.split(".")[0] in ("numpy", "math", "builtins", "cmath"):
        return True
    if isinstance(callee, (types.BuiltinFunctionType, np.ufunc)):
        return True
    return module.startswith("numba") and not _is_atomic(callee)
