"""End-to-end: training reaches a loss, matches torch step for step, and the
two scenarios nbgrad was built for (freezing, detached side branches) hold
bit for bit."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
import nbgrad.optim as optim
from helpers import cuda_only


def _bars(n, rng):
    """6x6 images holding one horizontal (class 0) or vertical (class 1) bar, plus noise."""
    x = rng.normal(0, 0.1, (n, 1, 6, 6))
    y = rng.integers(0, 2, n)
    pos = rng.integers(0, 6, n)
    for i in range(n):
        if y[i] == 0:
            x[i, 0, pos[i], :] += 1
        else:
            x[i, 0, :, pos[i]] += 1
    return x.astype(np.float32), y.astype(np.int64)


def _cnn(lib=nn):
    return lib.Sequential(lib.Conv2d(1, 4, 3, padding=1), lib.ReLU(), lib.MaxPool2d(2),
                          lib.Flatten(), lib.Linear(36, 2))


def test_small_cnn_training_reaches_low_loss():
    nbgrad.manual_seed(0)
    rng = np.random.default_rng(0)
    x, y = _bars(256, rng)
    model = _cnn()
    opt = optim.Adam(model.parameters(), lr=0.02)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(60):
        idx = rng.integers(0, 256, 32)
        loss = loss_fn(model(nbgrad.tensor(x[idx])), nbgrad.tensor(y[idx]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    with nbgrad.no_grad():
        final = loss_fn(model(nbgrad.tensor(x)), nbgrad.tensor(y)).item()
    assert final < 0.05, final


@pytest.mark.parametrize("opt_name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9, weight_decay=1e-3)),
                                             ("AdamW", dict(lr=0.01))])
def test_training_matches_torch_step_for_step(opt_name, kwargs):
    rng = np.random.default_rng(1)
    x, y = _bars(64, rng)
    torch.manual_seed(0)
    tmodel = _cnn(torch.nn).double()
    model = _cnn().double()
    model.load_state_dict({k: nbgrad.tensor(v.numpy()) for k, v in tmodel.state_dict().items()})
    opt = getattr(optim, opt_name)(model.parameters(), **kwargs)
    topt = getattr(torch.optim, opt_name)(tmodel.parameters(), **kwargs)
    for step in range(5):
        idx = rng.integers(0, 64, 16)
        xb, yb = x[idx].astype(np.float64), y[idx]
        loss = nn.functional.cross_entropy(model(nbgrad.tensor(xb)), nbgrad.tensor(yb))
        tloss = torch.nn.functional.cross_entropy(tmodel(torch.tensor(xb)), torch.tensor(yb))
        np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-10)
        opt.zero_grad()
        topt.zero_grad()
        loss.backward()
        tloss.backward()
        opt.step()
        topt.step()
        for (name, p), tp in zip(model.named_parameters(), tmodel.parameters()):
            np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-9,
                                       atol=1e-12, err_msg=f"{name} after step {step}")


def test_frozen_backbone_stays_bit_for_bit_identical():
    nbgrad.manual_seed(2)
    rng = np.random.default_rng(2)
    x, y = _bars(64, rng)
    backbone = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten())
    head = nn.Linear(36, 2)
    saved = {k: v.numpy().copy() for k, v in backbone.state_dict().items()}
    versions = [p._version for p in backbone.parameters()]
    head_before = head.weight.detach().numpy().copy()
    backbone.requires_grad_(False)
    # Momentum and weight decay would move any parameter that took part in a step.
    opt = optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=0.1, momentum=0.9,
                    weight_decay=0.1)
    for step in range(5):
        features = backbone(nbgrad.tensor(x)).detach()
        loss = nn.functional.cross_entropy(head(features), nbgrad.tensor(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
    for k, v in backbone.state_dict().items():
        assert np.array_equal(saved[k], v.numpy()), k
    assert all(p.grad is None for p in backbone.parameters())
    assert [p._version for p in backbone.parameters()] == versions
    assert not np.array_equal(head_before, head.weight.detach().numpy())
    assert all(id(p) not in {id(q) for q in backbone.parameters()} for p in opt.state)


def _grads(module):
    return [p.grad.numpy().copy() for p in module.parameters()]


def test_detached_side_branch_leaves_main_gradients_identical():
    nbgrad.manual_seed(3)
    rng = np.random.default_rng(3)
    x, y = _bars(32, rng)
    xb, yb = nbgrad.tensor(x), nbgrad.tensor(y)
    backbone = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten())
    head, aux = nn.Linear(144, 2), nn.Sequential(nn.Linear(144, 8), nn.Tanh(), nn.Linear(8, 1))
    main = nn.Sequential(backbone, head)
    loss_fn = nn.functional.cross_entropy

    loss_fn(main(xb), yb).backward()
    reference = _grads(main)

    main.zero_grad()
    features = backbone(xb)
    aux_loss = (aux(features.detach()) ** 2).mean()
    (loss_fn(head(features), yb) + aux_loss).backward()
    assert all(np.array_equal(a, b) for a, b in zip(reference, _grads(main)))
    assert all(p.grad is not None for p in aux.parameters())

    main.zero_grad()
    features = backbone(xb)
    (loss_fn(head(features), yb) + (aux(features) ** 2).mean()).backward()
    leaked = _grads(main)
    assert not np.array_equal(reference[0], leaked[0])  # without detach the branch reaches the backbone
    assert np.array_equal(reference[-1], leaked[-1])  # ... but never the head


# ------------------------------------------------------------ on every device
def _blobs(n=24, seed=0):
    """Three separable classes in 4-D."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    x = rng.standard_normal((n, 4)) * 0.3 + np.eye(3, 4)[y] * 2
    return x.astype(np.float32), y.astype(np.int64)


def test_a_tiny_classifier_reaches_a_low_loss_on_the_device(device):
    nbgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3)).to(device)
    opt = optim.Adam(model.parameters(), lr=0.1)
    x, y = _blobs(12)
    xb, yb = nbgrad.tensor(x, device=device), nbgrad.tensor(y, device=device)
    losses = []
    for _ in range(10):
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.02 and losses[0] > 1.0, losses
    assert all(p.device.type == device for p in model.parameters())


def test_frozen_backbone_on_the_device_stays_bit_for_bit_and_gets_no_grad(device):
    nbgrad.manual_seed(1)
    backbone = nn.Sequential(nn.Linear(4, 6), nn.ReLU()).to(device)
    head = nn.Linear(6, 3).to(device)
    saved = [p.detach().cpu().numpy().copy() for p in backbone.parameters()]
    versions = [p._version for p in backbone.parameters()]
    backbone.requires_grad_(False)
    opt = optim.AdamW(list(backbone.parameters()) + list(head.parameters()), lr=0.1,
                      weight_decay=0.1)
    x, y = _blobs()
    for _ in range(3):
        loss = F.cross_entropy(head(backbone(nbgrad.tensor(x, device=device)).detach()),
                               nbgrad.tensor(y, device=device))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert all(p.grad is None for p in backbone.parameters())
    assert [p._version for p in backbone.parameters()] == versions
    assert all(np.array_equal(a, p.detach().cpu().numpy())
               for a, p in zip(saved, backbone.parameters()))
    assert all(p.grad is not None and p.grad.device.type == device for p in head.parameters())


def test_a_detached_side_branch_on_the_device_leaves_the_main_gradients_identical(device):
    nbgrad.manual_seed(2)
    trunk, main, aux = (nn.Linear(4, 5).to(device), nn.Linear(5, 3).to(device),
                        nn.Linear(5, 2).to(device))
    x, y = _blobs()
    xb, yb = nbgrad.tensor(x, device=device), nbgrad.tensor(y, device=device)
    yb2 = nbgrad.tensor(y % 2, device=device)

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


@cuda_only
def test_the_demo_parts_on_tiny_data_on_cuda_agree_with_the_cpu(monkeypatch, capsys, device):
    """The demo (``python -m nbgrad.demo --quick --device cuda``) is far too
    much for the simulator: its parts run here on a few digits with a
    scaled-down CNN, on the CPU and on CUDA from the same seeds."""
    pytest.importorskip("sklearn", reason="the demo needs scikit-learn")
    from nbgrad import demo
    x_train, y_train, x_test, y_test = demo.load_digits_split()
    data = (x_train[:4], y_train[:4], x_test[:2], y_test[:2])
    monkeypatch.setattr(demo, "BATCH", 2)
    results = {}
    for where in ("cpu", device):
        nbgrad.manual_seed(0)
        rng = np.random.default_rng(0)
        model = demo.DigitsCNN(width=1, hidden=4).to(where)
        history, _ = demo.train_cnn(model, data, 1, where, rng)
        head = demo.freeze_and_retrain_head(model, data, 1, where, rng)
        branch = demo.train_side_branch(model, data, 1, where, rng)
        message = demo.inplace_mistake(data, where, channels=1)
        assert all(p.device.type == where for p in model.parameters())
        results[where] = (history, head, branch, message)
    out = capsys.readouterr().out
    (history, head, branch, message), cpu = results[device], results["cpu"]
    assert head["unchanged"] and branch["identical"] and branch["leak"] > 0
    assert "It was modified in place by __iadd__() at" in message
    assert message == cpu[3]
    for got, expected in ((history["train_loss"] + history["test_loss"], cpu[0]["train_loss"]
                           + cpu[0]["test_loss"]), (head["loss"], cpu[1]["loss"]),
                          (branch["main_loss"] + branch["aux_loss"],
                           cpu[2]["main_loss"] + cpu[2]["aux_loss"])):
        np.testing.assert_allclose(got, expected, rtol=1e-4)
    assert out.count("bit-for-bit unchanged (np.array_equal on all 4 tensors): True") == 2
