"""Anomaly mode (``nbgrad.autograd.detect_anomaly``, ``set_detect_anomaly``)
against PyTorch 2.13: the switches and their warning, the NaN check and its
error (whose text nbgrad completes with the forward op and the line that
called it), the warning with the forward's stack before a failing backward
step, and nothing recorded while the mode is off."""
import inspect
import re
import warnings

import numpy as np
import pytest
import torch

import nbgrad
from differential import differential
from helpers import on_device
from nbgrad.tape.graph import creation_of

HERE = __file__


def _line_of(marker):
    """The line of this file that holds ``marker`` (a comment)."""
    for number, text in enumerate(inspect.getsource(inspect.getmodule(_line_of)).splitlines(), 1):
        if marker in text and "_line_of" not in text:
            return number
    raise AssertionError(marker)


def test_switches_and_their_warning_like_torch():
    def scenario(lib, tr):
        tr.note("off by default", (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))

        def inside():
            with lib.autograd.detect_anomaly():
                tr.note("inside", (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
                with lib.autograd.detect_anomaly(check_nan=False):
                    tr.note("nested", (lib.is_anomaly_enabled(),
                                       lib.is_anomaly_check_nan_enabled()))
                tr.note("restored", (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        tr.warns("detect_anomaly", inside)
        tr.note("after", (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        switch = lib.autograd.set_detect_anomaly(True, check_nan=False)  # at once
        tr.note("set", (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        with switch:
            pass
        tr.note("set, then left", (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        with lib.autograd.set_detect_anomaly(False):
            tr.note("set off", lib.is_anomaly_enabled())
        lib.set_anomaly_enabled(True)
        tr.note("set_anomaly_enabled", lib.is_anomaly_enabled())
        lib.set_anomaly_enabled(False)

    differential(scenario)


# Each case: a backward that returns NaN somewhere; PyTorch names the node
# and which of its outputs (0-based) holds NaN.
NAN_CASES = {
    "0/0 in div's second output": lambda lib, a, z: (a / a).sum(),
    "0/0 in div's first output": lambda lib, a, z: (a / z * 0).sum(),
    "sqrt at 0": lambda lib, a, z: (z.sqrt() * 0).sum(),
    "a nan constant": lambda lib, a, z: (lib.full_like(a, float("nan")) * a).sum(),
}


@pytest.mark.parametrize("case", list(NAN_CASES))
def test_a_backward_that_returns_nan_raises_torchs_error(case, device):
    fn = NAN_CASES[case]
    messages = {}
    for lib in (nbgrad, torch):
        kw = on_device(lib, device)
        a = lib.tensor([0.0, 1.0], requires_grad=True, **kw)
        z = lib.tensor([0.0, 0.0], requires_grad=True, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                out = fn(lib, a, z)
                with pytest.raises(RuntimeError) as caught:
                    out.backward()
        messages[lib] = str(caught.value)
    theirs = re.sub(r"(Backward)\d+", r"\1", messages[torch])
    assert messages[nbgrad].startswith(theirs), (messages[nbgrad], theirs)


def test_the_nan_error_names_the_forward_op_and_its_line():
    a = nbgrad.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with nbgrad.autograd.detect_anomaly():
            out = (a / a).sum()  # the division
            with pytest.raises(RuntimeError) as error:
                out.backward()
    line = _line_of("# the division")
    assert str(error.value) == (
        "Function 'DivBackward' returned nan values in its 1th output. Its forward op was Div, "
        f"called at {HERE}:{line}.")
    texts = [str(w.message) for w in caught]
    assert texts[0].startswith("Anomaly Detection has been enabled.")
    assert texts[1].startswith("Error detected in DivBackward. Traceback of forward call that "
                               "caused the error:\n")
    assert f'File "{HERE}", line {line}, in test_the_nan_error_names' in texts[1]
    assert "nbgrad/" not in texts[1]  # nbgrad's own frames are left out


def test_the_warning_before_any_failing_step_like_torch():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = a.exp()
        y.add_(1)  # stales the saved result
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                before = a.exp()
        with lib.autograd.set_detect_anomaly(True):
            before.add_(1)
            tr.warns("node made outside the mode", lambda: y.sum().backward())
            tr.warns("node made inside", lambda: before.sum().backward())

    trace = differential(_keep_first_line(scenario))
    errors = [str(e) for e in trace.errors]
    assert all("It was modified in place by add_()" in e for e in errors)


def _keep_first_line(scenario):
    """The scenario with its warnings cut to their first line (the stacks
    name each library's own frames)."""
    def wrapped(lib, tr):
        original = tr.warns

        def warns(label, fn):
            original(label, fn)
            label_, kind, texts = tr.events[-1]
            tr.events[-1] = (label_, kind, [t.split("\n")[0] for t in texts])
        tr.warns = warns
        scenario(lib, tr)
    return wrapped


def test_check_nan_off_lets_nan_through_like_torch():
    def scenario(lib, tr):
        a = lib.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly(check_nan=False):
                (a / a).sum().backward()
        tr.grad("a.grad", a)

    differential(scenario)


def test_nan_in_a_graph_building_backward_is_caught():
    a = nbgrad.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with nbgrad.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match=r"Function 'DivBackward' returned nan values "
                                                   r"in its 1th output\."):
                nbgrad.autograd.grad((a / a).sum(), a, create_graph=True)


def test_decorator_and_values_unchanged():
    def step(a):
        assert nbgrad.is_anomaly_enabled()
        (a * a.sin()).sum().backward()
    a = nbgrad.tensor([0.5, -1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nbgrad.autograd.detect_anomaly()(step)(a)
    assert not nbgrad.is_anomaly_enabled()
    t = torch.tensor([0.5, -1.0], requires_grad=True)
    (t * t.sin()).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_nothing_is_recorded_while_the_mode_is_off():
    a = nbgrad.tensor([0.5, -1.0], requires_grad=True)
    y = a * a  # generated straight-line code
    z = a.sum()  # a Node's own constructor
    assert creation_of(y.grad_fn) is None and creation_of(z.grad_fn) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with nbgrad.autograd.detect_anomaly():
            y = a * a
            z = a.sum()
    assert creation_of(y.grad_fn)[0].startswith(HERE + ":")
    assert creation_of(z.grad_fn)[0].startswith(HERE + ":")
