"""Broadcast shapes, with PyTorch's error message."""


def broadcast_shapes(*shapes):
    if len(shapes) == 1:
        return tuple(shapes[0])
    result = list(shapes[0])
    for shape in shapes[1:]:
        if tuple(shape) == tuple(result):
            continue
        ndim = max(len(result), len(shape))
        a = [1] * (ndim - len(result)) + list(result)
        b = [1] * (ndim - len(shape)) + list(shape)
        for k in reversed(range(ndim)):  # PyTorch reports the last mismatching dim
            if a[k] != b[k] and a[k] != 1 and b[k] != 1:
                raise RuntimeError(
                    f"The size of tensor a ({a[k]}) must match the size of tensor b ({b[k]}) "
                    f"at non-singleton dimension {k}")
        result = [x if y == 1 else y for x, y in zip(a, b)]
    return tuple(result)
