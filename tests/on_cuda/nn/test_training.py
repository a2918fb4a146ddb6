"""Training on CUDA: a tiny run that must reach a loss threshold, the freeze
and side-branch scenarios, and the demo's parts on tiny data.

The demo itself (``python -m nbgrad.demo --quick --device cuda``) trains a
38k-parameter CNN on 1347 images: far too much for the simulator, whose tiled
matmul runs every thread as a Python thread. So its parts run here on a few
digits with a scaled-down CNN, on the CPU and on CUDA from the same seeds,
and must agree (on a GPU, run the demo itself)."""
import numpy as np
import pytest

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
import nbgrad.optim as optim


def blobs(n=24, seed=0):
    """Three separable classes in 4-D."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    x = rng.standard_normal((n, 4)) * 0.3 + np.eye(3, 4)[y] * 2
    return x.astype(np.float32), y.astype(np.int64)


def test_a_tiny_classifier_reaches_a_low_loss_on_the_device():
    nbgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3)).cuda()
    opt = optim.Adam(model.parameters(), lr=0.1)
    x, y = blobs(12)
    xb, yb = nbgrad.tensor(x, device="cuda"), nbgrad.tensor(y, device="cuda")
    losses = []
    for _ in range(10):
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.02 and losses[0] > 1.0, losses
    assert all(p.device.type == "cuda" for p in model.parameters())


def test_frozen_backbone_stays_bit_for_bit_and_gets_no_grad():
    nbgrad.manual_seed(1)
    backbone = nn.Sequential(nn.Linear(4, 6), nn.ReLU()).cuda()
    head = nn.Linear(6, 3).cuda()
    saved = [p.detach().cpu().numpy().copy() for p in backbone.parameters()]
    versions = [p._version for p in backbone.parameters()]
    backbone.requires_grad_(False)
    opt = optim.AdamW(list(backbone.parameters()) + list(head.parameters()), lr=0.1,
                      weight_decay=0.1)
    x, y = blobs()
    for _ in range(3):
        loss = F.cross_entropy(head(backbone(nbgrad.tensor(x, device="cuda")).detach()),
                               nbgrad.tensor(y, device="cuda"))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert all(p.grad is None for p in backbone.parameters())
    assert [p._version for p in backbone.parameters()] == versions
    assert all(np.array_equal(a, p.detach().cpu().numpy())
               for a, p in zip(saved, backbone.parameters()))
    assert all(p.grad is not None and p.grad.device.type == "cuda" for p in head.parameters())


def test_a_detached_side_branch_leaves_the_main_gradients_identical():
    nbgrad.manual_seed(2)
    trunk, main, aux = nn.Linear(4, 5).cuda(), nn.Linear(5, 3).cuda(), nn.Linear(5, 2).cuda()
    x, y = blobs()
    xb, yb = nbgrad.tensor(x, device="cuda"), nbgrad.tensor(y, device="cuda")
    yb2 = nbgrad.tensor(y % 2, device="cuda")

    def grads(with_branch, detach):
        trunk.zero_grad()
        features = trunk(xb)
        loss = F.cross_entropy(main(features), yb)
        if with_branch:
            side = features.detach() if detach else features
            loss = loss + F.cross_entropy(aux(side), yb2)
        loss.backward()
        return [p.grad.cpu().numpy().copy() for p in trunk.parameters()]

    alone = grads(False, True)
    assert all(np.array_equal(a, b) for a, b in zip(alone, grads(True, True)))
    assert not all(np.array_equal(a, b) for a, b in zip(alone, grads(True, False)))
    assert all(p.grad is not None for p in aux.parameters())


def test_the_demo_parts_on_tiny_data_agree_with_the_cpu(monkeypatch, capsys):
    pytest.importorskip("sklearn", reason="the demo needs scikit-learn")
    from nbgrad import demo
    x_train, y_train, x_test, y_test = demo.load_digits_split()
    data = (x_train[:4], y_train[:4], x_test[:2], y_test[:2])
    monkeypatch.setattr(demo, "BATCH", 2)
    results = {}
    for device in ("cpu", "cuda"):
        nbgrad.manual_seed(0)
        rng = np.random.default_rng(0)
        model = demo.DigitsCNN(width=1, hidden=4).to(device)
        history, _ = demo.train_cnn(model, data, 1, device, rng)
        head = demo.freeze_and_retrain_head(model, data, 1, device, rng)
        branch = demo.train_side_branch(model, data, 1, device, rng)
        message = demo.inplace_mistake(data, device, channels=1)
        assert all(p.device.type == device for p in model.parameters())
        results[device] = (history, head, branch, message)
    out = capsys.readouterr().out
    (history, head, branch, message), cpu = results["cuda"], results["cpu"]
    assert head["unchanged"] and branch["identical"] and branch["leak"] > 0
    assert "It was modified in place by __iadd__() at" in message
    assert message == cpu[3]
    for got, expected in ((history["train_loss"] + history["test_loss"], cpu[0]["train_loss"]
                           + cpu[0]["test_loss"]), (head["loss"], cpu[1]["loss"]),
                          (branch["main_loss"] + branch["aux_loss"],
                           cpu[2]["main_loss"] + cpu[2]["aux_loss"])):
        np.testing.assert_allclose(got, expected, rtol=1e-4)
    assert out.count("bit-for-bit unchanged (np.array_equal on all 4 tensors): True") == 2
