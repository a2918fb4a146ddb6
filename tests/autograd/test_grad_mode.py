"""Grad modes: ``no_grad``, ``enable_grad`` and ``set_grad_enabled`` as
context managers, as decorators (also of generator functions), nested, as a
plain call, and thread-local. Each sequence of observations is compared with
PyTorch 2.13 running the same code."""
import threading

import pytest
import torch

import nbgrad

LIBS = pytest.mark.parametrize("lib", [nbgrad, torch], ids=["nbgrad", "torch"])


def _records(lib):
    """Whether an op on a tensor requiring grad records history right now."""
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    assert (y.grad_fn is not None) == y.requires_grad
    return y.requires_grad


def _observe(lib, scenario):
    """Run ``scenario(lib, see)``; ``see(label)`` records the grad mode and
    whether an op records history. Returns what was seen."""
    seen = []

    def see(label):
        seen.append((label, lib.is_grad_enabled(), _records(lib)))

    assert lib.is_grad_enabled()
    try:
        scenario(lib, see)
    finally:
        lib.set_grad_enabled(True)  # never leak a mode into other tests
    return seen


def same_in_both(scenario):
    ours, theirs = _observe(nbgrad, scenario), _observe(torch, scenario)
    assert ours == theirs
    return ours


def test_context_managers_and_nesting():
    def scenario(lib, see):
        see("start")
        with lib.no_grad():
            see("no_grad")
            with lib.enable_grad():
                see("enable_grad inside no_grad")
                with lib.set_grad_enabled(False):
                    see("set_grad_enabled(False) inside that")
                see("back in enable_grad")
            with lib.no_grad():
                see("no_grad inside no_grad")
            see("still no_grad")
            with lib.set_grad_enabled(True):
                see("set_grad_enabled(True) inside no_grad")
        see("after")

    seen = same_in_both(scenario)
    assert [enabled for _, enabled, _ in seen] == [True, False, True, False, True, False, False,
                                                   True, True]


def test_modes_are_restored_when_the_block_raises():
    def scenario(lib, see):
        for make in (lib.no_grad, lambda: lib.set_grad_enabled(False)):
            with pytest.raises(KeyError):
                with make():
                    see("inside")
                    raise KeyError("boom")
            see("after the error")
        with lib.no_grad():
            with pytest.raises(KeyError):
                with lib.enable_grad():
                    raise KeyError("boom")
            see("no_grad again after enable_grad raised")

    same_in_both(scenario)


def test_decorators():
    def scenario(lib, see):
        @lib.no_grad()
        def in_no_grad(label):
            see(label)
            return 42

        @lib.no_grad  # PyTorch also takes the bare form
        def in_bare_no_grad(label):
            see(label)

        @lib.enable_grad()
        def in_enable_grad(label):
            see(label)

        @lib.enable_grad
        def in_bare_enable_grad(label):
            see(label)

        @lib.set_grad_enabled(False)
        def in_set_false(label):
            see(label)

        see("decorating switched nothing")
        assert in_no_grad("no_grad()") == 42
        in_bare_no_grad("bare no_grad")
        in_set_false("set_grad_enabled(False)")
        with lib.no_grad():
            in_enable_grad("enable_grad() inside no_grad")
            in_bare_enable_grad("bare enable_grad inside no_grad")
            see("no_grad restored after the call")
        see("after")

    same_in_both(scenario)
    assert nbgrad.no_grad()(len).__name__ == "len"  # functools.wraps


def test_decorated_generators_run_each_step_in_the_mode():
    def scenario(lib, see):
        @lib.no_grad()
        def steps():
            see("first step")
            received = yield 1
            see(f"second step, got {received}")
            yield 2
            see("last step")

        gen = steps()
        see("created, not started")
        assert next(gen) == 1
        see("between steps")
        assert gen.send("x") == 2
        see("between steps again")
        assert list(gen) == []
        see("after")

    seen = same_in_both(scenario)
    assert [enabled for _, enabled, _ in seen] == [True, False, True, False, True, False, True]


def test_set_grad_enabled_as_a_plain_call():
    def scenario(lib, see):
        lib.set_grad_enabled(False)
        see("after set_grad_enabled(False)")
        x = lib.ones(2, requires_grad=True)
        see("still off")
        y = x * 2
        lib.set_grad_enabled(True)
        see("after set_grad_enabled(True)")
        assert y.grad_fn is None and not y.requires_grad

    same_in_both(scenario)


@LIBS
def test_ops_under_no_grad_record_nothing(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.no_grad():
        y = x * 2
        v = x[1:]
        s = x.sum()
    for t in (y, s):
        assert t.grad_fn is None and not t.requires_grad and t.is_leaf
    assert v.requires_grad and v.grad_fn is None  # a view still reports its base's flag
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        s.backward()


@LIBS
def test_grad_mode_is_thread_local(lib):
    seen = {}

    def worker():
        seen["enabled in the thread"] = lib.is_grad_enabled()
        seen["records in the thread"] = _records(lib)
        with lib.no_grad():  # must not leak into the main thread
            seen["no_grad in the thread"] = lib.is_grad_enabled()
            ready.set()
            release.wait(5)

    ready, release = threading.Event(), threading.Event()
    with lib.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        assert ready.wait(5)
        seen["main during the thread's no_grad"] = lib.is_grad_enabled()
        release.set()
        thread.join(5)
        seen["main still"] = lib.is_grad_enabled()
    seen["main after"] = lib.is_grad_enabled()
    assert seen == {"enabled in the thread": True, "records in the thread": True,
                    "no_grad in the thread": False, "main during the thread's no_grad": False,
                    "main still": False, "main after": True}


def test_thread_sees_grad_enabled_while_main_is_in_no_grad_and_vice_versa():
    results = {}

    def worker():
        results["thread"] = nbgrad.is_grad_enabled()
        x = nbgrad.ones(2, requires_grad=True)
        results["thread records"] = (x * 2).grad_fn is not None
        nbgrad.set_grad_enabled(False)  # a plain call in the thread
        results["thread after its call"] = nbgrad.is_grad_enabled()

    with nbgrad.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join(5)
        results["main"] = nbgrad.is_grad_enabled()
    results["main after"] = nbgrad.is_grad_enabled()
    assert results == {"thread": True, "thread records": True, "thread after its call": False,
                       "main": False, "main after": True}


def test_exported_names():
    assert nbgrad.no_grad is nbgrad.autograd.no_grad
    assert nbgrad.enable_grad is nbgrad.autograd.enable_grad
    assert nbgrad.set_grad_enabled is nbgrad.autograd.set_grad_enabled
    assert nbgrad.is_grad_enabled is nbgrad.autograd.is_grad_enabled


def test_grad_modes_on_the_device(device):
    x = nbgrad.ones(2, device=device, requires_grad=True)
    with nbgrad.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None
    with nbgrad.enable_grad():
        assert (x * 2).requires_grad
    with pytest.raises(RuntimeError, match="^you can only change requires_grad flags of leaf "
                                           "variables"):
        (x * 2).requires_grad_(False)
