"""Derivatives of scalar functions, derived from their source.

A row declares its forward and, per input, its derivative times the incoming
gradient ``g``. Higher-order gradients need the derivatives of those
derivatives, to any order. They are derived here, never written by hand: a
forward-mode source transformation reads a scalar function's Python source
(a lambda or a ``def``, with the helpers it calls) and writes a new scalar
function, ``g * d f / d x``, with the same control flow: every conditional
stays a select (so a masked gradient stays a select of zero, never ``0 *
g``), every call of a scalar-math function takes its rule from
:data:`RULES`, every plain helper gets a derived twin returning value and
tangent. The result is itself plain Python, so the backends compile it into
kernels like any row, and it can be derived again.

``derivative_row(row, i)`` makes the row whose forward is ``row``'s
derivative for input ``i`` (its backward rows, in turn, are derived from it
on first need): ``sigmoid``'s is ``g * out * (1 - out)`` over ``(g, out)``.

What a function may contain: assignments to names, ``if``/``else``,
``return``, arithmetic, comparisons, ``and``/``or``/``not``, conditional
expressions and calls of the functions in :data:`RULES`, of casts, and of
plain Python helpers of the same kind. Anything else (loops, subscripts,
calls of unknown compiled functions) raises :class:`CannotDerive`, naming
the function and what it met.
"""
import ast
import builtins
import copy
import functools
import inspect
import itertools
import linecache
import math
import re
import types

import numpy as np

from . import scalar_math as sm


class CannotDerive(ValueError):
    """A scalar function whose derivative cannot be derived from its source."""


# ---------------------------------------------------------------- the rules
# A rule gives the tangent of a call from its arguments' primal values
# (``x``, ``y``), their tangents (``dx``, ``dy``; absent when zero) and the
# call's value ``v``, as source text. One template per argument; the tangent
# is the sum of the templates of the arguments whose tangent is not zero.
def _rule(**templates):
    return templates


RULES = {
    sm.exp: _rule(x="{dx} * {v}"),
    sm.expm1: _rule(x="{dx} * ({v} + ONE)"),
    sm.log: _rule(x="{dx} / {x}"),
    sm.log1p: _rule(x="{dx} / ({x} + ONE)"),
    sm.sqrt: _rule(x="{dx} / (TWO * {v})"),
    sm.sin: _rule(x="{dx} * sm.cos({x})"),
    sm.cos: _rule(x="-{dx} * sm.sin({x})"),
    sm.tan: _rule(x="{dx} * (ONE + {v} * {v})"),
    sm.tan_small: _rule(x="{dx} * (ONE + {v} * {v})"),
    sm.lgamma: _rule(x="{dx} * sm.digamma({x})"),
    sm.digamma: _rule(x="{dx} * sm.polygamma(1, {x})"),
    # n is an integer order: no tangent (zero, for the derivation wrt every input)
    sm.polygamma: _rule(x="sm.zero({dx})", y="{dy} * sm.polygamma({x} + 1, {y})"),
    sm.sin_small: _rule(x="{dx} * sm.cos_small({x})"),
    sm.cos_small: _rule(x="-{dx} * sm.sin_small({x})"),
    sm.tanh: _rule(x="{dx} * (ONE - {v} * {v})"),
    sm.sigmoid: _rule(x="{dx} * ({v} * (ONE - {v}))"),
    # pow's exponent term is masked where PyTorch masks it (0 ** y, y >= 0: log(0) is -inf).
    sm.pow: _rule(x="{dx} * ({y} * sm.pow({x}, {y} - ONE))",
                  y="{dy} * (sm.zero({v}) if ({x} == 0 and {y} >= 0) else {v} * sm.log({x}))"),
    math.exp: _rule(x="{dx} * {v}"),
    math.expm1: _rule(x="{dx} * ({v} + ONE)"),
    math.log: _rule(x="{dx} / {x}"),
    math.log1p: _rule(x="{dx} / ({x} + ONE)"),
    math.log2: _rule(x="{dx} / ({x} * 0.6931471805599453)"),
    math.log10: _rule(x="{dx} / ({x} * 2.302585092994046)"),
    math.sqrt: _rule(x="{dx} / (TWO * {v})"),
    math.sin: _rule(x="{dx} * math.cos({x})"),
    math.cos: _rule(x="-{dx} * math.sin({x})"),
    math.tan: _rule(x="{dx} * (ONE + {v} * {v})"),
    math.tanh: _rule(x="{dx} * (ONE - {v} * {v})"),
    math.sinh: _rule(x="{dx} * math.cosh({x})"),
    math.cosh: _rule(x="{dx} * math.sinh({x})"),
    math.asin: _rule(x="{dx} / math.sqrt(ONE - {x} * {x})"),
    math.acos: _rule(x="-{dx} / math.sqrt(ONE - {x} * {x})"),
    math.atan: _rule(x="{dx} / (ONE + {x} * {x})"),
    math.asinh: _rule(x="{dx} / math.sqrt({x} * {x} + ONE)"),
    math.acosh: _rule(x="{dx} / math.sqrt({x} * {x} - ONE)"),
    math.atanh: _rule(x="{dx} / (ONE - {x} * {x})"),
    math.erf: _rule(x="{dx} * (1.1283791670955126 * math.exp(-{x} * {x}))"),
    math.erfc: _rule(x="-{dx} * (1.1283791670955126 * math.exp(-{x} * {x}))"),
    math.pow: _rule(x="{dx} * ({y} * math.pow({x}, {y} - ONE))",
                    y="{dy} * (sm.zero({v}) if ({x} == 0 and {y} >= 0) else {v} * math.log({x}))"),
    math.atan2: _rule(x="{dx} * {y} / ({x} * {x} + {y} * {y})",
                      y="-{dy} * {x} / ({x} * {x} + {y} * {y})"),
    math.hypot: _rule(x="{dx} * ({x} / {v})", y="{dy} * ({y} / {v})"),
    math.fabs: _rule(x="({dx} if {x} > 0 else (-{dx} if {x} < 0 else sm.zero({dx})))"),
    builtins.abs: _rule(x="({dx} if {x} > 0 else (-{dx} if {x} < 0 else sm.zero({dx})))"),
    # min and max pass the tangent of the operand they return (Python's ties: the first).
    builtins.min: _rule(x="({dx} if {x} <= {y} else sm.zero({dx}))",
                        y="(sm.zero({dy}) if {x} <= {y} else {dy})"),
    builtins.max: _rule(x="({dx} if {x} >= {y} else sm.zero({dx}))",
                        y="(sm.zero({dy}) if {x} >= {y} else {dy})"),
    math.copysign: _rule(x="({dx} if ({x} >= 0) == ({v} >= 0) else -{dx})"),
    # issue 15's scalar math
    sm.log2: _rule(x="{dx} / ({x} * 0.6931471805599453)"),
    sm.log10: _rule(x="{dx} / ({x} * 2.302585092994046)"),
    sm.exp2: _rule(x="{dx} * ({v} * 0.6931471805599453)"),
    sm.sinh: _rule(x="{dx} * sm.cosh({x})"),
    sm.cosh: _rule(x="{dx} * sm.sinh({x})"),
    sm.asinh: _rule(x="{dx} / sm.sqrt({x} * {x} + ONE)"),
    sm.acosh: _rule(x="{dx} / sm.sqrt({x} * {x} - ONE)"),
    sm.atanh: _rule(x="{dx} / (ONE - {x} * {x})"),
    sm.atan: _rule(x="{dx} / ({x} * {x} + ONE)"),
    sm.asin: _rule(x="{dx} / sm.sqrt(ONE - {x} * {x})"),
    sm.acos: _rule(x="-{dx} / sm.sqrt(ONE - {x} * {x})"),
    sm.erf: _rule(x="{dx} * (1.1283791670955126 * sm.exp(-({x} * {x})))"),
    sm.erfc: _rule(x="{dx} * (-1.1283791670955126 * sm.exp(-({x} * {x})))"),
    sm.erfinv: _rule(x="{dx} * (0.886226925452758 * sm.exp({v} * {v}))"),
    sm.atan2: _rule(x="{dx} * {y} / ({x} * {x} + {y} * {y})",
                    y="-{dy} * {x} / ({x} * {x} + {y} * {y})"),
    sm.hypot: _rule(x="{dx} * ({x} / {v})", y="{dy} * ({y} / {v})"),
    sm.copysign: _rule(x="({dx} if sm.copysign(ONE, {x}) == sm.copysign(ONE, {v}) else -{dx})"),
    sm.fmod: _rule(x="{dx}", y="(-sm.trunc({x} / {y}) * {dy})"),
    sm.remainder: _rule(x="{dx}", y="(-sm.floor_divide({x}, {y}) * {dy})"),
}
# Piecewise constant: their tangent is zero.
_CONSTANT = {sm.zero, math.floor, math.ceil, math.trunc, builtins.round, math.isnan,
             math.isinf, math.isfinite, builtins.int, builtins.bool, np.sign, np.isnan,
             np.isinf, np.isfinite, np.floor, np.ceil, np.trunc,
             sm.floor, sm.ceil, sm.trunc, sm.rint, sm.sign, sm.floor_divide, sm.bitwise_not,
             sm.left_shift, sm.right_shift, sm.pi_like}
# Casts: the tangent is cast alike.
_CASTS = {builtins.float, np.float32, np.float64}

# Names the generated code reads besides the function's own globals.
# ONE and TWO are float32, exact in either dtype, so that they keep a float32
# kernel's arithmetic in float32. Inexact constants (ln 2, 2/sqrt(pi)) are float64
# literals in the rules: a float32 one would cut a float64 kernel's derivative
# to float32's precision (GELU's second derivative was off by 2e-8), and a
# literal is in the derived source, which keys the kernel cache.
_NAMESPACE = {"sm": sm, "math": math, "ONE": np.float32(1), "TWO": np.float32(2)}


# ------------------------------------------------------------ reading source
@functools.lru_cache(maxsize=None)
def _parsed(filename):
    return ast.parse("".join(linecache.getlines(filename)), filename)


def _function_ast(fn):
    """``fn`` as an ``ast.FunctionDef`` (a lambda becomes ``def``: ``return``
    its expression), from its own generated source or from its file; a copy,
    which the caller may change."""
    made = getattr(fn, "__derivation_ast__", None)
    if made is not None:
        return copy.deepcopy(made)
    code = fn.__code__
    filename = inspect.getsourcefile(fn) or code.co_filename
    linecache.checkcache(filename)
    try:
        tree = _parsed(filename)
    except (SyntaxError, TypeError) as error:
        raise CannotDerive(f"{fn.__qualname__}: its source could not be read ({error})") from None
    params = list(code.co_varnames[:code.co_argcount])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Lambda, ast.FunctionDef)) and node.lineno <= code.co_firstlineno \
                and node.end_lineno >= code.co_firstlineno \
                and [a.arg for a in node.args.args] == params:
            if isinstance(node, ast.FunctionDef) and node.name != fn.__name__:
                continue
            found.append(node)
    if len(found) > 1:  # several lambdas with these parameters on one line: where its code is
        found = [n for n in found if _spans(n, code)]
    if len(found) != 1:
        raise CannotDerive(f"{fn.__qualname__}: its source could not be found "
                           f"({filename}:{code.co_firstlineno}); derivatives are derived from "
                           "the source of a row's functions")
    node = copy.deepcopy(found[0])
    if isinstance(node, ast.Lambda):
        node = ast.FunctionDef(name=_identifier(fn.__name__), args=node.args,
                               body=[ast.Return(node.body)],
                               decorator_list=[], returns=None, type_params=[])
    return ast.fix_missing_locations(node)


def _identifier(name):
    return name if name.isidentifier() else "fn"


def _spans(node, code):
    """Whether every instruction of ``code`` lies within ``node``'s body."""
    body = node.body if isinstance(node, ast.Lambda) else node
    places = [(line, col, end_line, end_col) for line, end_line, col, end_col
              in code.co_positions()  # (RESUME and RETURN have empty spans)
              if line is not None and col is not None and (end_line, end_col) > (line, col)]
    return bool(places) and (body.lineno, body.col_offset) <= min(p[:2] for p in places) and \
        max(p[2:] for p in places) <= (body.end_lineno, body.end_col_offset)


def _environment(fn):
    """The names ``fn``'s source reads: its globals, its closure's values."""
    env = dict(fn.__globals__)
    if fn.__closure__:
        env.update(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))
    return env


def _resolve(node, env):
    """The object a call's function expression names (a name or attributes of one)."""
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        return getattr(builtins, node.id, None)
    if isinstance(node, ast.Attribute):
        owner = _resolve(node.value, env)
        return getattr(owner, node.attr, None) if owner is not None else None
    return None


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


# --------------------------------------------------------- the transformation
class _Transform:
    """Forward mode over one function: each active name ``x`` gets a tangent
    (``tangent[x]``, a name); statements are rewritten in order, and every
    expression whose value depends on an active name is lowered to
    temporaries (conditional expressions to ``if`` statements, so only the
    branch taken runs). ``like``: a tangent whose type a zero takes."""

    def __init__(self, fn, tree, like):
        self.fn, self.tree, self.like = fn, tree, like
        self.env = _environment(fn)
        self.lines = []
        self.depth = 1
        self.fresh = itertools.count()
        # Names the new code may not take: derived code is derived again, and its
        # own temporaries (``_d1``) and tangents (``d__d1``) must keep their meaning.
        self.taken = _names(tree) | {a.arg for a in tree.args.args}
        self.tangent = {}
        self.nonzero = False  # whether some return has a tangent that is not zero

    def run(self, seeds):
        """Rewrite the body; ``seeds``: parameter name -> its tangent's name."""
        self.tangent.update(seeds)
        self.taken.update(seeds.values())
        for local in self.activity(set(seeds)):
            if local not in self.tangent:
                self.tangent[local] = self.name(f"d_{local}")
        self.statements(self.tree.body)
        return self

    # -- output
    def emit(self, line):
        self.lines.append("    " * self.depth + line)

    def name(self, wanted):
        """``wanted``, or with a suffix where the code already has that name."""
        name = wanted
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        return name

    def temp(self, prefix="_t"):
        while True:
            name = f"{prefix}{next(self.fresh)}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def zero(self):
        return f"sm.zero({self.like})"

    def refuse(self, node, what):
        raise CannotDerive(f"{self.fn.__qualname__}: cannot differentiate {what} "
                           f"({ast.unparse(node)!r})")

    # -- which names are active: those assigned, anywhere, an active value
    def activity(self, active):
        assigns = [n for n in ast.walk(self.tree) if isinstance(n, (ast.Assign, ast.AugAssign))]
        for node in assigns:
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if not isinstance(target, ast.Name) or (isinstance(node, ast.Assign)
                                                    and len(node.targets) != 1):
                self.refuse(node, "an assignment to something other than one name")
        changed = True
        while changed:
            changed = False
            for node in assigns:
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                reads = _names(node.value) | ({target.id} if isinstance(node, ast.AugAssign)
                                              else set())
                if target.id not in active and reads & active and self.carries_given(
                        node.value, active):
                    active.add(target.id)
                    changed = True
        return active

    def carries_given(self, node, active):
        saved, self.tangent = self.tangent, dict.fromkeys(active)
        try:
            return self.carries(node)
        finally:
            self.tangent = saved

    def carries(self, node):
        """Whether ``node``'s value may have a tangent: it reads an active
        name other than through a comparison, a test or a piecewise
        constant function."""
        if isinstance(node, ast.Name):
            return node.id in self.tangent
        if isinstance(node, (ast.Constant, ast.Compare, ast.BoolOp)):
            return False
        if isinstance(node, ast.UnaryOp):
            return not isinstance(node.op, ast.Not) and self.carries(node.operand)
        if isinstance(node, ast.IfExp):
            return self.carries(node.body) or self.carries(node.orelse)
        if isinstance(node, ast.BinOp):
            return not isinstance(node.op, ast.FloorDiv) and (
                self.carries(node.left) or self.carries(node.right))
        if isinstance(node, ast.Call) and _resolve(node.func, self.env) in _CONSTANT:
            return False
        return not _names(node).isdisjoint(self.tangent)

    # -- statements
    def statements(self, body):
        for node in body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # a docstring
            if isinstance(node, ast.Pass):
                continue
            if isinstance(node, ast.AugAssign):
                node = ast.Assign(targets=[node.target], value=ast.BinOp(
                    ast.Name(node.target.id, ast.Load()), node.op, node.value))
            if isinstance(node, ast.Assign):
                name = node.targets[0].id
                primal, tangent = self.expr(node.value)
                self.emit(f"{name} = {primal}")
                if name in self.tangent:
                    self.emit(f"{self.tangent[name]} = {tangent or self.zero()}")
            elif isinstance(node, ast.Return):
                _, tangent = self.expr(node.value)
                self.nonzero |= tangent is not None
                self.emit(f"return {tangent or self.zero()}")
            elif isinstance(node, ast.If):
                for branch, lines in (("if " + ast.unparse(node.test) + ":", node.body),
                                      ("else:", node.orelse)):
                    if not lines:
                        continue
                    self.emit(branch)
                    self.depth += 1
                    self.statements(lines)
                    self.emit("pass")
                    self.depth -= 1
            else:
                self.refuse(node, f"a {type(node).__name__} statement")

    # -- expressions: (primal source, tangent source or None for zero)
    def expr(self, node):
        if not self.carries(node):
            return f"({ast.unparse(node)})", None
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            self.refuse(node, f"a {type(node).__name__} expression")
        return method(node)

    def bind(self, primal, tangent):
        """Temporaries holding a value and its tangent."""
        v = self.temp()
        self.emit(f"{v} = {primal}")
        if tangent is None:
            return v, None
        dv = self.temp("_d")
        self.emit(f"{dv} = {tangent}")
        return v, dv

    def expr_Name(self, node):
        return node.id, self.tangent[node.id]

    def expr_Compare(self, node):
        return f"({ast.unparse(node)})", None

    expr_BoolOp = expr_Compare

    def expr_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            return f"({ast.unparse(node)})", None
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            self.refuse(node, "a bitwise operator")
        p, t = self.expr(node.operand)
        op = "-" if isinstance(node.op, ast.USub) else "+"
        return f"({op}{p})", None if t is None else f"({op}{t})"

    def expr_BinOp(self, node):
        op = type(node.op)
        if op not in _SYMBOLS:
            self.refuse(node, "a bitwise operator")
        lp, lt = self.expr(node.left)
        rp, rt = self.expr(node.right)
        v, _ = self.bind(f"({lp} {_SYMBOLS[op]} {rp})", None)
        if op is ast.Add:
            tangent = _sum(lt, rt)
        elif op is ast.Sub:
            tangent = _sum(lt, None if rt is None else f"(-{rt})")
        elif op is ast.Mult:
            tangent = _sum(None if lt is None else f"{lt} * {rp}",
                           None if rt is None else f"{lp} * {rt}")
        elif op is ast.Div:  # d(a / b) = da / b - (a / b) * db / b: b is never squared
            tangent = _sum(None if lt is None else f"{lt} / {rp}",
                           None if rt is None else f"(-({v} / {rp}) * {rt})")
        elif op is ast.Pow:
            tangent = _sum(
                None if lt is None else f"{lt} * ({rp} * sm.pow({lp}, {rp} - ONE))",
                None if rt is None else
                f"{rt} * (sm.zero({v}) if ({lp} == 0 and {rp} >= 0) else {v} * sm.log({lp}))")
        elif op is ast.Mod:  # a % b = a - b * floor(a / b)
            tangent = _sum(lt, None if rt is None else f"(-math.floor({lp} / {rp}) * {rt})")
        else:  # floor division: piecewise constant
            tangent = None
        if tangent is None:
            return v, None
        dv = self.temp("_d")
        self.emit(f"{dv} = {tangent}")
        return v, dv

    def expr_IfExp(self, node):

        v, dv = self.temp(), self.temp("_d")
        for branch, value in (("if " + ast.unparse(node.test) + ":", node.body),
                              ("else:", node.orelse)):
            self.emit(branch)
            self.depth += 1
            p, t = self.expr(value)
            self.emit(f"{v} = {p}")
            self.emit(f"{dv} = {t or self.zero()}")
            self.depth -= 1
        return v, dv

    def expr_Call(self, node):
        if node.keywords:
            self.refuse(node, "a call with keyword arguments")
        fn = _resolve(node.func, self.env)
        args = [self.expr(a) for a in node.args]
        primals = [p for p, _ in args]
        callee = ast.unparse(node.func)
        call = f"{callee}({', '.join(primals)})"
        if fn in _CONSTANT:
            return call, None
        if fn in _CASTS:
            (_, t), = args
            return call, None if t is None else f"{callee}({t})"
        rule = RULES.get(fn)
        if rule is not None:
            v, _ = self.bind(call, None)
            names = dict(zip("xy", primals), v=v)
            terms = []
            for slot, (_, t) in zip("xy", args):
                if t is not None:
                    if slot not in rule:
                        self.refuse(node, f"argument {slot} of {callee}")
                    terms.append("(" + rule[slot].format(**names, **{"d" + slot: t}) + ")")
            return self.bind(v, " + ".join(terms))
        if isinstance(fn, types.FunctionType):  # a plain helper: its derived twin
            twin = helper_tangent(fn, tuple(t is not None for _, t in args))
            if twin is None:
                return call, None
            self.env[twin.__name__] = twin
            tangents = [t for _, t in args if t is not None]
            return self.bind(call, f"{twin.__name__}({', '.join(primals + tangents)})")
        self.refuse(node, f"a call of {callee}, which has no derivative rule")


_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**",
            ast.FloorDiv: "//", ast.Mod: "%"}


def _sum(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return f"({a} + {b})"


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


# ------------------------------------------------------------- derived code
def _live(lines):
    """``lines`` without the assignments to temporaries that nothing reads
    (the primal values a tangent did not need)."""
    while True:
        assigned = {}
        for i, line in enumerate(lines):
            m = _TEMP.match(line)
            if m:
                assigned.setdefault(m[1], []).append(i)
        dead = set()
        for name, where in assigned.items():
            reads = sum(len(re.findall(rf"\b{name}\b", line)) for line in lines)
            if reads == len(where):  # every occurrence is an assignment to it
                dead.update(where)
        if not dead:
            return lines
        lines = [line for i, line in enumerate(lines) if i not in dead]


_TEMP = re.compile(r"^\s*(_[td]\d+) = ")


def _compile(name, params, transform):
    """The function ``def name(params)`` with the transformed body; it keeps
    its own source (``__derivation_ast__``) so that it can be derived again."""
    source = f"def {name}({', '.join(params)}):\n" + "\n".join(_live(transform.lines)) + "\n"
    namespace = dict(transform.env)
    namespace.update(_NAMESPACE)
    origin = transform.fn.__qualname__
    try:
        exec(compile(source, f"<derived from {origin}>", "exec"), namespace)
    except SyntaxError as error:  # a bug of this module's: say what it made
        raise CannotDerive(f"{origin}: the derived code did not compile ({error}):\n"
                           f"{source}") from None
    fn = namespace[name]
    fn.__derivation_ast__ = ast.parse(source).body[0]
    fn.__derivation_source__ = source
    return fn


@functools.lru_cache(maxsize=None)
def helper_tangent(fn, active):
    """The tangent of helper ``fn``'s value: a function of its parameters and
    then the tangents of those flagged in ``active``; None where it is zero."""
    tree = _function_ast(fn)
    params = [a.arg for a in tree.args.args]
    taken = _names(tree) | set(params)
    seeds = {}
    for p, a in zip(params, active):
        if a:  # a name the helper does not use already (derived code has d_x of its own)
            seeds[p] = f"d_{p}"
            while seeds[p] in taken:
                seeds[p] += "_"
            taken.add(seeds[p])
    transform = _Transform(fn, tree, next(iter(seeds.values()))).run(seeds)
    if not transform.nonzero:
        return None
    name = f"_tangent_{tree.name}_" + "".join("1" if a else "0" for a in active)
    return _compile(name, params + list(seeds.values()), transform)


def tangent(fn, wrt, name=None):
    """``g * d fn / d wrt`` as a new scalar function of ``g`` and the
    parameters of ``fn`` it reads (in ``fn``'s order), or None where it is
    zero for every input."""
    tree = _function_ast(fn)
    params = [a.arg for a in tree.args.args]
    if wrt not in params:
        raise ValueError(f"{fn.__qualname__} has no parameter {wrt!r}")
    if "g" in params:
        raise ValueError(f"{fn.__qualname__}: a parameter is named 'g' (rename it first)")
    transform = _Transform(fn, tree, "g").run({wrt: "g"})
    if not transform.nonzero:
        return None
    transform.lines = _live(transform.lines)  # what the tangent reads, not the primal alone
    used = _names(ast.parse("def _():\n" + "\n".join(transform.lines)))
    return _compile(name or f"d_{tree.name}_d_{wrt}", ["g"] + [p for p in params if p in used],
                    transform)


def renamed(fn, names, name=None):
    """``fn`` with its parameters (and their uses) renamed by ``names``."""
    tree = _function_ast(fn)

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            return ast.copy_location(ast.Name(names.get(node.id, node.id), node.ctx), node)

        def visit_arg(self, node):
            return ast.copy_location(ast.arg(names.get(node.arg, node.arg)), node)

    new = Rename().visit(ast.FunctionDef(name=name or tree.name, args=tree.args, body=tree.body,
                                         decorator_list=[], returns=None, type_params=[]))
    source = ast.unparse(ast.fix_missing_locations(new)) + "\n"
    namespace = _environment(fn)
    namespace.update(_NAMESPACE)
    exec(compile(source, f"<derived from {fn.__qualname__}>", "exec"), namespace)
    made = namespace[new.name]
    made.__derivation_ast__ = ast.parse(source).body[0]
    made.__derivation_source__ = source
    return made


# ------------------------------------------------------------ derivative rows
def _zero_derivative(g):
    """The derivative of an input that a function reads only through tests:
    zero, materialized (as PyTorch's explicit ``zeros_like`` formulas)."""
    return sm.zero(g)


def _fresh(name, taken):
    k = 1
    while f"{name}{k}" in taken:
        k += 1
    return f"{name}{k}"


def derivative_row(row, i):
    """The row whose forward is ``row``'s derivative for input ``i`` (its
    parameters ``g`` and ``out`` renamed, since they would clash with what
    its own derivatives read); its derivatives are derived from it. Made
    once per row and input. ``parent_params`` lists, per input of the new
    row, the name it had in ``row``'s derivative (``g``, ``out`` or an input)."""
    cache = row.__dict__.setdefault("_derivative_rows", {})
    made = cache.get(i)
    if made is not None:
        return made
    from .row import Row  # (the row class builds on nothing here: no cycle at import)
    params = row.grad_params(i)
    taken = set(params) | {"g", "out"}
    names = {}
    for p in ("g", "out"):
        if p in params:
            names[p] = _fresh(p, taken)
            taken.add(names[p])
    name = f"{row.name}_backward_{row.inputs[i]}"
    forward = renamed(row.derivative(i), names, name=name)
    inputs = [names.get(p, p) for p in params]
    masks = {row.inputs[k] for k in row.bool_inputs}
    grads = {}
    for new, old in zip(inputs, params):
        if old in masks:
            continue
        grads[new] = tangent(forward, new, name=f"d_{name}_d_{new}") or _zero_derivative
    made = Row(name, forward, grads, bool_inputs=[n for n, o in zip(inputs, params) if o in masks],
               domain=row.domain, method=False, title=f"{row.op_name}Backward",
               wraps_numbers=row.wraps_numbers)
    made.parent_params = params
    cache[i] = made
    return made
