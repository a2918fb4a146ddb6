"""Functional forms of the convolution, pooling, padding, resampling,
recurrent and attention layers of issue 16 (re-exported by
``nbgrad.nn.functional``)."""
from ._poolnd import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
                      adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d, avg_pool1d,
                      max_pool1d)
from ._lppool import lp_pool1d, lp_pool2d, lp_pool3d
from ._poolwindows import avg_pool3d, max_pool3d
from ._unpool import max_unpool1d, max_unpool2d, max_unpool3d
from .fold import fold, unfold
from .padding import pad
from .pixelshuffle import pixel_shuffle, pixel_unshuffle
from .upsampling import interpolate, upsample


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(query @ key^T * scale + mask) @ value``; see ``nn.attention``."""
    from .attention import scaled_dot_product_attention as sdpa  # (it imports functional)
    return sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)

__all__ = ["max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "fold", "unfold", "pad",
           "pixel_shuffle", "pixel_unshuffle", "interpolate", "upsample",
           "scaled_dot_product_attention", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d",
           "adaptive_max_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d",
           "lp_pool2d", "lp_pool3d"]
