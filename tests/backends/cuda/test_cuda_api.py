"""The CUDA backend module offers the CPU backend's functions under the
same names, and its runtime helpers behave."""
import inspect

import numpy as np

import nbgrad.backends.cpu as cpu_backend
from cuda_support import B, assert_close, dev


def test_every_cpu_backend_function_exists_with_the_same_parameters():
    names = [n for n, f in vars(cpu_backend).items()
             if inspect.isfunction(f) and not n.startswith("_")]
    names += ["elementwise_forward", "elementwise_backward"]
    assert len(names) > 20
    for name in names:
        fn = getattr(B, name)
        assert callable(fn), name
        cpu_params = list(inspect.signature(getattr(cpu_backend, name)).parameters)
        assert list(inspect.signature(fn).parameters)[:len(cpu_params)] == cpu_params, name
    assert B.name == "cuda" and cpu_backend.name == "cpu"


def test_runtime_helpers():
    assert B.is_available()
    B.require()
    B.synchronize()
    assert isinstance(B.device_name(), str) and B.device_name()
    B.set_num_threads(B.get_num_threads())
    B.empty_cache()


def test_squeeze_helpers():
    d = dev(np.zeros((2, 1, 3)))
    assert B.squeeze(d, 1).shape == (2, 3)
    assert B.expand_dims(d, -1).shape == (2, 1, 3, 1)


def test_where_and_data_pointer():
    cond = np.array([[True, False], [False, True]])
    a = np.arange(4.0).reshape(2, 2)
    assert_close(B.where(dev(cond), dev(a), 0), np.where(cond, a, 0))
    assert_close(B.where(dev(cond), 1, dev(np.arange(2))), np.where(cond, 1, np.arange(2)))
    d = dev(a)
    assert B.data_pointer(d[1]) - B.data_pointer(d) == 2 * 8
