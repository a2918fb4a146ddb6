"""The differential graph fuzzer (tests/fuzzing.py), CI profile: a fixed list
of seeds, shapes from a small menu (few Numba specialisations), and no
divergence from PyTorch but the documented ones (fuzzing.DOCUMENTED). The
exploring profile: ``python -m tests.fuzzing --minutes 10 --seed N``."""
import math

import numpy as np
import pytest
import torch

import fuzzing
import nbgrad

SEEDS = range(300)


def test_random_programs_agree_with_pytorch():
    """No divergence but the documented ones and the open ones (fuzzing.OPEN)."""
    figures, ops, causes, examples = fuzzing.fuzz(SEEDS, "ci", minimize_per_cause=1,
                                                  minimize_documented=False)
    assert figures["programs"] == len(SEEDS)
    new = {c: s for c, s in causes.items() if fuzzing.status(c)[0] == "undocumented"}
    if new:
        lines = []
        fuzzing.report(figures, ops, new, examples, out=lines.append)
        pytest.fail("divergences from PyTorch that fuzzing.DOCUMENTED and fuzzing.OPEN do not "
                    "list:\n" + "\n".join(lines), pytrace=False)


@pytest.mark.parametrize("ours, theirs, dtype, accumulating, what", [
    ([1.0, math.nan], [1.0, math.nan], "float32", False, None),
    ([1.0, 2.0], [1.0, math.nan], "float32", False, "values (torch nan)"),
    ([math.nan], [0.0], "float64", True, "nan"),
    ([math.inf], [-math.inf], "float64", False, "inf"),
    ([-0.0], [0.0], "float32", False, "sign of zero"),
    ([-0.0], [0.0], "float32", True, None),  # a sum's zero has no defined sign
    ([1.0 + 1e-6], [1.0], "float32", False, None),
    ([1.0 + 1e-6], [1.0], "float64", False, "values"),
    ([1e-38], [0.0], "float32", False, "values"),
    ([1e-38], [0.0], "float32", True, None),  # within rtol of the inputs' magnitude
    ([1, 2], [1, 3], "int64", False, "values"),
    ([[1.0]], [1.0], "float32", False, "shape"),
])
def test_values_are_compared_nan_aware_with_signed_zeros(ours, theirs, dtype, accumulating, what):
    np_dtype = np.int64 if dtype == "int64" else np.dtype(dtype)
    assert fuzzing._compare_values(np.array(ours, np_dtype), np.array(theirs, np_dtype), dtype,
                                   accumulating, 1.0) == what


_PROGRAM = [fuzzing.leaf_step("x1", ((2,), "float32", [0.5, -2.0], True, "contig")),
            fuzzing.Step("x2", "x1.exp()", ["x1"], "exp"),
            fuzzing.Step("x3", "x1.sin()", ["x1"], "sin"),
            fuzzing.Step("x4", "x3.neg()", ["x3"], "neg"),
            fuzzing.Step(None, "\nx4.sum().backward()", ["x4"], "backward", target="")]


def test_a_divergence_is_found_and_minimized(monkeypatch):
    """A wrong value planted in nbgrad's neg (a stand-in for a bug) is the
    first divergence, and the minimizer keeps only what shows it."""
    assert fuzzing.first_divergence(_PROGRAM) is None
    run = fuzzing.run

    def planted(program, lib):
        records = run(program, lib)
        for step, record in zip(program, records):
            if lib is nbgrad and step.label == "neg" and record and "out" in record:
                record["out"]["values"] += 1
        return records

    monkeypatch.setattr(fuzzing, "run", planted)
    assert fuzzing.first_divergence(_PROGRAM)[:2] == (3, "neg: values")
    small = fuzzing.minimize(_PROGRAM)
    assert [s.name for s in small] == ["x1", "x3", "x4"]
    assert small[0].spec == ((1,), "float32", [1.0], False, "contig")
    assert fuzzing.render(small).splitlines()[2:] == [
        "x1 = lib.tensor([1.0], dtype=lib.float32)", "x3 = x1.sin()", "x4 = x3.neg()"]


def test_a_wrong_gradient_is_a_divergence_of_the_backward_step():
    ours = fuzzing.run(_PROGRAM, nbgrad)
    ours[4]["grads"]["x1"]["values"][1] = math.nan
    assert fuzzing.first_divergence(_PROGRAM, ours=ours)[:2] == (4, "backward: grad nan")
