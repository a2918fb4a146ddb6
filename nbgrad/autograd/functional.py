"""Higher-level autograd functions (``torch.autograd.functional``): the
Jacobian and Hessian of a function, and the products ``vjp``, ``jvp``,
``vhp`` and ``hvp``, with PyTorch's names, arguments, checks, error texts
and result structure.

Everything is computed by reverse mode (``autograd.grad``), as PyTorch's
default path does; ``create_graph=True`` runs those backward passes with
graph-building backward formulas, so the results can be differentiated
again. Where nbgrad does the same work differently:

- A Jacobian row is the gradient of the output against a one-hot
  ``grad_outputs`` (PyTorch differentiates ``out.reshape(-1)[j]``): the same
  values, and the created graph needs no indexing backward.
- ``vectorize=True`` is accepted (with PyTorch's checks) and computed by the
  same row-by-row loop: nbgrad has no ``vmap``.
- ``strategy="forward-mode"`` (and ``hessian``'s
  ``outer_jacobian_strategy``) raise PyTorch's errors, and with
  ``vectorize=True`` are computed by reverse mode (PyTorch runs its forward
  mode under ``vmap``, which nbgrad does not have): the same values, in the
  outputs' dtypes and the containers (lists where several inputs are not
  unpacked) that PyTorch's forward mode gives.
  PyTorch's forward-mode ``hessian`` returns a result that requires grad; here
  no result requires grad unless ``create_graph=True``.
- ``jvp`` and ``hvp`` use the double-backward trick, as PyTorch does.
"""
from ..creation import zeros, zeros_like
from ..gradients import grad as _grad
from ..ops.joining import stack
from ..tape.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

_STRATEGIES = ("forward-mode", "reverse-mode")


# -- utilities (PyTorch's, with its names and texts) ----------------------------
def _as_tuple(inp, arg_name, fn_name):
    """``(was it a tuple, a tuple of Tensors)``, or PyTorch's TypeError for a
    value that is not a Tensor (a list counts as one value, as in PyTorch)."""
    is_inp_tuple = isinstance(inp, tuple)
    if not is_inp_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_inp_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple "
                            f"of Tensors but the {where} has type {type(el)}.")
    return is_inp_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Undo :func:`_as_tuple` on a result: ``to_unpack`` is one flag, or two
    (outputs, inputs) for a tuple of tuples."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """New Tensor objects for the inputs, so that the function's own uses of
    the caller's tensors (captured, not passed) are not differentiated:
    differentiable aliases when the caller wants a graph back to them,
    detached leaves otherwise (requiring grad when ``need_graph``)."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    """Results without history unless the caller asked for a graph (nested tuples too)."""
    if isinstance(inputs[0], Tensor):
        if not create_graph:
            return tuple(inp.detach() for inp in inputs)
        return inputs
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    """``v`` has one Tensor per entry of ``other``, each of its size."""
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got "
                               f"{el_v.size()}.")


def _check_requires_grad(inputs, input_type, strict):
    """In strict mode, refuse a value that does not depend on the inputs
    (``input_type`` says which stage produced it, for PyTorch's message)."""
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:  # only gradients can be None
            raise RuntimeError(f"The output of the user-provided function is independent of input "
                               f"{i}. This is not allowed in strict mode.")
        if inp.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on the "
                "inputs.")
        if input_type == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")
        if input_type == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in strict "
            "mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` that skips outputs which are None or need no grad,
    and gives None for every input when none is left (no engine run)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(out, g) for out, g in zip(outputs, grad_outputs)
            if out is not None and out.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    new_outputs, new_grad_outputs = zip(*kept)
    return _grad(new_outputs, inputs, new_grad_outputs, retain_graph=retain_graph,
                 create_graph=create_graph, allow_unused=True)


_STRICT_TEXTS = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This "
                   "is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it prevents "
                         "from using the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Missing gradients become zeros shaped as ``refs`` (strict mode raises
    instead, and with ``create_graph`` also refuses a gradient without history)."""
    res = []
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                raise RuntimeError(_STRICT_TEXTS[stage].format(i=i))
            grads_i = zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input "
                               f"{i}. This is not allowed in strict mode when create_graph=True.")
        res.append(grads_i)
    return tuple(res)


def _v_or_single_element(v, reference, is_reference_tuple, create_graph, fn_name, message):
    """``v`` checked against ``reference`` (detached unless it is part of the
    graph asked for), or None where ``reference`` is one single-element Tensor."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, reference, is_reference_tuple)
        return v
    if len(reference) != 1 or reference[0].nelement() != 1:
        raise RuntimeError(message)
    return None


_V_FOR_INPUT = ("The vector v can only be None if the input to the user-provided function is a "
                "single Tensor with a single element.")


# -- products -----------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    r"""vjp(func, inputs, v=None, create_graph=False, strict=False) -> (Tensor or tuple, Tensor or tuple)

    The product of a vector ``v`` with the Jacobian of ``func`` at ``inputs``.

    Args:
        func (function): takes Tensor inputs, returns a Tensor or a tuple of Tensors.
        inputs (tuple of Tensors or Tensor): the point at which ``func`` is differentiated.
        v (tuple of Tensors or Tensor): the vector, shaped as ``func``'s output. Optional
            when the output is one Tensor with a single element (then a ``1``).
        create_graph (bool, optional): compute the output and the result differentiably.
            Default: ``False``.
        strict (bool, optional): raise when an input has no effect on the outputs
            (instead of returning zeros for it). Default: ``False``.

    Returns:
        ``(func_output, vjp)``: the output of ``func(inputs)``, and the product,
        shaped as the inputs.

    Example::

        >>> def adder(x, y):
        ...     return 2 * x + 3 * y
        >>> vjp(adder, (nbgrad.rand(2), nbgrad.rand(2)), nbgrad.ones(2))[1]
        (tensor([2., 2.]), tensor([3., 3.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _v_or_single_element(v, outputs, is_outputs_tuple, create_graph, "vjp",
                                 "The vector v can only be None if the user-provided function "
                                 "returns a single Tensor with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    r"""jvp(func, inputs, v=None, create_graph=False, strict=False) -> (Tensor or tuple, Tensor or tuple)

    The product of the Jacobian of ``func`` at ``inputs`` with a vector ``v``.

    Args:
        func (function): takes Tensor inputs, returns a Tensor or a tuple of Tensors.
        inputs (tuple of Tensors or Tensor): the point at which ``func`` is differentiated.
        v (tuple of Tensors or Tensor): the vector, shaped as the inputs. Optional when
            the input is one Tensor with a single element (then a ``1``).
        create_graph (bool, optional): compute the output and the result differentiably.
            Default: ``False``.
        strict (bool, optional): raise when an input has no effect on the outputs
            (instead of returning zeros for it). Default: ``False``.

    Returns:
        ``(func_output, jvp)``: the output of ``func(inputs)``, and the product,
        shaped as the output.

    Note:
        As in PyTorch, the product is computed by the backward of the backward
        (the double-backward trick): the gradient of ``func``'s vector-Jacobian
        product with respect to its (zero) vector, a linear function of it.
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _v_or_single_element(v, inputs, is_inputs_tuple, create_graph, "jvp", _V_FOR_INPUT)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        # The backward is linear in grad_outputs, so their value does not reach
        # the double-backward graph; zeros are finite, which is all it needs.
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_outputs_tuple))


# -- Jacobian -----------------------------------------------------------------
def _basis_vector(out, j):
    """The ``j``-th one-hot Tensor shaped as ``out`` (``out``'s dtype and
    device): the ``grad_outputs`` whose gradient is the Jacobian's row ``j``.
    A fresh one per row, since a graph-building backward may save it."""
    seed = zeros(out.nelement(), dtype=out.dtype, device=out.device)
    seed[j] = 1
    return seed.view(out.shape)


def _stack_rows(rows, shape):
    """The rows of one Jacobian block as one Tensor of ``shape`` (output's
    shape, then input's). A single row is reshaped rather than stacked, so
    that a hessian's inner Jacobian (one row) is a view, whose backward
    builds a graph."""
    if len(rows) == 1:
        return rows[0].reshape(shape)
    return stack(rows, 0).view(shape)


def _jacobian_rows(outputs, inputs, create_graph, strict):
    """The Jacobian as a tuple (one per output) of tuples (one per input), one
    backward pass per element of each output. Inputs that an output does not
    depend on give zeros (strict mode raises)."""
    jacobian_ = []
    for i, out in enumerate(outputs):
        jac_i = tuple([] for _ in inputs)
        for j in range(out.nelement()):
            seed = _basis_vector(out, j) if out.requires_grad else None
            vj = _autograd_grad((out,), inputs, (seed,), retain_graph=True,
                                create_graph=create_graph)
            for el_idx, (jac_i_el, vj_el, inp_el) in enumerate(zip(jac_i, vj, inputs)):
                if vj_el is not None:
                    if strict and create_graph and not vj_el.requires_grad:
                        # PyTorch's text names the output's index here
                        raise RuntimeError(f"The jacobian of the user-provided function is "
                                           f"independent of input {i}. This is not allowed in "
                                           "strict mode when create_graph=True.")
                    jac_i_el.append(vj_el)
                else:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is "
                                           f"independent of input {el_idx}. This is not allowed "
                                           "in strict mode.")
                    jac_i_el.append(zeros_like(inp_el))
        jacobian_.append(tuple(_stack_rows(rows, tuple(out.shape) + tuple(inputs[k].shape))
                               for k, rows in enumerate(jac_i)))
    return tuple(jacobian_)


def _check_strategy(strategy, hint):
    if strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".'
                             + hint)


def _jacfwd(func, inputs, strict, vectorize):
    """``strategy="forward-mode"``: PyTorch's checks, then (``vectorize``) the
    reverse-mode Jacobian in the outputs' dtypes, as forward mode gives it."""
    if strict:
        raise RuntimeError('nbgrad.autograd.functional.jacobian: `strict=True` and '
                           '`strategy="forward-mode"` are not supported together (yet). Please '
                           'either set `strict=False` or `strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:  # PyTorch's text, missing space included
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    with enable_grad():
        inputs = _grad_preprocess(inputs, create_graph=False, need_graph=True)
        # PyTorch checks these outputs with no function name ("given to None")
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs", None)
        jacobian_ = _jacobian_rows(outputs, inputs, create_graph=False, strict=False)
    # lists, as PyTorch's forward mode returns them where it does not unpack
    jacobian_ = [[block.detach().to(out.dtype) for block in row]
                 for row, out in zip(jacobian_, outputs)]
    return _tuple_postprocess(jacobian_, (is_outputs_tuple, is_inputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    r"""jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode") -> Tensor or nested tuple of Tensors

    The Jacobian of ``func`` at ``inputs``.

    Args:
        func (function): takes Tensor inputs, returns a Tensor or a tuple of Tensors.
        inputs (tuple of Tensors or Tensor): the point at which ``func`` is differentiated.
        create_graph (bool, optional): compute the Jacobian differentiably.
            Default: ``False``.
        strict (bool, optional): raise when an output does not depend on an input
            (instead of returning zeros for that block). Default: ``False``.
        vectorize (bool, optional): accepted for PyTorch compatibility (with its
            checks); nbgrad computes the same rows one backward pass each.
            Default: ``False``.
        strategy (str, optional): ``"reverse-mode"`` or ``"forward-mode"``; the
            latter needs ``vectorize=True`` (as in PyTorch) and is computed by
            reverse mode, in the outputs' dtypes. Default: ``"reverse-mode"``.

    Returns:
        One Tensor for one input and one output; a tuple when one of them is a
        tuple; a tuple of tuples when both are, ``Jacobian[i][j]`` being that of
        output ``i`` with respect to input ``j``, of shape
        ``output_i.shape + input_j.shape``, with input ``j``'s dtype and device.

    Example::

        >>> jacobian(lambda x: x.exp(), nbgrad.zeros(2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    _check_strategy(strategy, ' Hint: If your function has more outputs than inputs, '
                              '"forward-mode" tends to be more performant. Otherwise, prefer to '
                              'use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'nbgrad.autograd.functional.jacobian: `create_graph=True` and '
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize and strict:
            raise RuntimeError("nbgrad.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either set "
                               "`strict=False` or `vectorize=False`.")
        jacobian_ = _jacobian_rows(outputs, inputs, create_graph, strict)
        jacobian_ = _grad_postprocess(jacobian_, create_graph)
        return _tuple_postprocess(jacobian_, (is_outputs_tuple, is_inputs_tuple))


# -- second derivatives -------------------------------------------------------
def _single_element_output(out, fn_name, strict):
    """The output of a function given to ``hessian``/``vhp``/``hvp``, checked
    to be one Tensor with one element (PyTorch's order and texts)."""
    is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", fn_name)
    _check_requires_grad(t_out, "outputs", strict=strict)
    if is_out_tuple or not isinstance(t_out[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if t_out[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    return t_out


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    r"""hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode") -> Tensor or tuple of tuples of Tensors

    The Hessian of a scalar function ``func`` at ``inputs``: the Jacobian of
    its Jacobian (the inner one computed with a graph).

    Args:
        func (function): takes Tensor inputs, returns a Tensor with a single element.
        inputs (tuple of Tensors or Tensor): the point at which ``func`` is differentiated.
        create_graph (bool, optional): compute the Hessian differentiably.
            Default: ``False``.
        strict (bool, optional): raise when the output or its Jacobian does not
            depend on an input (instead of returning zeros). Default: ``False``.
        vectorize (bool, optional): as in :func:`jacobian`. Default: ``False``.
        outer_jacobian_strategy (str, optional): the outer Jacobian's ``strategy``,
            as in :func:`jacobian`. Default: ``"reverse-mode"``.

    Returns:
        One Tensor of shape ``input.shape + input.shape`` for one input; for a
        tuple, a tuple of tuples, ``Hessian[i][j]`` of shape
        ``input_i.shape + input_j.shape``.

    Example::

        >>> hessian(lambda x: x.pow(3).sum(), nbgrad.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    _check_strategy(outer_jacobian_strategy, "")

    def ensure_single_output_function(*inp):
        return _single_element_output(func(*inp), "hessian", strict)[0].squeeze()

    def jac_func(*inp):
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    r"""vhp(func, inputs, v=None, create_graph=False, strict=False) -> (Tensor, Tensor or tuple)

    The product of a vector ``v`` with the Hessian of a scalar function
    ``func`` at ``inputs``.

    Args:
        func (function): takes Tensor inputs, returns a Tensor with a single element.
        inputs (tuple of Tensors or Tensor): the point at which ``func`` is differentiated.
        v (tuple of Tensors or Tensor): the vector, shaped as the inputs. Optional when
            the input is one Tensor with a single element (then a ``1``).
        create_graph (bool, optional): compute the output and the result differentiably.
            Default: ``False``.
        strict (bool, optional): raise when the output or its Jacobian does not
            depend on an input (instead of returning zeros). Default: ``False``.

    Returns:
        ``(func_output, vhp)``: the output of ``func(inputs)``, and the product,
        shaped as the inputs.
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _v_or_single_element(v, inputs, is_inputs_tuple, create_graph, "vhp", _V_FOR_INPUT)
        outputs = _single_element_output(func(*inputs), "vhp", strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, False), _tuple_postprocess(result, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    r"""hvp(func, inputs, v=None, create_graph=False, strict=False) -> (Tensor, Tensor or tuple)

    The product of the Hessian of a scalar function ``func`` at ``inputs``
    with a vector ``v``.

    Args:
        func (function): takes Tensor inputs, returns a Tensor with a single element.
        inputs (tuple of Tensors or Tensor): the point at which ``func`` is differentiated.
        v (tuple of Tensors or Tensor): the vector, shaped as the inputs. Optional when
            the input is one Tensor with a single element (then a ``1``).
        create_graph (bool, optional): compute the output and the result differentiably.
            Default: ``False``.
        strict (bool, optional): raise when the output or its Jacobian does not
            depend on an input (instead of returning zeros). Default: ``False``.

    Returns:
        ``(func_output, hvp)``: the output of ``func(inputs)``, and the product,
        shaped as the inputs.

    Note:
        As in PyTorch, computed by the double-backward trick (one backward more
        than :func:`vhp`); for a twice continuously differentiable function the
        Hessian is symmetric and ``vhp`` gives the same values.
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _v_or_single_element(v, inputs, is_inputs_tuple, create_graph, "hvp", _V_FOR_INPUT)
        outputs = _single_element_output(func(*inputs), "hvp", strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)  # PyTorch checks jac here too
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, False), _tuple_postprocess(result, is_inputs_tuple)
