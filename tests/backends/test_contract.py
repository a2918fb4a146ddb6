"""Both backends against the one backend contract (nbgrad/backends/contract.py)."""
import inspect

import pytest

import nbgrad.backends.cuda as cuda
from nbgrad.backends import contract, cpu
from nbgrad.backends.cuda import api as cuda_api

# The CUDA package defines what needs no driver and loads the rest from api.py.
BACKENDS = [(cpu, contract.Backend), (cuda, contract.CudaBackend)]


def _declared(protocol, name):
    for cls in protocol.__mro__:
        if name in vars(cls):
            return vars(cls)[name]
    return None  # an annotation only (``name``, ``DeviceArray``)


def _parameters(fn, drop_self):
    params = list(inspect.signature(fn).parameters.values())
    return [(p.name, p.default) for p in params[1 if drop_self else 0:]]


@pytest.mark.parametrize("module, protocol", BACKENDS, ids=["cpu", "cuda"])
def test_backend_defines_every_contract_function_with_its_parameters(module, protocol):
    for name in contract.names(protocol):
        assert hasattr(module, name), f"{module.__name__} lacks {name}"
        declared = _declared(protocol, name)
        if inspect.isfunction(declared):
            assert _parameters(getattr(module, name), False) == _parameters(declared, True), (
                f"{module.__name__}.{name}{inspect.signature(getattr(module, name))} differs "
                f"from the contract's {name}{inspect.signature(declared)}")


@pytest.mark.parametrize("module, protocol", [*BACKENDS, (cuda_api, contract.CudaBackend)],
                         ids=["cpu", "cuda", "cuda.api"])
def test_backend_has_no_public_function_outside_the_contract(module, protocol):
    declared = set(contract.names(protocol))
    own = [n for n, v in vars(module).items() if inspect.isfunction(v) and not n.startswith("_")
           and v.__module__ == module.__name__]
    assert sorted(set(own) - declared) == []


def test_the_cuda_package_loads_the_rest_of_the_contract_lazily():
    eager = {"name", "is_available", "require", "simulator", "synchronize"}
    assert cuda._LAZY == set(contract.names(contract.CudaBackend)) - eager
    assert set(cuda_api.__all__) == cuda._LAZY


def test_every_contract_function_is_documented():
    for name in contract.names(contract.CudaBackend):
        declared = _declared(contract.CudaBackend, name)
        if inspect.isfunction(declared):
            assert inspect.getdoc(declared), name
