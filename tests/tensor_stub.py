"""Generates ``nbgrad/tensor.pyi``: the Tensor class as it is at runtime.

Tensor's methods and operators are installed by ``nbgrad/ops/__init__.py``
(many generated from op-table rows), so ``nbgrad/tensor.py`` does not show
them; the stub does, for editors and type checkers. Regenerate it after
changing Tensor's API::

    python -m tests.tensor_stub --write

Signatures come from ``inspect.signature``, except for methods generated from a
row, whose ``(*args)`` or ``(x0, x1)`` parameters are named from the row's
inputs. Docstrings are the runtime's (first sentence); attributes without one
take theirs from the tables below, which also place each attribute in a group.
A new attribute that is not generated from a row needs a line in
``_TENSOR`` (render() says so).
"""
import inspect
import itertools
import re
import sys
from pathlib import Path

import nbgrad  # noqa: F401  (installs Tensor's methods)
from nbgrad.ops.elementwise import Row

STUB = Path(__file__).resolve().parent.parent / "nbgrad" / "tensor.pyi"
COMMAND = "python -m tests.tensor_stub --write"
MODULE = sys.modules["nbgrad.tensor"]  # nbgrad.tensor is also the name of a function

# Class attributes that are Python's machinery, not API.
NOT_API = frozenset({"__dict__", "__doc__", "__firstlineno__", "__module__", "__qualname__",
                     "__slots__", "__static_attributes__", "__weakref__"})

# Row input names as PyTorch calls the parameters (the first input is ``self``).
_TORCH_NAMES = {"b": "other"}

# Tensor's attributes that are not generated from a row, by group, in the
# stub's order of groups: name -> (return annotation, docstring). A docstring
# of None: the runtime object has one. "" for an annotation: none given.
# ``bool`` and ``float`` are Tensor methods, so annotations say _bool, _float.
_TENSOR = {
    "metadata": {
        "__init__": ("None", "Not called: create tensors with ``nbgrad.tensor()``, "
                             "``nbgrad.zeros()`` and friends."),
        "device": ("_device", "The device the tensor's memory is on."),
        "dim": ("int", "The number of dimensions."),
        "dtype": ("_dtype", "The type of the elements."),
        "element_size": ("int", "The size of one element in bytes."),
        "is_contiguous": ("_bool", "Whether the tensor is C-contiguous in memory."),
        "is_cuda": ("_bool", "Whether the tensor is on a CUDA device."),
        "is_floating_point": ("_bool", "Whether the dtype is a floating point type."),
        "ndim": ("int", "The number of dimensions (alias of ``dim()``)."),
        "nelement": ("int", "The number of elements (alias of ``numel()``)."),
        "numel": ("int", "The number of elements."),
        "shape": ("Size", "The size of each dimension."),
        "size": ("", "The size of each dimension, or of dimension ``dim``."),
        "storage_offset": ("int", "The offset of the first element in the storage, in elements."),
        "data_ptr": ("int", None),
        "itemsize": ("int", "The size of one element in bytes (``element_size()``)."),
        "nbytes": ("int", "The bytes of the tensor's elements, ``numel() * element_size()``."),
        "stride": ("", "The stride of each dimension in elements, or of dimension ``dim``."),
    },
    "autograd": {
        "backward": ("None", "Computes the gradient of this tensor with respect to the graph's "
                             "leaves, accumulated into their ``.grad``."),
        "data": ("Tensor", None),
        "detach": ("Tensor", None),
        "detach_": ("Tensor", "Detaches this tensor from the graph that created it, in place."),
        "grad": ("Tensor | None", "The gradient accumulated by ``backward()``; None until then."),
        "grad_fn": ("Node | None", "The node that created this tensor; None for a leaf."),
        "is_inference": ("_bool", None),
        "is_leaf": ("_bool", "Whether the tensor has no history (``grad_fn`` is None)."),
        "register_post_accumulate_grad_hook": ("", None),
        "register_hook": ("", "Registers ``hook(grad)``, called with this tensor's gradient; "
                              "returns a handle with ``remove()``."),
        "requires_grad": ("_bool", "Whether gradients are recorded for this tensor."),
        "requires_grad_": ("Tensor", "Sets ``requires_grad`` in place and returns ``self``."),
        "retain_grad": ("None", "Makes this non-leaf tensor keep its ``.grad`` in "
                                "``backward()``."),
        "retains_grad": ("_bool", "Whether this non-leaf tensor keeps its ``.grad``."),
    },
    "conversion": {
        "__array__": ("", "The tensor as a NumPy array, for ``np.asarray(t)``."),
        "__array_ufunc__": ("None", "NumPy ufuncs defer to Tensor's reflected operators."),
        "__bool__": ("_bool", "The value of a one-element tensor as a bool."),
        "__cuda_array_interface__": ("dict", None),
        "__deepcopy__": ("Tensor", "A copy of a leaf tensor, with its own memory and gradient."),
        "__reduce_ex__": ("tuple", "Pickling: values, dtype, device and ``requires_grad``."),
        "__float__": ("_float", "The value of a one-element tensor as a float."),
        "__index__": ("int", "The value of a one-element integer tensor as an index."),
        "__int__": ("int", "The value of a one-element tensor as an int."),
        "__repr__": ("str", "The tensor as PyTorch prints it."),
        "bool": ("Tensor", "``self.to(nbgrad.bool)``."),
        "byte": ("Tensor", "``self.to(nbgrad.uint8)``."),
        "char": ("Tensor", "``self.to(nbgrad.int8)``."),
        "half": ("Tensor", "``self.to(nbgrad.float16)``."),
        "int": ("Tensor", "``self.to(nbgrad.int32)``."),
        "short": ("Tensor", "``self.to(nbgrad.int16)``."),
        "type_as": ("Tensor", None),
        "__dlpack__": ("", None),
        "__dlpack_device__": ("tuple", None),
        "__format__": ("str", "``format(t, spec)``: a 0-d tensor formats as its number."),
        "clone": ("Tensor", None),
        "contiguous": ("Tensor", None),
        "cpu": ("Tensor", "A copy in CPU memory, or ``self`` when already there."),
        "cuda": ("Tensor", "A copy in CUDA memory, or ``self`` when already there."),
        "double": ("Tensor", "``self.to(nbgrad.float64)``."),
        "float": ("Tensor", "``self.to(nbgrad.float32)``."),
        "item": ("", "The value of a one-element tensor as a Python number."),
        "long": ("Tensor", "``self.to(nbgrad.int64)``."),
        "numpy": ("", "The tensor as a NumPy array sharing its memory."),
        "to": ("Tensor", None),
        "tolist": ("", "The tensor as (nested) Python lists of numbers."),
        "type": ("", None),
    },
    "elementwise ops": {
        "copy_": ("Tensor", "Copies ``src`` (broadcast) into ``self``, taped with respect to "
                            "``src``."),
        "fill_": ("Tensor", "Fills ``self`` with ``value``."),
        "zero_": ("Tensor", "Fills ``self`` with zeros."),
        "isclose": ("Tensor", None),
        "logit": ("Tensor", None), "logit_": ("Tensor", None),
        "polygamma": ("Tensor", None), "polygamma_": ("Tensor", None),
        "mvlgamma": ("Tensor", None), "mvlgamma_": ("Tensor", None),
    },
    "reductions": {
        "amax": ("Tensor", "The maximum over ``dim`` (all dims by default); ties share the "
                           "gradient."),
        "amin": ("Tensor", "The minimum over ``dim`` (all dims by default); ties share the "
                           "gradient."),
        "log_softmax": ("Tensor", "``log(softmax(self, dim))``, computed stably."),
        "matmul": ("Tensor", "The matrix product, with PyTorch's broadcasting rules."),
        "max": ("", "The maximum of all elements, or (values, indices) along ``dim``."),
        "mean": ("Tensor", "The mean over ``dim`` (all dims when None)."),
        "min": ("", "The minimum of all elements, or (values, indices) along ``dim``."),
        "mm": ("Tensor", "The product of two matrices."),
        "softmax": ("Tensor", "The softmax along ``dim``."),
        "sum": ("Tensor", None),
        # issue 15: nbgrad/ops/statistics.py, scans.py, linalg_dense.py
        "aminmax": ("", None), "all": ("Tensor", None), "any": ("Tensor", None),
        "argmax": ("Tensor", None), "argmin": ("Tensor", None),
        "count_nonzero": ("Tensor", None), "cummax": ("", None), "cummin": ("", None),
        "cumprod": ("Tensor", None), "cumprod_": ("Tensor", None), "cumsum": ("Tensor", None),
        "cumsum_": ("Tensor", None), "det": ("Tensor", None),
        "inverse": ("Tensor", None), "logsumexp": ("Tensor", None), "median": ("", None),
        "mode": ("", None), "nanmean": ("Tensor", None), "nanmedian": ("", None),
        "nansum": ("Tensor", None), "norm": ("Tensor", None), "prod": ("Tensor", None),
        "std": ("Tensor", None), "svd": ("", None), "var": ("Tensor", None),
        # issue 15 item 6: nbgrad/ops/products.py
        "addmm": ("Tensor", None), "addmm_": ("Tensor", None), "addmv": ("Tensor", None),
        "addmv_": ("Tensor", None), "baddbmm": ("Tensor", None), "baddbmm_": ("Tensor", None),
        "bmm": ("Tensor", None), "cross": ("Tensor", None), "dot": ("Tensor", None),
        "ger": ("Tensor", None), "kron": ("Tensor", None), "mv": ("Tensor", None),
        "outer": ("Tensor", None), "vdot": ("Tensor", None),
    },
    "views": {
        "T": ("Tensor", "The view with the dimensions reversed."),
        "as_strided": ("Tensor", None), "as_strided_": ("Tensor", None),
        "unsqueeze_": ("Tensor", None), "squeeze_": ("Tensor", None), "t_": ("Tensor", None),
        "transpose_": ("Tensor", None), "swapdims_": ("Tensor", None),
        "swapaxes_": ("Tensor", None),
        "expand": ("Tensor", "A view with dimensions of size 1 broadcast to ``sizes``."),
        "expand_as": ("Tensor", "``self.expand(other.size())``."),
        "flatten": ("Tensor", "Dimensions ``start_dim`` to ``end_dim`` as one (a view where "
                              "possible)."),
        "mT": ("Tensor", "The view with the last two dimensions swapped."),
        "permute": ("Tensor", "A view with the dimensions reordered."),
        "reshape": ("Tensor", "The tensor with shape ``shape``: a view where possible, else a "
                              "copy."),
        "reshape_as": ("Tensor", "``self.reshape(other.shape)``."),
        "squeeze": ("Tensor", "A view without the dimensions of size 1 (or just ``dim``)."),
        "t": ("Tensor", "The transpose of a matrix (a view)."),
        "transpose": ("Tensor", "A view with dimensions ``dim0`` and ``dim1`` swapped."),
        "unsqueeze": ("Tensor", "A view with a dimension of size 1 inserted at ``dim``."),
        "view": ("Tensor", "A view with shape ``shape`` of the same memory."),
        "view_as": ("Tensor", "``self.view(other.shape)``."),
        # issue 15 item 4: nbgrad/ops/shapes.py
        "broadcast_to": ("Tensor", None), "chunk": ("tuple", None), "diag": ("Tensor", None),
        "diag_embed": ("Tensor", None), "diagonal": ("Tensor", None), "flip": ("Tensor", None),
        "fliplr": ("Tensor", None), "flipud": ("Tensor", None), "moveaxis": ("Tensor", None),
        "movedim": ("Tensor", None), "narrow": ("Tensor", None), "repeat": ("Tensor", None),
        "repeat_interleave": ("Tensor", None), "roll": ("Tensor", None), "split": ("tuple", None),
        "split_with_sizes": ("tuple", None), "swapaxes": ("Tensor", None),
        "swapdims": ("Tensor", None), "tile": ("Tensor", None), "tril": ("Tensor", None),
        "tril_": ("Tensor", None), "triu": ("Tensor", None), "triu_": ("Tensor", None),
        "unbind": ("tuple", None), "unflatten": ("Tensor", None),
    },
    "indexing": {
        "__getitem__": ("Tensor", "``self[key]``: a view for basic indexing, a copy for advanced "
                                  "indexing."),
        "__iter__": ("", "The subtensors along the first dimension."),
        "__len__": ("int", "The size of the first dimension."),
        "__setitem__": ("None", "``self[key] = value``, in place."),
        # issue 15: nbgrad/ops/scatter.py, sorting.py
        "argwhere": ("Tensor", None), "gather": ("Tensor", None), "index_add": ("Tensor", None),
        "index_add_": ("Tensor", None), "index_copy": ("Tensor", None),
        "index_copy_": ("Tensor", None), "index_fill": ("Tensor", None),
        "index_fill_": ("Tensor", None), "index_select": ("Tensor", None),
        "masked_fill": ("Tensor", None), "masked_fill_": ("Tensor", None),
        "masked_scatter": ("Tensor", None), "masked_scatter_": ("Tensor", None),
        "masked_select": ("Tensor", None), "nonzero": ("", None), "scatter": ("Tensor", None),
        "scatter_": ("Tensor", None), "scatter_add": ("Tensor", None),
        "scatter_add_": ("Tensor", None), "scatter_reduce": ("Tensor", None),
        "scatter_reduce_": ("Tensor", None), "take": ("Tensor", None),
        "take_along_dim": ("Tensor", None),
        "argsort": ("Tensor", None), "histc": ("Tensor", None), "kthvalue": ("", None),
        "sort": ("", None), "topk": ("", None), "unique": ("", None),
        "unique_consecutive": ("", None),
    },
    "comparison": {
        "allclose": ("_bool", None),
        "equal": ("_bool", None),
    },
    "random sampling": {
        "bernoulli": ("Tensor", None),
        "bernoulli_": ("Tensor", None),
        "cauchy_": ("Tensor", None),
        "exponential_": ("Tensor", None),
        "geometric_": ("Tensor", None),
        "log_normal_": ("Tensor", None),
        "multinomial": ("Tensor", None),
        "normal_": ("Tensor", None),
        "poisson": ("Tensor", None),
        "random_": ("Tensor", None),
        "uniform_": ("Tensor", None),
    },
    "aliases and everyday ops": {
        # nbgrad/ops/aliases.py, new_tensors.py, everyday_*.py, quantiles.py
        "H": ("Tensor",
             "The transpose of a matrix (no complex dtypes: no conjugate), a view."),
        "absolute": ("Tensor", None), "absolute_": ("Tensor", None), "adjoint": ("Tensor", None),
        "arccos": ("Tensor", None), "arccos_": ("Tensor", None), "arccosh": ("Tensor", None),
        "arccosh_": ("Tensor", None), "arcsin": ("Tensor", None), "arcsin_": ("Tensor", None),
        "arcsinh": ("Tensor", None), "arcsinh_": ("Tensor", None), "arctan": ("Tensor", None),
        "arctan2": ("Tensor", None), "arctan2_": ("Tensor", None), "arctan_": ("Tensor", None),
        "arctanh": ("Tensor", None), "arctanh_": ("Tensor", None), "bincount": ("Tensor", None),
        "corrcoef": ("Tensor", None), "cov": ("Tensor", None), "diagflat": ("Tensor", None),
        "diff": ("Tensor", None), "div": ("Tensor", None), "div_": ("Tensor", None),
        "divide": ("Tensor", None), "divide_": ("Tensor", None), "dsplit": ("", None),
        "fill_diagonal_": ("Tensor", None), "fix": ("Tensor", None), "fix_": ("Tensor", None),
        "get_device": ("int", None), "greater": ("Tensor", None), "greater_": ("Tensor", None),
        "greater_equal": ("Tensor", None), "greater_equal_": ("Tensor", None),
        "hsplit": ("", None), "index_put": ("Tensor", None), "index_put_": ("Tensor", None),
        "is_complex": ("_bool", None),
        "is_cpu": ("_bool", "Whether the tensor is on the CPU."),
        "is_nonzero": ("_bool", None), "is_same_size": ("_bool", None),
        "is_signed": ("_bool", None), "less": ("Tensor", None), "less_": ("Tensor", None),
        "less_equal": ("Tensor", None), "less_equal_": ("Tensor", None),
        "logcumsumexp": ("Tensor", None),
        "mH": ("Tensor",
              "``mT``: real dtypes have no conjugate; a view."),
        "msort": ("Tensor", None), "multiply": ("Tensor", None), "multiply_": ("Tensor", None),
        "nanquantile": ("Tensor", None), "ndimension": ("int", None), "negative": ("Tensor", None),
        "negative_": ("Tensor", None), "new_empty": ("Tensor", None), "new_full": ("Tensor", None),
        "new_ones": ("Tensor", None), "new_tensor": ("Tensor", None),
        "new_zeros": ("Tensor", None), "not_equal": ("Tensor", None),
        "not_equal_": ("Tensor", None), "positive": ("Tensor", None), "put": ("Tensor", None),
        "put_": ("Tensor", None), "quantile": ("Tensor", None), "ravel": ("Tensor", None),
        "rot90": ("Tensor", None), "select": ("Tensor", None), "subtract": ("Tensor", None),
        "subtract_": ("Tensor", None), "sum_to_size": ("Tensor", None), "tensor_split": ("", None),
        "trace": ("Tensor", None), "true_divide": ("Tensor", None), "unfold": ("Tensor", None),
        "vsplit": ("", None), "where": ("Tensor", None),
    },
    "operators": {
        "__hash__": ("int", None),
        "__matmul__": ("Tensor", "The matrix product ``self @ b``."),
        "__rmatmul__": ("Tensor", "``other @ self``."),
        "__rtruediv__": ("Tensor", None),
        "__invert__": ("Tensor", "``~self``: bitwise not (logical not for bools)."),
        "__floordiv__": ("Tensor", None), "__rfloordiv__": ("Tensor", None),
        "__ifloordiv__": ("Tensor", None), "__mod__": ("Tensor", None),
        "__rmod__": ("Tensor", None), "__imod__": ("Tensor", None),
    },
}
_ROW_GROUPS = ("elementwise ops", "operators")  # where generated attributes go

# The other public names tensor.py defines: qualified name -> (annotation, docstring).
_OTHERS = {
    "Size.__repr__": ("str", "The shape as PyTorch prints it."),
    "Size.numel": ("int", "The number of elements of a tensor of this shape."),
    "Tensor": ("", "A multi-dimensional array with autograd, as ``torch.Tensor``."),
    "no_grad_view_error": ("RuntimeError", None),
}
_BASES = {tuple: "tuple[int, ...]"}  # Size's
# object's __eq__ and __ne__ return bool; Tensor's return tensors (as torch's stub says).
_OVERRIDES = frozenset({"__eq__", "__ne__"})
# Python's binary operators, for the generated operators' docstrings.
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
            "pow": "**", "matmul": "@", "and": "&", "or": "|", "xor": "^", "lshift": "<<",
            "rshift": ">>", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}

_HEADER = f'''\
"""Tensor's API as it is after ``import nbgrad`` (methods and operators are
installed by nbgrad/ops). Generated: do not edit; run ``{COMMAND}``."""
from builtins import bool as _bool
from builtins import float as _float
from typing import Any

from .tape.graph import Node
from .device import device as _device
from .dtypes import dtype as _dtype
'''


class _Omitted:
    """A default too complex for a stub, shown as ``...``."""

    def __repr__(self):
        return "..."


def _literal(value):
    if isinstance(value, tuple):
        return all(map(_literal, value))
    return value is None or type(value) in (bool, int, float, str)


def _row(fn):
    """The op-table row ``fn`` was generated from (it holds it in a closure or,
    when generated as source, in its globals), or None. A wrapper (pow's
    dispatch to numbers) holds the method it wraps, under the same name."""
    if not inspect.isfunction(fn):
        return None
    names = inspect.getclosurevars(fn)
    for value in names.nonlocals.values():
        if inspect.isfunction(value) and value.__name__ == fn.__name__ and value is not fn:
            return _row(value)
    return next((value for value in (*names.nonlocals.values(), *names.globals.values())
                 if isinstance(value, Row)), None)


def _documented(fn):
    """The parameters after ``self`` that ``fn``'s docstring opens with, as
    in ``clamp(min=None, max=None)``, or None."""
    match = re.match(rf"``{re.escape(fn.__name__)}\((.*?)\)``", fn.__doc__ or "")
    if match is None:
        return None
    namespace = {"__builtins__": {}}
    exec(f"def f(self, {match[1]}): pass", namespace)
    return list(inspect.signature(namespace["f"]).parameters.values())[1:]


def _signature(fn, row, method=True):
    """``fn``'s signature, defaults as literals; for a method, the first
    parameter is ``self``. A generated method that takes ``*args`` (and
    ``**kwargs``) takes what its docstring opens with, else its parameters
    that are ``*args`` or placeholders (x0, x1) are named from its row's
    inputs, positional-only, as the runtime takes them."""
    params = list(inspect.signature(fn).parameters.values())
    documented = _documented(fn) if row is not None else None
    if documented is not None:
        params = params[:1] + documented
    elif row is not None:
        named = list(itertools.takewhile(
            lambda p: p.kind is p.POSITIONAL_OR_KEYWORD and not re.fullmatch(r"x\d+", p.name),
            params))
        keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
        derived = [inspect.Parameter(_TORCH_NAMES.get(n, n), keyword)
                   for n in row.inputs[len(named):]]
        params = named + derived
        if len(params) > 1 and derived:  # ``self`` alone needs no ``/``
            params = [p.replace(kind=p.POSITIONAL_ONLY) for p in named + derived]
    if method and params and params[0].kind is not params[0].VAR_POSITIONAL:
        params[0] = params[0].replace(name="self")
    params = [p if p.default is p.empty or _literal(p.default) else p.replace(default=_Omitted())
              for p in params]
    return inspect.Signature(params)


def _one_line(doc):
    """A docstring's first sentence, skipping a leading ``name(...) -> T`` line."""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    if re.fullmatch(r"\w+\(.*\)( -> .*)?", paragraphs[0]) and len(paragraphs) > 1:
        paragraphs = paragraphs[1:]
    text = " ".join(paragraphs[0].split())
    return re.split(r"(?<=\.)\s+(?=[A-Z`])", text)[0]


def _generated_doc(name, row, cls, other):
    """The docstring of a row's operator (its methods carry their own)."""
    if len(row.inputs) == 1:
        return f"``{name}``: elementwise ``{row.name}`` (generated from its op-table row)."
    kind, dunder = "", name[2:-2]
    if dunder[0] in "ri" and f"__{dunder[1:]}__" in vars(cls):  # __radd__, __iadd__
        kind, dunder = dunder[0], dunder[1:]
    symbol = _SYMBOLS.get(dunder, f"__{dunder}__")
    use = {"": f"self {symbol} {other}", "r": f"{other} {symbol} self",
           "i": f"self {symbol}= {other}"}
    what = "in-place" if kind == "i" else "elementwise"
    return f"``{use[kind]}``: {what} ``{row.name}`` (generated from its op-table row)."


def _doc(obj, fallback, where):
    doc = getattr(obj, "__doc__", None) if callable(obj) or isinstance(obj, property) else None
    if doc:
        return _one_line(doc)
    if fallback is None:
        raise LookupError(f"{where} has no docstring at runtime: give it one in _TENSOR or "
                          "_OTHERS in tests/tensor_stub.py, then run " + COMMAND)
    return fallback


def _docstring(doc, indent):
    doc = doc.replace("\\", "\\\\").replace('"""', '\\"""')  # the text as written
    if doc.endswith('"'):  # it would run into the closing quotes
        doc = doc[:-1] + '\\"'
    return f'{indent}"""{doc}"""'


def _member(cls, name, annotation, doc):
    """The stub lines for ``cls.name`` (indented for a class body)."""
    obj = vars(cls)[name]
    returns = f" -> {annotation}" if annotation else ""
    where = f"{cls.__name__}.{name}"
    if isinstance(obj, property):
        lines = ["    @property", f"    def {name}{_signature(obj.fget, None)}{returns}:",
                 _docstring(_doc(obj, doc, where), " " * 8)]
        if obj.fset is not None:
            lines += [f"    @{name}.setter", f"    def {name}{_signature(obj.fset, None)} -> None:",
                      _docstring(f"Sets ``{name}``.", " " * 8)]
        return lines
    if not callable(obj):  # a slot or a plain class attribute
        return [f"    {name}: {annotation or 'Any'}", _docstring(_doc(None, doc, where), "    ")]
    row = _row(obj)
    signature = _signature(obj, row)
    if row is not None and doc is None and not obj.__doc__:
        doc = _generated_doc(name, row, cls, list(signature.parameters)[-1])
    if row is not None and not annotation:
        returns = " -> Tensor"
    ignore = "  # type: ignore[override]" if name in _OVERRIDES else ""
    return [f"    def {name}{signature}{returns}:{ignore}",
            _docstring(_doc(obj, doc, where), " " * 8)]


def _api(cls):
    return [n for n in vars(cls) if n not in NOT_API
            and (not n.startswith("_") or (n.startswith("__") and n.endswith("__")))]


def _tensor_groups():
    """Tensor's attributes, group -> [(name, annotation, docstring)], sorted in groups."""
    Tensor = MODULE.Tensor
    groups = {group: [] for group in _TENSOR}
    listed = {name: group for group, names in _TENSOR.items() for name in names}
    missing = [name for name in listed if name not in vars(Tensor)]
    if missing:
        raise LookupError(f"no longer on Tensor: {missing}: remove them from _TENSOR in "
                          "tests/tensor_stub.py, then run " + COMMAND)
    for name in _api(Tensor):
        if name in listed:
            groups[listed[name]].append((name, *_TENSOR[listed[name]][name]))
        elif _row(vars(Tensor)[name]) is not None:
            groups[_ROW_GROUPS[name.startswith("__")]].append((name, "", None))
        else:
            raise LookupError(f"Tensor.{name} is not in the stub's tables: add it to a group of "
                              "_TENSOR in tests/tensor_stub.py, then run " + COMMAND)
    return {group: sorted(members) for group, members in groups.items()}


def _class_header(cls):
    bases = [_BASES.get(b, b.__name__) for b in cls.__bases__ if b is not object]
    doc = _doc(cls, _OTHERS.get(cls.__name__, ("", None))[1], cls.__name__)
    return [f"class {cls.__name__}{'(' + ', '.join(bases) + ')' if bases else ''}:",
            _docstring(doc, "    ")]


def _render_tensor(cls):
    lines = _class_header(cls)
    for group, members in _tensor_groups().items():
        lines += ["", f"    # {'-' * (68 - len(group))} {group}"]
        for name, annotation, doc in members:
            lines += _member(cls, name, annotation, doc)
    return lines


def _render_class(cls):
    lines = _class_header(cls)
    for name in _api(cls):
        lines += _member(cls, name, *_OTHERS.get(f"{cls.__name__}.{name}", ("", None)))
    return lines


def _render_function(fn):
    annotation, doc = _OTHERS.get(fn.__name__, ("", None))
    params = _signature(fn, None, method=False)
    return [f"def {fn.__name__}{params}{' -> ' + annotation if annotation else ''}:",
            _docstring(_doc(fn, doc, fn.__name__), "    ")]


def public_names():
    """The public names tensor.py defines (its classes and functions), in its order."""
    return [name for name, value in vars(MODULE).items() if not name.startswith("_")
            and getattr(value, "__module__", None) == MODULE.__name__]


def render():
    """The stub's text."""
    blocks = []
    for name in public_names():
        value = getattr(MODULE, name)
        if value is MODULE.Tensor:
            blocks.append(_render_tensor(value))
        elif inspect.isclass(value):
            blocks.append(_render_class(value))
        else:
            blocks.append(_render_function(value))
    return _HEADER + "".join("\n\n" + "\n".join(block) + "\n" for block in blocks)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(f"usage: {COMMAND}")
    STUB.write_text(render())
    print(f"wrote {STUB}")
