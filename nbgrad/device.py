"""Device objects, named as in PyTorch."""


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        if not isinstance(type, str):
            if isinstance(type, int):  # an index alone means the current accelerator
                raise RuntimeError("Cannot access accelerator device when none is available.")
            raise TypeError(f"device() received an invalid argument of type {type.__class__.__name__}")
        if ":" in type:
            string = type
            type, _, number = type.partition(":")
            if not number.isdigit() or (len(number) > 1 and number[0] == "0"):
                raise RuntimeError(f"Invalid device string: '{string}'")
            index = int(number)
        if type not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {type}")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = type
        self.index = index

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"
