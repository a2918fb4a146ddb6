"""The ops, bound to Tensor: the rows' methods (generated from the op table,
so a new row is a new method ``t.name(...)`` and in-place ``t.name_(...)``),
every op its module declares with ``registry.tensor_op``, and the Python
operators.
"""
from ..declarations.op_table import BY_NAME, ROWS
from ..tensor import Tensor
from . import (arithmetic, copying, dual, indexing, joining, linalg,  # noqa: F401  (declare)
               reductions, registry, straight_line, taped, views)
from .arithmetic import clamp, pow, where  # noqa: A004
from . import linalg_dense, scans, statistics  # noqa: F401,E402  (issue 15 item 2: declare)
from . import products, shapes  # noqa: F401,E402  (issue 15 items 4, 6: declare)
from . import scatter, sorting  # noqa: F401,E402  (issue 15 items 3, 5: declare)
from . import pointwise  # noqa: F401,E402  (issue 15 item 1: keyword rows, operators)
from . import interop, sampling  # noqa: F401,E402  (issue 15 items 7, 9: interop, random sampling)
from . import aliases, distances, new_tensors  # noqa: F401,E402  (absolute, cdist, new_zeros, ...)
from . import everyday_math, everyday_shapes, everyday_writes, quantiles  # noqa: F401,E402  (issue 15 breadth)
from . import special_functions  # noqa: F401,E402  (mvlgamma; torch.special's composites)
from . import inplace_views  # noqa: F401,E402  (unsqueeze_, t_, as_strided_, ...)
from .elementwise import apply, apply_inplace


def _generated_on_first_call(row):
    """``Tensor.<row>``: a stub that generates the row's straight-line method
    on its first call and puts it in its own place on Tensor, so that
    ``import nbgrad`` does not grow with the number of rows."""
    generated = None

    def method(self, *args):
        nonlocal generated
        if generated is None:
            generated = straight_line.method(row)
            generated.__name__, generated.__doc__ = method.__name__, method.__doc__
            if Tensor.__dict__.get(row.name) is method:  # (not since wrapped, as pow)
                setattr(Tensor, row.name, generated)
        return generated(self, *args)
    return method


def _row_method(row):
    if straight_line.supported(row):
        method = _generated_on_first_call(row)
    else:
        def method(self, *args):
            return apply(row, (self, *args))

    def method_(self, *args):
        return apply_inplace(row, self, args)

    method.__name__, method_.__name__ = row.name, row.name + "_"
    method.__doc__ = f"Elementwise ``{row.name}`` (generated from its op-table row)."
    method_.__doc__ = f"In-place ``{row.name}``: writes into ``self`` and bumps its version."
    return method, method_


def _install_tensor_methods():
    T = Tensor
    for row in ROWS:
        if row.method:
            method, method_ = _row_method(row)
            setattr(T, row.name, method)
            setattr(T, row.name + "_", method_)
    for name, method in registry.METHODS.items():
        setattr(T, name, method)
    T.__neg__ = T.neg
    T.__abs__ = T.abs
    for name, dunder in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("div", "truediv"),
                         ("pow", "pow")):
        row = BY_NAME[name]
        setattr(T, f"__{dunder}__", arithmetic._operator(row, dunder))
        setattr(T, f"__r{dunder}__", arithmetic._reversed(row, dunder))
        setattr(T, f"__i{dunder}__", arithmetic._augmented(row, dunder))
    T.__rtruediv__ = arithmetic._rtruediv
    T.true_divide = T.div
    number = BY_NAME["pow_number"]
    with_numbers = arithmetic._with_number_exponents
    T.pow = with_numbers(T.pow, number)
    T.__pow__ = with_numbers(T.__pow__, number)
    T.pow_ = with_numbers(T.pow_, lambda self, e: apply_inplace(number, self, (e,), op_name="pow_"))
    T.__ipow__ = with_numbers(
        T.__ipow__, lambda self, e: apply_inplace(number, self, (e,), op_name="__ipow__"))
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(T, f"__{name}__", arithmetic._operator(BY_NAME[name], name))
    T.__hash__ = object.__hash__  # defining __eq__ would otherwise remove it
    T.__matmul__ = matmul = registry.FUNCTIONS["matmul"]  # (with its tangent rule)
    T.__rmatmul__ = lambda self, other: matmul(other, self)
    T.__getitem__ = dual.tangent_rule(dual.LINEAR)(indexing.getitem)
    aliases.install_methods(T)
    T.__setitem__ = dual.tangent_rule(dual.SETITEM)(indexing.setitem)


_install_tensor_methods()

__all__ = ["clamp", "where", "pow", "ROWS"]
