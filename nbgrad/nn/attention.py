"""``F.scaled_dot_product_attention`` and ``MultiheadAttention``, as PyTorch's
(parameter names, initialisation, mask conventions, returned weights).

Both are compositions of differentiable ops (batched products, a fused
softmax, selects for masks), so they run on every device and can be
differentiated to any order.
"""
import math
import warnings

import numpy as np

from .. import creation, dtypes
from ..ops.registry import FUNCTIONS
from ..tensor import Tensor
from . import functional as F
from . import init
from .linear import Linear
from .module import Module
from .parameter import Parameter


def _neg_inf_where(mask, dtype, device):
    """A boolean mask (True: masked out) as a float mask of 0 and -inf."""
    zeros = creation.zeros(*mask.shape, dtype=dtype, device=device)
    return zeros.masked_fill(mask, float("-inf"))


def _all_masked_rows(mask):
    """Where every key of a query row is masked (a float mask of -inf): those
    rows' attention is zero (PyTorch's fused kernels), not NaN; None when
    there are none (decided on the host)."""
    host = mask._backend.to_numpy(mask._data)
    rows = np.all(np.isneginf(host), axis=-1, keepdims=True)
    if not rows.any():
        return None
    return Tensor._wrap(mask._backend.asarray(rows), dtypes.bool_, mask._backend)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two
    dimensions; a boolean ``attn_mask`` says where attention is allowed."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' must be Tensor, "
                            f"not {type(t).__name__}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if query.dtype is not key.dtype or query.dtype is not value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {query.dtype} key.dtype: {key.dtype} and value.dtype: "
                           f"{value.dtype} instead.")
    length, source = query.shape[-2], key.shape[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = (query * scale) @ key.transpose(-2, -1)
    mask = None
    if is_causal:
        allowed = np.tril(np.ones((length, source), dtype=bool))
        mask = _neg_inf_where(creation.tensor(~allowed, device=query.device), query.dtype,
                              query.device)
    elif attn_mask is not None:
        if attn_mask.dtype is dtypes.bool_:
            mask = _neg_inf_where(attn_mask.logical_not(), query.dtype, query.device)
        else:
            mask = attn_mask
    empty = None
    if mask is not None:
        empty = _all_masked_rows(mask)
        if empty is not None:  # finite scores there (no NaN forward or backward), zeroed below
            mask = mask.masked_fill(empty, 0.0)
        scores = scores + mask
    attn = scores.softmax(-1)
    if empty is not None:
        attn = attn.masked_fill(empty, 0.0)
    if dropout_p > 0.0:
        attn = F.dropout(attn, dropout_p, True)
    return attn @ value


def _canonical_mask(mask, name, other_type, other_name, target_dtype, check_other=True):
    """PyTorch's ``F._canonical_mask``: a boolean mask (True: not allowed) as
    a float mask of -inf; float masks as they are."""
    if mask is None:
        return None
    if mask.dtype is not dtypes.bool_ and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same "
                      "type for both instead.", stacklevel=4)
    if mask.dtype is dtypes.bool_:
        return _neg_inf_where(mask, target_dtype, mask.device)
    return mask


class NonDynamicallyQuantizableLinear(Linear):
    """``MultiheadAttention.out_proj``: a Linear under PyTorch's name."""


class MultiheadAttention(Module):
    """Multi-head attention, as ``torch.nn.MultiheadAttention``."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def new(*shape):
            return Parameter(creation.empty(*shape, dtype=dtype, device=device))
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = new(embed_dim, embed_dim)
            self.k_proj_weight = new(embed_dim, self.kdim)
            self.v_proj_weight = new(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = new(3 * embed_dim, embed_dim)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = new(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = new(1, 1, embed_dim)
            self.bias_v = new(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        if attn_mask is not None and is_causal:
            is_causal = False  # (a hint: the mask is used)
        elif is_causal:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                               "Transformer module method `generate_square_subsequent_mask` to "
                               "create this mask.")
        batched = query.ndim == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        out, weights = self._attention(query, key, value, key_padding_mask, need_weights,
                                       attn_mask, average_attn_weights)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(1)
            if weights is not None:
                weights = weights.squeeze(0)
        return out, weights

    def _attention(self, query, key, value, key_padding_mask, need_weights, attn_mask,
                   average_attn_weights):
        """PyTorch's ``multi_head_attention_forward`` on (L, N, E) inputs."""
        length, batch, embed = query.shape
        heads, head_dim = self.num_heads, self.head_dim
        if embed != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but "
                                 f"got {embed}")
        key_padding_mask = _canonical_mask(
            key_padding_mask, "key_padding_mask",
            None if attn_mask is None else attn_mask.dtype, "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        e = embed
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            b = self.in_proj_bias
            if query is key and key is value:
                q, k, v = F.linear(query, w, b).chunk(3, -1)
            else:
                wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
                bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
                q, k, v = F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)
        else:
            b = self.in_proj_bias
            bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
            q = F.linear(query, self.q_proj_weight, bq)
            k = F.linear(key, self.k_proj_weight, bk)
            v = F.linear(value, self.v_proj_weight, bv)
        if attn_mask is not None:
            if attn_mask.ndim == 2:
                if tuple(attn_mask.shape) != (length, key.shape[0]):
                    raise RuntimeError(f"The shape of the 2D attn_mask is "
                                       f"nbgrad.Size({list(attn_mask.shape)}), but should be "
                                       f"{(length, key.shape[0])}.")
                attn_mask = attn_mask.unsqueeze(0)
            elif attn_mask.ndim == 3:
                want = (batch * heads, length, key.shape[0])
                if tuple(attn_mask.shape) != want:
                    raise RuntimeError(f"The shape of the 3D attn_mask is "
                                       f"nbgrad.Size({list(attn_mask.shape)}), but should be "
                                       f"{want}.")
            else:
                raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
        cat = FUNCTIONS["cat"]  # as bound: with its tangent rule (forward mode)
        if self.bias_k is not None:
            k = cat([k, self.bias_k.expand(1, batch, e)], 0)
            v = cat([v, self.bias_v.expand(1, batch, e)], 0)
            if attn_mask is not None:
                attn_mask = F.pad(attn_mask, (0, 1))
            if key_padding_mask is not None:
                key_padding_mask = F.pad(key_padding_mask, (0, 1))
        # (L, N, E) -> (N*H, L, hd)
        q = q.reshape(length, batch * heads, head_dim).transpose(0, 1)
        k = k.reshape(k.shape[0], batch * heads, head_dim).transpose(0, 1)
        v = v.reshape(v.shape[0], batch * heads, head_dim).transpose(0, 1)
        if self.add_zero_attn:
            k = cat([k, creation.zeros(batch * heads, 1, head_dim, dtype=k.dtype,
                                       device=k.device)], 1)
            v = cat([v, creation.zeros(batch * heads, 1, head_dim, dtype=v.dtype,
                                       device=v.device)], 1)
            if attn_mask is not None:
                attn_mask = F.pad(attn_mask, (0, 1))
            if key_padding_mask is not None:
                key_padding_mask = F.pad(key_padding_mask, (0, 1))
        source = k.shape[1]
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (batch, source):
                raise AssertionError(f"expecting key_padding_mask shape of {(batch, source)}, "
                                     f"but got nbgrad.Size({list(key_padding_mask.shape)})")
            kpm = key_padding_mask.reshape(batch, 1, 1, source).expand(
                batch, heads, 1, source).reshape(batch * heads, 1, source)
            attn_mask = kpm if attn_mask is None else attn_mask + kpm
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            scores = (q * (1.0 / math.sqrt(head_dim))) @ k.transpose(-2, -1)
            if attn_mask is not None:
                scores = scores + attn_mask
            weights = scores.softmax(-1)
            if dropout_p > 0.0:
                weights = F.dropout(weights, dropout_p, True)
            out = weights @ v  # (N*H, L, hd)
        else:
            if attn_mask is not None:
                attn_mask = attn_mask.reshape(batch, heads, -1, source) if attn_mask.shape[0] \
                    != 1 else attn_mask.unsqueeze(0)
            out = scaled_dot_product_attention(q.reshape(batch, heads, length, head_dim),
                                               k.reshape(batch, heads, source, head_dim),
                                               v.reshape(batch, heads, source, head_dim),
                                               attn_mask, dropout_p)
            weights = None
        out = out.reshape(batch, heads, length, head_dim).permute(2, 0, 1, 3).reshape(
            length * batch, e)
        out = F.linear(out, self.out_proj.weight, self.out_proj.bias).reshape(length, batch, e)
        if weights is not None:
            weights = weights.reshape(batch, heads, length, source)
            if average_attn_weights:
                weights = weights.mean(1)
        return out, weights


__all__ = ["scaled_dot_product_attention", "MultiheadAttention"]
