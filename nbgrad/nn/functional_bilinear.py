"""``F.bilinear`` and ``F.channel_shuffle``, composed of taped primitives
(matmul, reshape, transpose, multiply, sum) so their gradients, double
backward included, come from those ops."""
from ..tensor import Tensor


def bilinear(input1, input2, weight, bias=None):
    r"""``y = x1^T A x2 + b`` for each output feature.

    Args:
        input1: :math:`(*, H_{in1})`
        input2: :math:`(*, H_{in2})`, the same leading dimensions as ``input1``
        weight: :math:`(H_{out}, H_{in1}, H_{in2})`
        bias: :math:`(H_{out})` or ``None``

    Returns:
        :math:`(*, H_{out})`
    """
    for name, position, value in (("input1", 1, input1), ("input2", 2, input2),
                                  ("weight", 3, weight)):
        if not isinstance(value, Tensor):
            raise TypeError(f"bilinear(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{input1.shape[i]} and {input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    out_f, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # one matmul for x1 against every output's matrix, then a row-wise dot with x2
    t = (x1 @ weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    out = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(lead + (out_f,))


def channel_shuffle(input, groups):
    r"""Split the channels (dim 1) of :math:`(N, C, *)` into ``groups`` and
    interleave them: :math:`(N, g, C/g, *) \to (N, C/g, g, *)`."""
    if not isinstance(input, Tensor):
        raise TypeError(f"channel_shuffle(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    shape = tuple(input.shape)
    split = (shape[0], groups, c // groups) + shape[2:]
    return input.reshape(split).transpose(1, 2).reshape(shape)


native_channel_shuffle = channel_shuffle

__all__ = ["bilinear", "channel_shuffle", "native_channel_shuffle"]
