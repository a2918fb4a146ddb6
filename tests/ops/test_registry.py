"""Ops declared with ``registry.tensor_op`` become Tensor methods and
``nbgrad`` functions without being listed anywhere else."""
import nbgrad
from nbgrad.ops import registry


def test_every_declared_method_is_bound_to_tensor():
    for name, fn in registry.METHODS.items():
        assert getattr(nbgrad.Tensor, name) is fn or (
            isinstance(fn, property) and vars(nbgrad.Tensor)[name] is fn), name


def test_every_declared_function_is_exported():
    for name, fn in registry.FUNCTIONS.items():
        assert getattr(nbgrad, name) is fn, name


def test_a_new_declaration_is_a_method_and_a_function(monkeypatch):
    monkeypatch.setattr(registry, "METHODS", {})
    monkeypatch.setattr(registry, "FUNCTIONS", {})

    @registry.tensor_op("twice")
    def twice(self):
        return self * 2

    @registry.tensor_op("rows", function=False, attribute=True)
    def rows(self):
        return self.shape[0]

    assert registry.METHODS["twice"] is twice and registry.FUNCTIONS["twice"] is twice
    assert isinstance(registry.METHODS["rows"], property) and "rows" not in registry.FUNCTIONS
