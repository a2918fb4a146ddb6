"""nbgrad.save / nbgrad.load: round trips, and refusal of anything but plain data."""
import collections
import io
import json
import math
import pickle
import zipfile

import numpy as np
import pytest

import nbgrad
import nbgrad.nn as nn
import nbgrad.optim as optim
from nbgrad import serialization
from nbgrad.serialization import CorruptArchiveError, UnsafeContentError, load, save
from helpers import cuda_only


def _round_trip(obj, tmp_path, name="x.npz"):
    path = tmp_path / name
    save(obj, path)
    return load(path)


@pytest.mark.parametrize("dtype", [nbgrad.float32, nbgrad.float64, nbgrad.int64, nbgrad.bool])
def test_tensor_round_trip_keeps_values_dtype_and_shape(dtype, tmp_path):
    values = np.arange(-6, 6).reshape(3, 4) % 3
    t = nbgrad.tensor(values, dtype=dtype)
    out = _round_trip(t, tmp_path)
    assert isinstance(out, nbgrad.Tensor) and out.dtype == dtype and out.shape == t.shape
    np.testing.assert_array_equal(out.numpy(), t.numpy())


def test_special_tensors_round_trip(tmp_path):
    scalar = nbgrad.tensor(2.5)
    empty = nbgrad.zeros(0, 3)
    view = nbgrad.arange(12.0).reshape(3, 4).t()[1:]  # non-contiguous
    leaf = nbgrad.tensor([1.0, 2.0], requires_grad=True)
    param = nn.Parameter(nbgrad.tensor([3.0]))
    frozen = nn.Parameter(nbgrad.tensor([4.0]), requires_grad=False)
    out = _round_trip([scalar, empty, view, leaf, param, frozen, leaf * 2], tmp_path)
    assert out[0].shape == () and out[0].item() == 2.5
    assert tuple(out[1].shape) == (0, 3)
    np.testing.assert_array_equal(out[2].numpy(), view.numpy())
    assert out[3].requires_grad and out[3].is_leaf and not isinstance(out[3], nn.Parameter)
    assert isinstance(out[4], nn.Parameter) and out[4].requires_grad
    assert isinstance(out[5], nn.Parameter) and not out[5].requires_grad
    assert out[6].is_leaf and out[6].requires_grad  # history is not saved, as in torch
    np.testing.assert_array_equal(out[6].detach().numpy(), [2.0, 4.0])


def test_nested_containers_and_numbers_round_trip(tmp_path):
    obj = {
        "epoch": 7, "lr": 0.001, "name": "digits", "done": False, "none": None,
        "special": [math.inf, -math.inf], "betas": (0.9, 0.999),
        "nested": {"a": [nbgrad.ones(2), {"b": nbgrad.zeros(1)}]},
        1: "int key", 2.5: "float key", np.float32(0.5): "numpy number",
        "ordered": collections.OrderedDict([("z", 1), ("a", 2)]),
    }
    out = _round_trip(obj, tmp_path)
    assert out["epoch"] == 7 and isinstance(out["epoch"], int)
    assert out["lr"] == 0.001 and out["name"] == "digits" and out["done"] is False
    assert out["none"] is None and out["special"] == [math.inf, -math.inf]
    assert out["betas"] == (0.9, 0.999) and isinstance(out["betas"], tuple)
    assert out[1] == "int key" and out[2.5] == "float key" and out[0.5] == "numpy number"
    assert isinstance(out["ordered"], collections.OrderedDict) and list(out["ordered"]) == ["z", "a"]
    np.testing.assert_array_equal(out["nested"]["a"][0].numpy(), [1.0, 1.0])
    assert math.isnan(_round_trip(math.nan, tmp_path))


def test_the_same_tensor_twice_comes_back_as_one(tmp_path):
    t = nbgrad.ones(3)
    out = _round_trip({"a": t, "b": t}, tmp_path)
    assert out["a"] is out["b"]


def test_module_state_dict_round_trip(tmp_path):
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8, 3))
    state = _round_trip(model.state_dict(), tmp_path)
    assert isinstance(state, collections.OrderedDict) and list(state) == list(model.state_dict())
    other = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8, 3))
    other.load_state_dict(state)
    x = nbgrad.randn(2, 1, 4, 4)
    np.testing.assert_array_equal(other(x).detach().numpy(), model(x).detach().numpy())


def test_optimizer_state_dict_round_trip(tmp_path):
    layer = nn.Linear(3, 2)
    opt = optim.Adam(layer.parameters(), lr=0.01, amsgrad=True)
    layer(nbgrad.randn(4, 3)).sum().backward()
    opt.step()
    state = _round_trip(opt.state_dict(), tmp_path)
    assert list(state["state"]) == [0, 1]
    assert state["param_groups"][0]["betas"] == (0.9, 0.999)
    assert state["state"][0]["step"].item() == 1.0 and state["state"][0]["step"].shape == ()
    for key in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
        np.testing.assert_array_equal(state["state"][0][key].numpy(),
                                      opt.state[layer.weight][key].numpy())


def test_file_objects_and_exact_paths(tmp_path):
    buffer = io.BytesIO()
    save({"w": nbgrad.ones(2)}, buffer)
    buffer.seek(0)
    assert load(buffer)["w"].shape == (2,)
    path = tmp_path / "model.pt"  # no ".npz" is appended
    save(nbgrad.ones(1), path)
    assert path.exists() and not (tmp_path / "model.pt.npz").exists()
    assert load(str(path)).item() == 1.0


def test_loaded_tensors_own_their_memory(tmp_path):
    t = nbgrad.ones(3)
    out = _round_trip(t, tmp_path)
    out.add_(1)
    assert out._version == 1 and (t.numpy() == 1).all()


@pytest.mark.parametrize("bad", [object(), {"f": lambda: 0}, [np.zeros(2)], {("tuple", "key"): 1},
                                 {1 + 2j: 0}, b"bytes"])
def test_save_refuses_arbitrary_objects(bad, tmp_path):
    with pytest.raises(TypeError, match="nbgrad.save"):
        save(bad, tmp_path / "x.npz")


def test_load_refuses_a_pickle(tmp_path):
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    path = tmp_path / "evil.pt"
    path.write_bytes(pickle.dumps({"w": Evil()}))
    with pytest.raises(UnsafeContentError):
        load(path)


def test_load_refuses_object_arrays_and_foreign_archives(tmp_path):
    path = tmp_path / "objects.npz"
    manifest = {"format": serialization.FORMAT, "version": 1,
                "object": {"__tensor__": "t0", "dtype": "float32"}}
    np.savez(path, t0=np.array([{"a": 1}], dtype=object),
             __manifest__=np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8))
    with pytest.raises(UnsafeContentError):
        load(path)
    plain = tmp_path / "plain.npz"
    np.savez(plain, a=np.ones(2))
    with pytest.raises(UnsafeContentError, match="no manifest"):
        load(plain)
    bare = tmp_path / "bare.npy"
    np.save(bare, np.ones(2))
    with pytest.raises(UnsafeContentError, match="bare"):
        load(bare)
    with pytest.raises(ValueError, match="weights_only"):
        load(plain, weights_only=False)


@pytest.mark.parametrize("object_node", [
    {"__class__": "os.system"},
    {"__tensor__": "missing", "dtype": "float32"},
    {"__tensor__": "t0", "dtype": "float64"},  # disagrees with the array
    {"__float__": "1e400"},
    {"__dict__": [["k"]]},
    {"__tensor__": "t0", "dtype": "float32", "device": "gpu:7"},
])
def test_load_refuses_tampered_manifests(object_node, tmp_path):
    path = tmp_path / "tampered.npz"
    manifest = {"format": serialization.FORMAT, "version": 1, "object": object_node}
    np.savez(path, t0=np.ones(2, dtype=np.float32),
             __manifest__=np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8))
    with pytest.raises(UnsafeContentError):
        load(path)


def _saved_on(device, tmp_path):
    """An archive whose tensor was saved from ``device`` (written by hand: this
    process may have no such device)."""
    path = tmp_path / "device.npz"
    manifest = {"format": serialization.FORMAT, "version": 1,
                "object": {"__tensor__": "t0", "dtype": "float32", "device": device}}
    np.savez(path, t0=np.arange(3, dtype=np.float32),
             __manifest__=np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8))
    return path


@pytest.mark.skipif(nbgrad.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_tensors_need_cuda_or_a_map_location(tmp_path):
    path = _saved_on("cuda:0", tmp_path)
    with pytest.raises(RuntimeError, match=r"^Attempting to deserialize object on a CUDA device "
                                           r"but nbgrad.cuda.is_available\(\) is False"):
        load(path)
    for location in ("cpu", nbgrad.device("cpu")):
        t = load(path, map_location=location)
        assert t.device == nbgrad.device("cpu") and t.tolist() == [0.0, 1.0, 2.0]


def test_load_refuses_wrong_format_version_and_garbage(tmp_path):
    path = tmp_path / "v2.npz"
    manifest = {"format": serialization.FORMAT, "version": 99, "object": None}
    np.savez(path, __manifest__=np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8))
    with pytest.raises(UnsafeContentError, match="version"):
        load(path)
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00not a zip file at all")
    with pytest.raises(UnsafeContentError):
        load(junk)
    with zipfile.ZipFile(tmp_path / "z.npz", "w") as z:
        z.writestr("__manifest__.npy", b"garbage")
    with pytest.raises(UnsafeContentError):
        load(tmp_path / "z.npz")


def test_load_of_a_missing_file_raises_file_not_found(tmp_path):
    import torch
    for lib in (torch, nbgrad):
        with pytest.raises(FileNotFoundError):
            lib.load(tmp_path / "missing.pt")


def _archive_bytes(obj):
    buffer = io.BytesIO()
    save(obj, buffer)
    return bytearray(buffer.getvalue())


def test_load_of_a_damaged_archive_raises_runtime_error():
    """PyTorch: RuntimeError "PytorchStreamReader failed reading zip archive";
    nbgrad's CorruptArchiveError is a RuntimeError (and an UnsafeContentError),
    never zipfile.BadZipFile."""
    raw = _archive_bytes({"w": nbgrad.ones(1000)})
    flipped = bytearray(raw)
    flipped[raw.find(b"t0.npy") + 200] ^= 0xFF  # inside the tensor's data: a bad CRC
    for damaged in (flipped, raw[:len(raw) // 2]):
        with pytest.raises(RuntimeError, match="corrupted") as caught:
            load(io.BytesIO(bytes(damaged)))
        assert isinstance(caught.value, CorruptArchiveError)
        assert isinstance(caught.value, UnsafeContentError)


def _npy_member(header, payload=b""):
    member = io.BytesIO()
    np.lib.format.write_array_header_1_0(member, header)
    return member.getvalue() + payload


def test_load_refuses_a_header_claiming_more_than_its_member_holds():
    """A header saying 2**40 elements is refused before anything is allocated."""
    manifest = {"format": serialization.FORMAT, "version": serialization.VERSION,
                "object": {"__tensor__": "t0", "dtype": "float32", "requires_grad": False,
                           "parameter": False, "device": "cpu"}}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("t0.npy", _npy_member({"descr": "<f4", "fortran_order": False,
                                          "shape": (2 ** 40,)}, b"\0" * 16))
        text = np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8)
        z.writestr("__manifest__.npy", _npy_member(
            {"descr": "|u1", "fortran_order": False, "shape": text.shape}, text.tobytes()))
    with pytest.raises(CorruptArchiveError, match=r"claims shape \(1099511627776,\)"):
        load(io.BytesIO(buffer.getvalue()))


def _deep(n):
    data = 1.0
    for _ in range(n):
        data = [data]
    return data


def test_deep_nesting_is_refused_without_recursion_error(tmp_path):
    """PyTorch's pickler raises RecursionError on a 10000-deep list; nbgrad
    refuses containers nested more than 200 deep with a RuntimeError that
    says so, and refuses a manifest nested deeper than that."""
    assert _round_trip(_deep(150), tmp_path) == _deep(150)
    with pytest.raises(RuntimeError, match="nested more than 200 levels deep") as caught:
        save(_deep(10000), io.BytesIO())
    assert not isinstance(caught.value, RecursionError)
    for depth in (300, 100000):
        manifest = ('{"format": "nbgrad.save", "version": 1, "object": '
                    + "[" * depth + "]" * depth + "}").encode()
        buffer = io.BytesIO()
        np.savez(buffer, __manifest__=np.frombuffer(manifest, dtype=np.uint8))
        with pytest.raises(UnsafeContentError) as caught:
            load(io.BytesIO(buffer.getvalue()))
        assert not isinstance(caught.value, RecursionError)


def test_top_level_names():
    assert nbgrad.save is save and nbgrad.load is load


# ------------------------------------------------------------------ on CUDA
@cuda_only
def test_cuda_tensors_round_trip_on_the_device(tmp_path, device):
    cpu = nbgrad.arange(6, dtype=nbgrad.float32).reshape(2, 3)
    loaded = _round_trip({"w": cpu.to(device), "step": 3}, tmp_path)
    assert loaded["step"] == 3
    assert loaded["w"].device == nbgrad.device("cuda", 0) and loaded["w"].tolist() == cpu.tolist()
    on_host = load(tmp_path / "x.npz", map_location="cpu")["w"]
    assert on_host.device == nbgrad.device("cpu") and on_host.tolist() == cpu.tolist()


@cuda_only
def test_map_location_moves_cpu_tensors_to_the_device(tmp_path, device):
    save(nbgrad.tensor([1.0, 2.0]), tmp_path / "t.npz")
    loaded = load(tmp_path / "t.npz", map_location=device)
    assert loaded.device.type == device and loaded.tolist() == [1.0, 2.0]
