"""Training steps of the demo's sequence models (the 8x8 digits read row by
row: 8 steps of 8 features, batch 64): an LSTM(8, 128) and a
TransformerEncoderLayer(64, 4, 128), each with a linear head, cross-entropy
and Adam. ``python -m kernels.sequence_step_study`` times them next to
PyTorch eager in one run."""
import numpy as np

import nbgrad
import nbgrad.nn as nn


class _Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(8, 128, batch_first=True)
        self.head = nn.Linear(128, 10)

    def forward(self, x):
        return self.head(self.rnn(x)[0][:, -1])


class _Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 64)
        self.layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, batch_first=True)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.layer(self.proj(x)).mean(1))


class SequenceTrainStep:
    params = ["lstm", "encoder_layer"]
    param_names = ["model"]
    timeout = 300

    def setup(self, model):
        nbgrad.manual_seed(0)
        rng = np.random.default_rng(0)
        self.x = nbgrad.tensor(rng.random((64, 8, 8), dtype=np.float32))
        self.y = nbgrad.tensor(rng.integers(0, 10, 64))
        self.model = _Recurrent() if model == "lstm" else _Encoder()
        self.opt = nbgrad.optim.Adam(self.model.parameters(), lr=1e-3)
        self.time_train_step(model)  # compiles every kernel of the step
        self.time_train_step(model)

    def time_train_step(self, model):
        self.opt.zero_grad()
        nbgrad.nn.functional.cross_entropy(self.model(self.x), self.y).backward()
        self.opt.step()
