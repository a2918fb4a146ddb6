"""What DataLoader worker processes run: ``get_worker_info``, the worker loop,
and how tensors cross between processes (``multiprocessing``'s pickler is
taught to send a tensor as its values, dtype, device and requires_grad)."""
import multiprocessing.reduction
import queue
import random
import sys
import traceback

import numpy as np

from ...tensor import Tensor


class WorkerInfo:
    """Inside a worker: ``id``, ``num_workers``, ``seed`` and ``dataset`` (the
    worker's copy). Read-only, as PyTorch's."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


_worker_info = None


def get_worker_info():
    """get_worker_info() -> WorkerInfo or None

    In a DataLoader worker process, its ``WorkerInfo`` (``id``, ``num_workers``,
    ``seed``, ``dataset``); in the main process None. An ``IterableDataset``
    uses it to give each worker its share of the data."""
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, with its traceback as text, re-raised
    in the main process as PyTorch does."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # an exception type whose constructor takes other arguments
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    """A KeyError's message printed without the quotes ``repr`` adds."""

    def __repr__(self):
        return self


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to a persistent worker at the start of an epoch."""

    def __init__(self, seed=None):
        self.seed = seed


def _rebuild_tensor(array, device, requires_grad):
    from ... import creation
    t = creation.from_numpy(array)
    if device != "cpu":
        t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce_tensor(t):
    array = np.ascontiguousarray(t.detach().cpu().numpy())
    return _rebuild_tensor, (array, t.device.type, t.requires_grad)


multiprocessing.reduction.ForkingPickler.register(Tensor, _reduce_tensor)


def _seed_everything(seed):
    import nbgrad
    random.seed(seed)
    nbgrad.manual_seed(seed)
    np.random.seed(seed % 2 ** 32)


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, auto_collation, collate_fn,
                 drop_last, base_seed, init_fn, worker_id, num_workers):
    """Fetch what the main process asks for (``(idx, indices)``; None: stop),
    and put ``(idx, data or ExceptionWrapper)`` on ``data_queue``."""
    global _worker_info
    from .dataloader import _DatasetKind
    try:
        seed = base_seed + worker_id
        _seed_everything(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                  collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(
                sys.exc_info(), f"in DataLoader worker process {worker_id}")
        iteration_end = False
        while True:
            try:
                r = index_queue.get(timeout=5.0)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if r.seed is not None:
                    _seed_everything(r.seed + worker_id)
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                      collate_fn, drop_last)
                continue
            if r is None:
                break
            if iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(sys.exc_info(),
                                                f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    data_queue.cancel_join_thread()
    data_queue.close()
