"""A 784-256-10 ReLU MLP (batch 256, cross-entropy, SGD) with nbgrad.nn and nbgrad.optim."""
from . import common


class MLPTrainStep:
    timeout = 300

    def setup(self):
        self.step = common.nbgrad_train_step()
        self.step()  # compiles every kernel the step uses
        self.step()

    def time_train_step(self):
        self.step()

    def track_loss_after_20_steps(self):
        """Guards the benchmark itself: the loss must fall (about 2.4 at
        the start); a value near 2.4 means the step stopped learning."""
        step = common.nbgrad_train_step()
        for _ in range(20):
            loss = step()
        return float(loss.item())
    track_loss_after_20_steps.unit = "loss"


class MLPTrainLoopMemory:
    """Peak resident memory of a short training loop (10 steps), from a fresh model."""
    timeout = 300

    def setup(self):
        common.nbgrad_train_step()()  # compile outside the measured function's work

    def peakmem_train_loop(self):
        step = common.nbgrad_train_step(seed=1)
        for _ in range(10):
            step()

