"""nbgrad's demo: ``python -m nbgrad.demo [--quick] [--epochs N] [--device cpu|cuda] [--out PNG]``.

On the 8x8 handwritten digits that scikit-learn ships (no download) it

a. trains a small CNN (progress bar, per-epoch loss and accuracy; >= 95% test accuracy),
b. freezes the trained backbone, trains a new head on its detached features and
   proves the backbone's weights are bit-for-bit unchanged,
c. trains an auxiliary branch on detached features alongside the main network and
   shows the main network's gradients are identical to those computed without it,
d. makes a realistic in-place mistake and shows nbgrad's error naming the op and line,
e. writes a PNG of the loss curves,

and compares the time per epoch with the same CNN in PyTorch when PyTorch is installed.
Needs the ``demo`` extra: ``pip install -e ".[demo]"``.
"""
import argparse
import contextlib
import statistics
import sys
import time
import types

import numpy as np

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
import nbgrad.optim as optim

BATCH = 64
SEED = 0


# --------------------------------------------------------------------- data
def load_digits_split():
    """(x_train, y_train, x_test, y_test): images scaled to [0, 1], shape (N, 1, 8, 8)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    labels = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        images, labels, test_size=0.25, random_state=SEED, stratify=labels)
    return x_train, y_train, x_test, y_test


def batches(n, rng, batch_size=None):
    batch_size = batch_size or BATCH
    order = rng.permutation(n)
    return [order[i:i + batch_size] for i in range(0, n, batch_size)]


def progress(items, desc):
    try:
        from tqdm import tqdm
    except ImportError:  # the bar is decoration; train without it
        return items
    # disable=None: a bar on a terminal, nothing in a log or a pipe
    return tqdm(items, desc=desc, leave=False, unit="batch", file=sys.stdout, ncols=80,
                disable=None)


@contextlib.contextmanager
def blas_threads(limit):
    """Limit NumPy's BLAS to ``limit`` threads (threadpoolctl, which scikit-learn
    installs). The demo's matrix products are small: a multi-threaded BLAS
    spends longer waking its threads than computing, and on a busy two-core
    machine its spinning threads stall everything else."""
    if not limit:
        yield
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=limit, user_api="blas"):
        yield


# -------------------------------------------------------------------- model
class DigitsCNN(nn.Module):
    """conv(1->16) relu conv(16->32) relu maxpool flatten | linear(512->64) relu linear(64->10)
    (``width`` and ``hidden`` scale it down: the CUDA simulator tests use a tiny one)."""

    def __init__(self, width=16, hidden=64):
        super().__init__()
        self.features = 2 * width * 4 * 4  # what the backbone hands the heads
        self.hidden = hidden
        self.backbone = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2), nn.Flatten())
        self.head = nn.Sequential(nn.Linear(self.features, hidden), nn.ReLU(),
                                  nn.Linear(hidden, 10))

    def forward(self, x):
        return self.head(self.backbone(x))


def evaluate(predict, x, y, device, loss_fn=None):
    """(mean loss, accuracy) of ``predict`` over ``x`` in large batches, without a graph."""
    total_loss, correct = 0.0, 0
    with nbgrad.no_grad():
        for start in range(0, len(x), 512):
            xb = nbgrad.tensor(x[start:start + 512], device=device)
            yb = nbgrad.tensor(y[start:start + 512], device=device)
            logits = predict(xb)
            if loss_fn is not None:
                total_loss += loss_fn(logits, yb).item() * len(xb)
            correct += int((logits.detach().cpu().numpy().argmax(1) == y[start:start + 512]).sum())
    return total_loss / len(x), correct / len(x)


# ------------------------------------------------------------ a. train CNN
def train_cnn(model, data, epochs, device, rng):
    x_train, y_train, x_test, y_test = data
    loss_fn = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    history = {"train_loss": [], "test_loss": [], "test_acc": [], "epoch_s": [], "epoch_cpu_s": []}
    epoch_batches = [batches(len(x_train), rng) for _ in range(epochs)]
    for epoch, order in enumerate(epoch_batches, 1):
        model.train()
        start, cpu_start = time.perf_counter(), time.process_time()
        running, seen = 0.0, 0
        bar = progress(order, f"epoch {epoch}/{epochs}")
        for idx in bar:
            xb = nbgrad.tensor(x_train[idx], device=device)
            yb = nbgrad.tensor(y_train[idx], device=device)
            loss = loss_fn(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item() * len(idx)
            seen += len(idx)
            if hasattr(bar, "set_postfix"):
                bar.set_postfix(loss=f"{running / seen:.4f}", refresh=False)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        model.eval()
        test_loss, test_acc = evaluate(model, x_test, y_test, device, loss_fn)
        history["train_loss"].append(running / seen)
        history["test_loss"].append(test_loss)
        history["test_acc"].append(test_acc)
        history["epoch_s"].append(elapsed)
        history["epoch_cpu_s"].append(cpu)
        print(f"  epoch {epoch:2d}/{epochs}  train loss {running / seen:.4f}  test loss "
              f"{test_loss:.4f}  test accuracy {100 * test_acc:5.2f}%  ({elapsed:.2f} s)")
    return history, epoch_batches


def torch_epoch_times(model, data, epoch_batches):
    """Train the same CNN, from the same initial weights and on the same batches,
    in PyTorch on this machine; returns (wall, CPU) seconds per epoch (None without torch)."""
    try:
        import torch
    except ImportError:
        return None
    x_train, y_train, _, _ = data
    tmodel = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(512, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    with torch.no_grad():
        for tp, p in zip(tmodel.parameters(), model.parameters()):
            tp.copy_(torch.from_numpy(p.detach().cpu().numpy().copy()))
    optimizer = torch.optim.Adam(tmodel.parameters(), lr=3e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    times = []
    for order in epoch_batches:
        start, cpu_start = time.perf_counter(), time.process_time()
        for idx in order:
            xb, yb = torch.from_numpy(x_train[idx]), torch.from_numpy(y_train[idx])
            loss = loss_fn(tmodel(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss.item()
        times.append((time.perf_counter() - start, time.process_time() - cpu_start))
    return times


# --------------------------------------------------------- b. freeze backbone
def freeze_and_retrain_head(model, data, epochs, device, rng):
    """A new head (is the digit odd?) on the frozen backbone's detached features."""
    x_train, y_train, x_test, y_test = data
    backbone = model.backbone
    saved = {name: value.detach().cpu().numpy().copy()
             for name, value in backbone.state_dict().items()}
    versions = {name: p._version for name, p in backbone.named_parameters()}
    backbone.requires_grad_(False)
    width = model.hidden // 2
    odd_head = nn.Sequential(nn.Linear(model.features, width), nn.ReLU(),
                             nn.Linear(width, 1)).to(device)
    # The optimizer is handed the frozen weights too, with weight decay: a frozen
    # parameter gets no gradient, and a parameter without a gradient is skipped.
    optimizer = optim.AdamW(list(backbone.parameters()) + list(odd_head.parameters()),
                            lr=3e-3, weight_decay=0.05)
    loss_fn = nn.BCEWithLogitsLoss()
    losses = []
    for epoch in range(1, epochs + 1):
        running, seen = 0.0, 0
        for idx in progress(batches(len(x_train), rng), f"head {epoch}/{epochs}"):
            xb = nbgrad.tensor(x_train[idx], device=device)
            target = nbgrad.tensor((y_train[idx] % 2).astype(np.float32), device=device)
            features = backbone(xb).detach()
            loss = loss_fn(odd_head(features).squeeze(1), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item() * len(idx)
            seen += len(idx)
        losses.append(running / seen)
        print(f"  head epoch {epoch}/{epochs}  odd/even loss {running / seen:.4f}")
    with nbgrad.no_grad():
        logits = odd_head(backbone(nbgrad.tensor(x_test, device=device))).squeeze(1)
    accuracy = float(((logits.cpu().numpy() > 0) == (y_test % 2 == 1)).mean())
    unchanged = all(np.array_equal(saved[name], value.detach().cpu().numpy())
                    for name, value in backbone.state_dict().items())
    no_grads = all(p.grad is None for p in backbone.parameters())
    same_versions = all(p._version == versions[name] for name, p in backbone.named_parameters())
    print(f"  odd/even accuracy of the new head on the test set: {100 * accuracy:.2f}%")
    print(f"  backbone weights bit-for-bit unchanged (np.array_equal on all "
          f"{len(saved)} tensors): {unchanged}")
    print(f"  backbone gradients all None: {no_grads};  version counters unchanged: "
          f"{same_versions}")
    backbone.requires_grad_(True)
    return {"loss": losses, "accuracy": accuracy, "unchanged": unchanged and no_grads
            and same_versions}


# ---------------------------------------------------------- c. side branch
def _grads(module):
    return {name: p.grad.detach().cpu().numpy().copy() for name, p in module.named_parameters()}


def train_side_branch(model, data, epochs, device, rng):
    """An auxiliary classifier (is the digit >= 5?) trained on detached features
    while the main network keeps training."""
    x_train, y_train, x_test, y_test = data
    width = model.hidden // 2
    aux = nn.Sequential(nn.Linear(model.features, width), nn.ReLU(), nn.Linear(width, 2)).to(device)
    loss_fn = nn.CrossEntropyLoss()
    main_opt = optim.Adam(model.parameters(), lr=1e-3)
    aux_opt = optim.Adam(aux.parameters(), lr=1e-2)
    identical_checks = []
    main_losses, aux_losses = [], []
    leak = None
    for epoch in range(1, epochs + 1):
        main_run = aux_run = 0.0
        seen = 0
        for step, idx in enumerate(progress(batches(len(x_train), rng), f"branch {epoch}/{epochs}")):
            xb = nbgrad.tensor(x_train[idx], device=device)
            yb = nbgrad.tensor(y_train[idx], device=device)
            big = nbgrad.tensor((y_train[idx] >= 5).astype(np.int64), device=device)
            if step == 0:  # reference: the main network's gradients with no branch at all
                main_opt.zero_grad()
                loss_fn(model(xb), yb).backward()
                reference = _grads(model)
                if leak is None:  # what the same branch does to them without detach()
                    main_opt.zero_grad()
                    features = model.backbone(xb)
                    (loss_fn(model.head(features), yb) + loss_fn(aux(features), big)).backward()
                    leaked = _grads(model)
                    leak = max(float(np.abs(leaked[k] - reference[k]).max()) for k in leaked)
            features = model.backbone(xb)
            main_loss = loss_fn(model.head(features), yb)
            aux_loss = loss_fn(aux(features.detach()), big)
            main_opt.zero_grad()
            aux_opt.zero_grad()
            (main_loss + aux_loss).backward()
            if step == 0:
                now = _grads(model)
                identical_checks.append(all(np.array_equal(reference[k], now[k]) for k in now))
            main_opt.step()
            aux_opt.step()
            main_run += main_loss.item() * len(idx)
            aux_run += aux_loss.item() * len(idx)
            seen += len(idx)
        main_losses.append(main_run / seen)
        aux_losses.append(aux_run / seen)
        print(f"  branch epoch {epoch}/{epochs}  main loss {main_run / seen:.4f}  "
              f"aux (>= 5?) loss {aux_run / seen:.4f}  main grads identical to no-branch "
              f"grads: {identical_checks[-1]}")
    model.eval()
    _, main_acc = evaluate(model, x_test, y_test, device)
    _, aux_acc = evaluate(lambda x: aux(model.backbone(x)), x_test, (y_test >= 5).astype(np.int64),
                          device)
    print(f"  test accuracy: main {100 * main_acc:.2f}%, aux branch {100 * aux_acc:.2f}%")
    print(f"  without detach() the branch would have changed the backbone's gradients by up to "
          f"{leak:.3e}")
    return {"main_loss": main_losses, "aux_loss": aux_losses, "identical": all(identical_checks),
            "leak": leak, "main_accuracy": main_acc}


# ------------------------------------------------------- d. in-place mistake
def _residual_forward(conv_a, conv_b, head, x, in_place):
    h = F.relu(conv_a(x))
    out = F.relu(conv_b(h))  # relu saves its output for the backward pass
    if in_place:
        out += h  # the mistake: writes into the tensor relu saved
    else:
        out = out + h  # the fix: a new tensor
    return head(out.flatten(1))


# nbgrad names the user's line, skipping frames of nbgrad's own modules; this
# function plays the user's code, so it runs with a user module name.
_residual_forward = types.FunctionType(
    _residual_forward.__code__, {**globals(), "__name__": "__main__"}, "_residual_forward")


def inplace_mistake(data, device, channels=8):
    x_train, y_train, _, _ = data
    conv_a = nn.Conv2d(1, channels, 3, padding=1).to(device)
    conv_b = nn.Conv2d(channels, channels, 3, padding=1).to(device)
    head = nn.Linear(channels * 8 * 8, 10).to(device)
    xb = nbgrad.tensor(x_train[:BATCH], device=device)
    yb = nbgrad.tensor(y_train[:BATCH], device=device)
    print("  a residual block written as  out = relu(conv_b(h)); out += h")
    loss = F.cross_entropy(_residual_forward(conv_a, conv_b, head, xb, in_place=True), yb)
    try:
        loss.backward()
    except RuntimeError as error:
        message = str(error)
        print("  loss.backward() raised RuntimeError:")
        print("    " + message)
    else:
        message = None
        print("  (no error was raised: the version counter missed the write)")
    loss = F.cross_entropy(_residual_forward(conv_a, conv_b, head, xb, in_place=False), yb)
    loss.backward()
    print(f"  with  out = out + h  backward works: |grad conv_a.weight| = "
          f"{float(np.linalg.norm(conv_a.weight.grad.cpu().numpy())):.4f}")
    return message


# ------------------------------------------------------ e. a sequence model
class DigitsLSTM(nn.Module):
    """Reads a digit row by row: 8 steps of 8 pixels, projected to 32 features
    (no embedding: the pixels are numbers), an LSTM(32, 64), and a linear
    classifier on its last hidden state."""

    def __init__(self, features=32, hidden=64):
        super().__init__()
        self.project = nn.Linear(8, features)
        self.lstm = nn.LSTM(features, hidden, batch_first=True)
        self.classify = nn.Linear(hidden, 10)

    def forward(self, images):
        rows = images.reshape(images.shape[0], 8, 8)  # (batch, time, pixels of a row)
        out, (h, _) = self.lstm(F.relu(self.project(rows)))
        return self.classify(h[-1])


SEQUENCE_TARGET = {True: 70.0, False: 90.0}  # stated test accuracy (%): --quick, full run


def train_sequence_model(data, epochs, device, quick):
    """An LSTM on the digits read row by row, trained with a DataLoader,
    a one-cycle learning-rate schedule and gradient clipping."""
    from nbgrad.utils.data import DataLoader, TensorDataset
    x_train, y_train, x_test, y_test = data
    model = DigitsLSTM().to(device)
    loader = DataLoader(TensorDataset(nbgrad.tensor(x_train), nbgrad.tensor(y_train)),
                        batch_size=BATCH, shuffle=True,
                        generator=nbgrad.Generator().manual_seed(SEED))
    optimizer = optim.Adam(model.parameters(), lr=1e-2)
    schedule = optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, epochs=epochs,
                                             steps_per_epoch=len(loader))
    loss_fn = nn.CrossEntropyLoss()
    print(f"  {type(model).__name__}: Linear(8, 32) -> LSTM(32, 64) -> Linear(64, 10), "
          f"{sum(p.numel() for p in model.parameters())} parameters; DataLoader(batch {BATCH}, "
          f"shuffled), OneCycleLR, clip_grad_norm_(1.0)")
    accuracy, clipped = 0.0, 0
    for epoch in range(1, epochs + 1):
        model.train()
        running = 0.0
        for xb, yb in loader:
            loss = loss_fn(model(xb.to(device)), yb.to(device))
            optimizer.zero_grad()
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            clipped += float(norm) > 1.0
            optimizer.step()
            schedule.step()
            running += loss.item() * len(xb)
        model.eval()
        _, accuracy = evaluate(model, x_test, y_test, device)
        print(f"  epoch {epoch:2d}/{epochs}  lr {schedule.get_last_lr()[0]:.5f}  train loss "
              f"{running / len(x_train):.4f}  test accuracy {100 * accuracy:6.2f}%")
    target = SEQUENCE_TARGET[quick]
    print(f"  final test accuracy {100 * accuracy:.2f}% (stated: at least {target:.0f}% after "
          f"{epochs} epochs); gradient norm clipped in {clipped} steps")
    return 100 * accuracy >= target


# ---------------------------------------------------------------- f. plot
def plot(path, history, head, branch):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    epochs = range(1, len(history["train_loss"]) + 1)
    axes[0].plot(epochs, history["train_loss"], "o-", label="train loss")
    axes[0].plot(epochs, history["test_loss"], "s-", label="test loss")
    acc = axes[0].twinx()
    acc.plot(epochs, [100 * a for a in history["test_acc"]], "g^--", label="test accuracy")
    acc.set_ylabel("test accuracy (%)")
    axes[0].set_title("a. CNN on load_digits")
    axes[0].set_xlabel("epoch")
    axes[0].set_ylabel("cross-entropy")
    lines = axes[0].get_lines() + acc.get_lines()
    axes[0].legend(lines, [line.get_label() for line in lines], loc="center right")
    axes[1].plot(range(1, len(head["loss"]) + 1), head["loss"], "o-", color="tab:purple")
    axes[1].set_title("b. new head on the frozen backbone")
    axes[1].set_xlabel("epoch")
    axes[1].set_ylabel("odd/even BCE loss")
    e = range(1, len(branch["main_loss"]) + 1)
    axes[2].plot(e, branch["main_loss"], "o-", label="main network")
    axes[2].plot(e, branch["aux_loss"], "s-", label="aux branch (detached)")
    axes[2].set_title("c. side branch on detached features")
    axes[2].set_xlabel("epoch")
    axes[2].set_ylabel("loss")
    axes[2].legend()
    from matplotlib.ticker import MaxNLocator
    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ------------------------------------------------------------------ main
def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m nbgrad.demo",
        description="Train a small CNN on scikit-learn's 8x8 digits with nbgrad, freeze its "
                    "backbone, train a detached side branch, catch an in-place mistake, train an "
                    "LSTM that reads the digits row by row, and plot the losses.")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
    parser.add_argument("--quick", action="store_true", help="a short run (under 20 s)")
    parser.add_argument("--epochs", type=int, default=None,
                        help="epochs of CNN training (default 12, or 3 with --quick)")
    parser.add_argument("--out", default="nbgrad_demo.png", help="where to write the loss plot")
    parser.add_argument("--distributed", type=int, default=0, metavar="N",
                        help="train the CNN data-parallel on N MPI ranks instead, and check it "
                             "against one process (needs the distributed extra)")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="threads for NumPy's BLAS in nbgrad's parts (default 1; 0 leaves "
                             "the BLAS default)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    epochs = args.epochs or (3 if args.quick else 12)
    if args.distributed:
        from .demo_distributed import launch
        return launch(args.distributed, args.epochs or (1 if args.quick else 3))
    head_epochs, branch_epochs = (1, 1) if args.quick else (4, 3)
    try:
        device = nbgrad.device(args.device)
        nbgrad.zeros(1, device=device)
    except RuntimeError as error:
        print(f"nbgrad demo: cannot use --device {args.device}: {error}", file=sys.stderr)
        return 2
    try:
        data = load_digits_split()
    except ImportError:
        print('nbgrad demo: needs scikit-learn: pip install -e ".[demo]"', file=sys.stderr)
        return 2
    start = time.perf_counter()
    nbgrad.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    print(f"nbgrad {nbgrad.__version__} demo on {device}: sklearn load_digits, "
          f"{len(data[0])} training and {len(data[2])} test images of 8x8 pixels")

    model = DigitsCNN().to(device)
    initial = {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}
    print(f"\na. Train a small CNN ({sum(p.numel() for p in model.parameters())} parameters) "
          f"with Adam for {epochs} epochs:")
    print("   " + repr(model).replace("\n", "\n   "))
    with blas_threads(args.blas_threads):
        history, epoch_batches = train_cnn(model, data, epochs, device, rng)
    wall, cpu = history["epoch_s"], history["epoch_cpu_s"]
    steady = statistics.median(wall[1:]) if len(wall) > 1 else wall[0]
    steady_cpu = statistics.median(cpu[1:]) if len(cpu) > 1 else cpu[0]
    print(f"  final test accuracy: {100 * history['test_acc'][-1]:.2f}%")
    print(f"  nbgrad: {steady:.3f} s per epoch, {steady_cpu:.3f} s of CPU time (medians after the "
          f"first epoch, which took {wall[0]:.3f} s: it loads the compiled kernels)")
    if device.type == "cpu":
        reference = DigitsCNN()
        reference.load_state_dict({k: nbgrad.tensor(v) for k, v in initial.items()})
        torch_times = torch_epoch_times(reference, data, epoch_batches[:2 if args.quick else 4])
        if torch_times is None:
            print("  (PyTorch is not installed: no comparison)")
        else:
            t_steady = statistics.median(t for t, _ in torch_times[1:])
            t_cpu = statistics.median(c for _, c in torch_times[1:])
            print(f"  PyTorch, same CNN, same batches, this machine: {t_steady:.3f} s per epoch, "
                  f"{t_cpu:.3f} s of CPU time")
            print(f"  nbgrad / PyTorch: {steady / t_steady:.2f}x wall time, "
                  f"{steady_cpu / t_cpu:.2f}x CPU time")

    with blas_threads(args.blas_threads):
        print("\nb. Freeze the trained backbone (requires_grad_(False)) and train a new odd/even "
              "head on its detached features:")
        head = freeze_and_retrain_head(model, data, head_epochs, device, rng)

        print("\nc. Train an auxiliary branch (is the digit >= 5?) on detached features alongside "
              "the main network:")
        branch = train_side_branch(model, data, branch_epochs, device, rng)

        print("\nd. A realistic in-place mistake, caught by the version counter:")
        message = inplace_mistake(data, device)

        print("\ne. A sequence model: an LSTM reads each digit row by row:")
        sequence_ok = train_sequence_model(data, 3 if args.quick else 12, device, args.quick)

    print("\nf. Loss curves:")
    try:
        plot(args.out, history, head, branch)
        print(f"  wrote {args.out}")
    except ImportError:
        print("  (matplotlib is not installed: no plot)")
    print(f"\nDone in {time.perf_counter() - start:.1f} s.")
    ok = head["unchanged"] and branch["identical"] and message is not None and sequence_ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
