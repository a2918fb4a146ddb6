"""``nbgrad.save`` / ``nbgrad.load``: tensors and containers of them, safely.

The file is a NumPy ``.npz`` archive: one array per distinct tensor, plus a
``__manifest__`` entry holding JSON that describes the object. Only tensors,
dicts (str/int/float/bool/None keys), lists, tuples, strings, numbers, bools
and None are stored; nothing is pickled, and ``load`` reads the archive with
``allow_pickle=False``, so loading an untrusted file cannot run code.
"""
import collections
import json
import math
import numbers
import os
import zipfile
import zlib

import numpy as np

from . import cuda, dtypes
from .device import device as Device
from .tensor import Tensor

FORMAT = "nbgrad.save"
VERSION = 1
_MANIFEST = "__manifest__"


_MAX_DEPTH = 200  # containers nested deeper than this are refused (no RecursionError)


class UnsafeContentError(ValueError):
    """Raised by ``load`` for files that are not nbgrad archives or that ask
    for anything but plain data."""


class CorruptArchiveError(UnsafeContentError, RuntimeError):
    """Raised by ``load`` for an nbgrad archive whose contents are damaged (a
    RuntimeError, as PyTorch's "PytorchStreamReader failed reading zip archive")."""


_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError)  # a damaged member


def _damaged(what, error):
    return CorruptArchiveError(f"nbgrad.load: failed reading {what} of the archive ({error}); "
                               "the file is probably corrupted")


def _encode_number(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    value = float(value)
    if math.isfinite(value):
        return value
    return {"__float__": repr(value)}  # nan, inf, -inf: not JSON


class _Writer:
    def __init__(self):
        self.arrays = {}
        self.seen = {}  # id(tensor) -> array name: a tensor stored twice is stored once

    def encode(self, obj, path="obj", depth=0):
        if depth > _MAX_DEPTH:
            raise RuntimeError(f"nbgrad.save: the object is nested more than {_MAX_DEPTH} levels "
                               "deep (containers inside containers)")
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, Tensor):
            return self.tensor(obj)
        if isinstance(obj, (numbers.Integral, numbers.Real)) and not isinstance(obj, np.ndarray):
            return _encode_number(obj)
        if isinstance(obj, dict):
            items = []
            for key, value in obj.items():
                if not (key is None or isinstance(key, (str, bool, np.bool_, numbers.Real))):
                    raise TypeError(f"nbgrad.save: dict keys must be str, int, float, bool or None; "
                                    f"{path} has a key of type {type(key).__name__}")
                items.append([self.encode(key, f"{path} key", depth + 1),
                              self.encode(value, f"{path}[{key!r}]", depth + 1)])
            kind = "ordered_dict" if isinstance(obj, collections.OrderedDict) else "dict"
            return {"__" + kind + "__": items}
        if isinstance(obj, tuple):
            return {"__tuple__": [self.encode(v, f"{path}[{i}]", depth + 1)
                                  for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return [self.encode(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(obj)]
        raise TypeError(f"nbgrad.save cannot store {path} of type {type(obj).__module__}."
                        f"{type(obj).__qualname__}: only tensors, dicts, lists, tuples, strings, "
                        "numbers, bools and None are saved (nothing is pickled)")

    def tensor(self, t):
        from .nn.parameter import Parameter

        name = self.seen.get(id(t))
        if name is None:
            name = self.seen[id(t)] = f"t{len(self.seen)}"
            self.arrays[name] = np.array(t.detach().cpu().numpy(), order="C")
        return {"__tensor__": name, "dtype": t.dtype.name, "requires_grad": bool(t.requires_grad),
                "parameter": isinstance(t, Parameter), "device": str(t.device)}


def save(obj, f):
    """Save ``obj`` to ``f`` (a path or a binary file object)."""
    writer = _Writer()
    manifest = {"format": FORMAT, "version": VERSION, "object": writer.encode(obj)}
    text = json.dumps(manifest, allow_nan=False).encode("utf-8")
    arrays = dict(writer.arrays)
    arrays[_MANIFEST] = np.frombuffer(text, dtype=np.uint8)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as handle:  # an open file: np.savez would append ".npz" to a path
            np.savez(handle, **arrays)
    else:
        np.savez(f, **arrays)


def _check_header(archive, name):
    """Refuse a member whose header claims more data than the member holds,
    before NumPy allocates that much (a header may claim 2**40 elements)."""
    member = name + ".npy"
    try:
        info = archive.zip.getinfo(member)
        with archive.zip.open(member) as handle:
            version = np.lib.format.read_magic(handle)
            read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                    else np.lib.format.read_array_header_2_0)
            shape, _, dtype = read(handle)
    except _READ_ERRORS as error:
        raise _damaged(f"array {name!r}", error) from None
    except (ValueError, KeyError):
        return  # not a .npy member, or not a valid header: NumPy's own reading refuses it
    nbytes = dtype.itemsize
    for n in shape:
        nbytes *= n
    if nbytes > info.file_size:
        raise CorruptArchiveError(f"nbgrad.load: array {name!r} claims shape {shape} ({nbytes} "
                                  f"bytes) but its archive member holds only {info.file_size} "
                                  "bytes; the file is corrupted")


class _Reader:
    def __init__(self, archive, map_location):
        self.archive = archive
        self.map_location = map_location
        self.loaded = {}

    def decode(self, node, depth=0):
        if node is None or isinstance(node, (bool, str, int, float)):
            return node
        if depth > _MAX_DEPTH:
            raise UnsafeContentError(f"nbgrad.load: the manifest nests more than {_MAX_DEPTH} "
                                     "levels deep")
        depth += 1
        if isinstance(node, list):
            return [self.decode(v, depth) for v in node]
        if not isinstance(node, dict) or len(node) == 0:
            raise UnsafeContentError(f"nbgrad.load: unexpected manifest entry {node!r}")
        if "__tensor__" in node:
            return self.tensor(node)
        if len(node) != 1:
            raise UnsafeContentError(f"nbgrad.load: unexpected manifest entry {node!r}")
        (tag, value), = node.items()
        if tag == "__float__":
            if value not in ("nan", "inf", "-inf"):
                raise UnsafeContentError(f"nbgrad.load: bad float {value!r}")
            return float(value)
        if tag == "__tuple__":
            return tuple(self.decode(v, depth) for v in value)
        if tag in ("__dict__", "__ordered_dict__"):
            out = collections.OrderedDict() if tag == "__ordered_dict__" else {}
            for item in value:
                if not isinstance(item, list) or len(item) != 2:
                    raise UnsafeContentError("nbgrad.load: malformed dict entry")
                key = item[0]
                if isinstance(key, dict):
                    key = self.decode(key, depth)
                if not (key is None or isinstance(key, (str, bool, int, float))):
                    raise UnsafeContentError(f"nbgrad.load: bad dict key {key!r}")
                out[key] = self.decode(item[1], depth)
            return out
        raise UnsafeContentError(f"nbgrad.load: unknown manifest tag {tag!r}")

    def tensor(self, node):
        from .nn.parameter import Parameter

        name = node["__tensor__"]
        cached = self.loaded.get(name)
        if cached is not None:
            return cached
        if not isinstance(name, str) or name == _MANIFEST or name not in self.archive.files:
            raise UnsafeContentError(f"nbgrad.load: the manifest names a missing array {name!r}")
        _check_header(self.archive, name)
        try:
            array = self.archive[name]  # allow_pickle=False: an object array raises here
        except _READ_ERRORS as error:
            raise _damaged(f"array {name!r}", error) from None
        if not isinstance(array, np.ndarray):  # a member that is not an .npy array
            raise UnsafeContentError(f"nbgrad.load: array {name!r} is not a NumPy array")
        dtype = dtypes.from_numpy_dtype(array.dtype)
        if node.get("dtype") != dtype.name:
            raise UnsafeContentError(f"nbgrad.load: array {name!r} has dtype {dtype.name}, the "
                                     f"manifest says {node.get('dtype')!r}")
        t = Tensor._wrap(np.array(array, copy=True), dtype)
        target = self._device(node) if self.map_location is None else Device(self.map_location)
        if target.type != "cpu":
            t = t.to(target)
        if node.get("parameter"):
            t = Parameter(t, requires_grad=bool(node.get("requires_grad")))
        elif node.get("requires_grad"):
            t.requires_grad_(True)
        self.loaded[name] = t
        return t


    @staticmethod
    def _device(node):
        """The device a tensor was saved from, where it is loaded back (as PyTorch)."""
        saved = node.get("device", "cpu")
        try:
            device = Device(saved)
        except (RuntimeError, TypeError):
            raise UnsafeContentError(f"nbgrad.load: bad device {saved!r}") from None
        if device.type == "cuda" and not cuda.is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but nbgrad.cuda.is_available() "
                "is False. If you are running on a CPU-only machine, please use nbgrad.load with "
                "map_location=nbgrad.device('cpu') to map your storages to the CPU.")
        return device


def load(f, map_location=None, weights_only=True):
    """Load an object written by ``save``. Only plain data is ever created."""
    if not weights_only:
        raise ValueError("nbgrad.load only loads plain data (weights_only=True)")
    try:
        archive = np.load(f, allow_pickle=False)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise  # as PyTorch: the path itself is wrong
    except ValueError as error:  # a pickle file, or an .npy holding objects
        raise UnsafeContentError(f"nbgrad.load: not an nbgrad archive ({error})") from None
    except (zipfile.BadZipFile, EOFError) as error:  # truncated or damaged: RuntimeError too
        raise CorruptArchiveError(f"nbgrad.load: not an nbgrad archive, or a corrupted one "
                                  f"({error})") from None
    except OSError as error:
        raise UnsafeContentError(f"nbgrad.load: not an nbgrad archive ({error})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise UnsafeContentError("nbgrad.load: not an nbgrad archive (a bare .npy array)")
    with archive:
        if _MANIFEST not in archive.files:
            raise UnsafeContentError("nbgrad.load: not an nbgrad archive (no manifest)")
        _check_header(archive, _MANIFEST)
        try:
            raw = archive[_MANIFEST]
        except _READ_ERRORS as error:
            raise _damaged("the manifest", error) from None
        except ValueError as error:
            raise UnsafeContentError(f"nbgrad.load: unsafe manifest ({error})") from None
        if not isinstance(raw, np.ndarray) or raw.dtype != np.uint8 or raw.ndim != 1:
            raise UnsafeContentError("nbgrad.load: malformed manifest")
        try:
            manifest = json.loads(raw.tobytes().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
            raise UnsafeContentError(f"nbgrad.load: malformed manifest ({error})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise UnsafeContentError("nbgrad.load: not an nbgrad archive (wrong format tag)")
        if manifest.get("version") != VERSION:
            raise UnsafeContentError(f"nbgrad.load: unsupported format version "
                                     f"{manifest.get('version')!r}")
        try:
            return _Reader(archive, map_location).decode(manifest.get("object"))
        except ValueError as error:
            if isinstance(error, UnsafeContentError):
                raise
            raise UnsafeContentError(f"nbgrad.load: unsafe content ({error})") from None


__all__ = ["save", "load", "UnsafeContentError", "CorruptArchiveError"]
