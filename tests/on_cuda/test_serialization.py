"""nbgrad.save / nbgrad.load with CUDA tensors: they come back on the device
they were saved from, unless ``map_location`` says otherwise."""
import nbgrad

from .support import assert_same


def test_cuda_tensors_round_trip_on_the_device(tmp_path):
    cpu = nbgrad.arange(6, dtype=nbgrad.float32).reshape(2, 3)
    state = {"w": cpu.cuda(), "step": 3}
    nbgrad.save(state, tmp_path / "s.npz")
    loaded = nbgrad.load(tmp_path / "s.npz")
    assert loaded["step"] == 3
    assert_same(loaded["w"], cpu)
    on_host = nbgrad.load(tmp_path / "s.npz", map_location="cpu")["w"]
    assert on_host.device == nbgrad.device("cpu") and on_host.tolist() == cpu.tolist()


def test_map_location_moves_cpu_tensors_to_the_device(tmp_path):
    cpu = nbgrad.tensor([1.0, 2.0])
    nbgrad.save(cpu, tmp_path / "t.npz")
    assert_same(nbgrad.load(tmp_path / "t.npz", map_location="cuda"), cpu)
