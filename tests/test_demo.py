"""The demo, ``python -m nbgrad.demo``, in --quick mode."""
import inspect
import re

import pytest

import nbgrad
from nbgrad import demo


def test_quick_demo_runs_every_part(tmp_path, capsys):
    pytest.importorskip("sklearn", reason="the demo needs the demo extra (scikit-learn)")
    out = tmp_path / "curves.png"
    assert demo.main(["--quick", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    # a. training with per-epoch loss and accuracy
    epochs = re.findall(r"epoch +(\d+)/3 +train loss ([\d.]+) +test loss [\d.]+ +test accuracy "
                        r"+([\d.]+)%", text)
    assert [e[0] for e in epochs] == ["1", "2", "3"]
    assert float(epochs[-1][1]) < float(epochs[0][1])  # the loss went down
    assert float(epochs[-1][2]) > 80.0
    assert re.search(r"nbgrad: [\d.]+ s per epoch", text)
    # b. the frozen backbone, checked bit for bit
    assert "bit-for-bit unchanged (np.array_equal on all 4 tensors): True" in text
    assert "backbone gradients all None: True;  version counters unchanged: True" in text
    # c. the detached side branch leaves the main gradients identical
    assert "main grads identical to no-branch grads: True" in text
    assert re.search(r"without detach\(\) the branch would have changed the backbone's gradients "
                     r"by up to [1-9]", text)
    # d. the in-place mistake names the op and the demo's own line
    line = next(n for n, src in enumerate(inspect.getsourcelines(demo)[0], 1)
                if src.strip().startswith("out += h"))
    assert ("which is output 0 of Relu, is at version 1; expected version 0 instead. It was "
            f"modified in place by __iadd__() at {demo.__file__}:{line}.") in text
    # e. the sequence model reaches its stated accuracy (scheduler, clipping, DataLoader)
    final = re.search(r"final test accuracy ([\d.]+)% \(stated: at least 70% after 3 epochs\)",
                      text)
    assert final and float(final.group(1)) >= 70.0
    assert re.findall(r"epoch +\d/3 +lr [\d.]+ +train loss", text)
    # f. the plot
    if "matplotlib is not installed" not in text:
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_device_flag_passes_the_device_through(capsys):
    try:
        nbgrad.zeros(1, device="cuda")
    except RuntimeError as error:
        assert demo.main(["--quick", "--device", "cuda"]) == 2
        assert str(error) in capsys.readouterr().err
    else:  # a CUDA backend exists: the flag is accepted (the run itself is for the CUDA tests)
        assert demo.parse_args(["--device", "cuda"]).device == "cuda"


def test_arguments():
    args = demo.parse_args([])
    assert (args.device, args.quick, args.epochs, args.out) == ("cpu", False, None, "nbgrad_demo.png")
    args = demo.parse_args(["--quick", "--epochs", "5", "--out", "x.png"])
    assert args.quick and args.epochs == 5 and args.out == "x.png"
