"""``LBFGS``: limited-memory BFGS, as ``torch.optim.LBFGS``.

All parameters are handled as one flat vector. A search direction comes from
the gradient and the remembered (step, gradient change) pairs by the two-loop
recursion; the step length is ``lr`` or is chosen by a strong-Wolfe line
search (bracketing, then zooming by cubic interpolation). These are
whole-vector computations (dot products, reductions), so they are tensor ops
rather than a fused kernel. Scalars that come out of reductions stay 0-dim
tensors, mixed with Python numbers exactly where PyTorch mixes them, so that
float32 problems round as they do there."""
import math

from .. import creation
from ..ops import joining
from ..tape import grad_mode
from ..tensor import Tensor
from .optimizer import Optimizer, _check_lr, _value

__all__ = ["LBFGS"]

# Wolfe constants: sufficient decrease (Armijo) and curvature.
_ARMIJO = 1e-4
_CURVATURE = 0.9
# A curvature pair whose s.y is not above this would spoil the Hessian estimate: skipped.
_MIN_CURVATURE = 1e-10


def _as_float(loss):
    return float(loss.detach()) if isinstance(loss, Tensor) else float(loss)


def _clamp(value, low, high):
    # Python's min/max, so the result keeps the type (tensor or number) of the chosen operand.
    return min(max(value, low), high)


def _cubic_minimizer(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer, clamped to ``bounds`` (default: between ``x1`` and ``x2``),
    of the cubic matching values ``f`` and slopes ``g`` at two points; the
    middle of the bounds when that cubic has no minimum."""
    # (xa, ga): the left point, (xb, gb): the right one.
    (xa, ga), (xb, gb) = ((x1, g1), (x2, g2)) if x1 <= x2 else ((x2, g2), (x1, g1))
    low, high = (xa, xb) if bounds is None else bounds
    theta = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = theta ** 2 - g1 * g2
    if not disc >= 0:
        return (low + high) / 2.0
    root = disc.sqrt() if isinstance(disc, Tensor) else math.sqrt(disc)
    guess = xb - (xb - xa) * ((gb + root - theta) / (gb - ga + 2 * root))
    return _clamp(guess, low, high)


class _Trial:
    """A point of the line search: step ``t``, loss ``f``, flat gradient ``g``
    and slope ``gtd`` (the gradient along the search direction)."""
    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def _strong_wolfe(evaluate, direction, start, t, max_ls, tolerance_change=1e-9):
    """Search along ``direction`` from ``start`` (a ``_Trial`` at step 0) for a
    step meeting the strong Wolfe conditions, beginning with step ``t``.
    ``evaluate(t)`` returns the loss and flat gradient there. At most
    ``max_ls`` evaluations after the first. Returns the best trial and the
    number of evaluations."""
    f0, slope0 = start.f, start.gtd

    def probe(step):
        loss, grad = evaluate(step)
        return _Trial(step, loss, grad, grad.dot(direction))

    def decreases_enough(trial):
        return not trial.f > (f0 + _ARMIJO * trial.t * slope0)

    def flat_enough(trial):
        return abs(trial.gtd) <= -_CURVATURE * slope0

    scale = direction.abs().max()
    found = False
    extra = 0  # evaluations after the first
    last, trial = start, probe(t)
    # Phase 1: grow the step until an interval holding an acceptable one is known.
    while extra < max_ls:
        rose = not decreases_enough(trial) or (extra > 1 and trial.f >= last.f)
        if not rose and flat_enough(trial):
            interval, found = [trial], True
            break
        if rose or trial.gtd >= 0:
            interval = [last, trial]
            break
        bounds = (trial.t + 0.01 * (trial.t - last.t), trial.t * 10)
        step = _cubic_minimizer(last.t, last.f, last.gtd, trial.t, trial.f, trial.gtd, bounds)
        last, trial = trial, probe(step)
        extra += 1
    else:
        interval = [start, trial]

    # Phase 2: shrink the interval [a, b] around the best point so far (``best``).
    best = 0 if interval[0].f <= interval[-1].f else 1
    stalled = False
    while not found and extra < max_ls:
        a, b = interval
        if abs(b.t - a.t) * scale < tolerance_change:
            break
        step = _cubic_minimizer(a.t, a.f, a.gtd, b.t, b.f, b.gtd)
        left, right = min(a.t, b.t), max(a.t, b.t)
        margin = 0.1 * (right - left)
        if min(right - step, step - left) < margin:
            # Too close to an end: allowed once, unless it is on or past the end;
            # otherwise move a tenth of the width inside.
            if stalled or step >= right or step <= left:
                step = right - margin if abs(step - right) < abs(step - left) else left + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        trial = probe(step)
        extra += 1
        other = 1 - best
        if not decreases_enough(trial) or trial.f >= interval[best].f:
            interval[other] = trial
            best = 0 if interval[0].f <= interval[1].f else 1
            continue
        if flat_enough(trial):
            found = True
        elif trial.gtd * (interval[other].t - interval[best].t) >= 0:
            interval[other] = interval[best]
        interval[best] = trial
    return interval[best], extra + 1


def _search_direction(grad, steps, changes, rhos, alphas, h_diag):
    """``-H grad``, ``H`` the inverse-Hessian estimate made from the pairs
    (``steps[i]``, ``changes[i]``), ``rhos[i] = 1 / (steps[i] . changes[i])``,
    on top of ``h_diag`` times the identity. ``alphas`` is scratch space."""
    q = grad.neg()
    for i in reversed(range(len(steps))):
        alphas[i] = steps[i].dot(q) * rhos[i]
        q.sub_(changes[i] * alphas[i])
    r = q.mul(h_diag)
    for i in range(len(steps)):
        beta = changes[i].dot(r) * rhos[i]
        r.add_(steps[i] * (alphas[i] - beta))
    return r


class LBFGS(Optimizer):
    """LBFGS(params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-07, \
tolerance_change=1e-09, history_size=100, line_search_fn=None)

    Minimizes with the limited-memory BFGS quasi-Newton method (as in
    minFunc), like ``torch.optim.LBFGS``.

    One :meth:`step` runs up to ``max_iter`` iterations. Each turns the
    gradient into a search direction with an estimate of the inverse Hessian
    built from the last ``history_size`` parameter steps and gradient changes,
    then moves along it: by ``lr`` (the very first step scaled down to at most
    ``lr / sum(|grad|)``), or by the step a strong-Wolfe line search finds.

    .. warning::
        The parameters are optimized as one vector: only one parameter group
        is allowed, and all parameters must be on the same device.

    .. note::
        The history takes about ``history_size + 1`` times the parameters'
        memory; lower ``history_size`` if that is too much.

    Args:
        params (iterable): the tensors to optimize (real, floating point).
        lr (float or Tensor, optional): step length (default: 1).
        max_iter (int, optional): most iterations per ``step`` (default: 20).
        max_eval (int, optional): most closure calls per ``step``
            (default: ``max_iter * 5 // 4``).
        tolerance_grad (float, optional): stop once every gradient entry is at
            most this in absolute value (default: 1e-7).
        tolerance_change (float, optional): stop once the loss, or the step
            taken, changes by less than this (default: 1e-9).
        history_size (int, optional): how many step/gradient-change pairs are
            remembered (default: 100).
        line_search_fn (str, optional): ``None`` (fixed steps) or
            ``'strong_wolfe'`` (default: None).

    The state is global but kept, as in PyTorch, under the first parameter:
    ``func_evals`` and ``n_iter`` (running counts), ``d`` (last direction),
    ``t`` (last step length), ``old_dirs``, ``old_stps``, ``ro`` (the
    history: gradient changes, steps, reciprocal curvatures), ``H_diag``,
    ``prev_flat_grad``, ``prev_loss`` and, from the second iteration, ``al``.
    """

    # The state's tensors are flat vectors of all parameters, not shaped like the first one.
    _elementwise_state = False

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        _check_lr(lr)
        defaults = dict(lr=lr, max_iter=max_iter,
                        max_eval=max_iter * 5 // 4 if max_eval is None else max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._size = None

    # -------------------------------------------------- the flat parameter vector
    def _flat_grad(self):
        """All gradients as one new vector (zeros for a parameter without one)."""
        pieces = [p.grad.reshape(-1) if p.grad is not None else
                  creation.zeros(p.numel(), dtype=p.dtype, device=p.device)
                  for p in self._params]
        return joining.cat(pieces, 0)

    def _move(self, t, direction):
        """Parameters += ``t * direction``."""
        if self._size is None:
            self._size = sum(p.numel() for p in self._params)
        start = 0
        for p in self._params:
            end = start + p.numel()
            p.add_(direction[start:end].view(p.shape) * t)
            start = end
        if start != self._size:
            raise AssertionError(f"Expected offset {start} to equal {self._size}")

    def _evaluate(self, closure):
        """Loss (a float) and flat gradient at the current parameters."""
        with grad_mode.enable_grad():
            loss = _as_float(closure())
        return loss, self._flat_grad()

    def _evaluate_along(self, closure, origin, t, direction):
        """Loss and gradient at ``origin + t * direction``; the parameters are then
        put back to ``origin`` (copies of them)."""
        self._move(t, direction)
        loss, grad = self._evaluate(closure)
        for p, saved in zip(self._params, origin):
            p.copy_(saved)
        return loss, grad

    # ------------------------------------------------------------------ step
    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations.

        Args:
            closure (Callable): clears the gradients, computes the loss, calls
                ``backward`` on it and returns it. It is called with gradients
                enabled, possibly several times.

        Returns:
            the loss the first call of ``closure`` returned.
        """
        if len(self.param_groups) != 1:
            raise AssertionError(
                f"Expected exactly one param_group, but got {len(self.param_groups)}")
        with grad_mode.no_grad():
            return self._iterate(closure)

    def _iterate(self, closure):
        group = self.param_groups[0]
        lr = _value(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        line_search_fn = group["line_search_fn"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with grad_mode.enable_grad():
            first_loss = closure()
        loss, grad = _as_float(first_loss), self._flat_grad()
        evals = 1
        state["func_evals"] += 1
        if grad.abs().max() <= tolerance_grad:  # already stationary
            return first_loss

        # Carried over from the previous step (None on the first).
        d, t = state.get("d"), state.get("t")
        ys_list, ss_list, rhos = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag = state.get("H_diag")
        last_grad, last_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        for it in range(1, max_iter + 1):
            state["n_iter"] += 1
            first_ever = state["n_iter"] == 1
            if first_ever:
                ys_list, ss_list, rhos, h_diag = [], [], [], 1
                d = grad.neg()
            else:
                change, taken = grad.sub(last_grad), d.mul(t)
                curvature = change.dot(taken)
                if curvature > _MIN_CURVATURE:
                    if len(ys_list) == history_size:  # forget the oldest pair
                        del ys_list[0], ss_list[0], rhos[0]
                    ys_list.append(change)
                    ss_list.append(taken)
                    rhos.append(1.0 / curvature)
                    h_diag = curvature / change.dot(change)
                if "al" not in state:
                    state["al"] = [None] * history_size
                d = _search_direction(grad, ss_list, ys_list, rhos, state["al"], h_diag)

            if last_grad is None:
                last_grad = grad.clone()
            else:
                last_grad.copy_(grad)
            last_loss = loss

            t = min(1.0, 1.0 / grad.abs().sum()) * lr if first_ever else lr
            slope = grad.dot(d)
            if slope > -tolerance_change:  # d is not a descent direction (any more)
                break

            if line_search_fn is None:
                self._move(t, d)
                stationary = False
                used = 0
                # The last iteration's loss would not be looked at: not evaluated.
                if it != max_iter:
                    loss, grad = self._evaluate(closure)
                    stationary = grad.abs().max() <= tolerance_grad
                    used = 1
            elif line_search_fn == "strong_wolfe":
                origin = [p.clone() for p in self._params]
                found, used = _strong_wolfe(
                    lambda step: self._evaluate_along(closure, origin, step, d), d,
                    _Trial(0, loss, grad, slope), t, max_eval - evals)
                loss, grad, t = found.f, found.g, found.t
                self._move(t, d)
                stationary = grad.abs().max() <= tolerance_grad
            else:
                raise RuntimeError("only 'strong_wolfe' is supported")
            evals += used
            state["func_evals"] += used

            if it == max_iter or evals >= max_eval or stationary:
                break
            if d.mul(t).abs().max() <= tolerance_change:  # the step barely moved
                break
            if abs(loss - last_loss) < tolerance_change:  # the loss barely moved
                break

        state.update(d=d, t=t, old_dirs=ys_list, old_stps=ss_list, ro=rhos, H_diag=h_diag,
                     prev_flat_grad=last_grad, prev_loss=last_loss)
        return first_loss
