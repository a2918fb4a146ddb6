"""Neural network layers, losses and the Module system, as ``torch.nn``."""
from . import functional, init
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv2d
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module
from .parameter import Parameter
from .pooling import AvgPool2d, MaxPool2d

__all__ = ["Module", "Parameter", "Linear", "Identity", "Conv2d", "MaxPool2d", "AvgPool2d",
           "Flatten", "Unflatten", "ReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "LogSoftmax",
           "Dropout", "Sequential", "ModuleList", "ModuleDict", "MSELoss", "NLLLoss",
           "CrossEntropyLoss", "BCEWithLogitsLoss", "functional", "init"]

# -- containers and utilities (issue 16, item 6)
from . import utils  # noqa: E402
from .container import ParameterDict, ParameterList  # noqa: E402
from .parameter import Buffer  # noqa: E402

__all__ += ["ParameterList", "ParameterDict", "Buffer", "utils"]

# -- convolution, pooling, padding, resampling (issue 16, item 3)
from .conv import Conv1d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: E402
from .fold import Fold, Unfold  # noqa: E402
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,  # noqa: E402
                      ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: E402
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d,  # noqa: E402
                      AdaptiveMaxPool2d, AvgPool1d, MaxPool1d)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: E402

__all__ += ["Conv1d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Fold", "Unfold", "CircularPad1d",
            "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
            "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
            "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
            "PixelShuffle", "PixelUnshuffle", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
            "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AvgPool1d", "MaxPool1d", "Upsample",
            "UpsamplingBilinear2d", "UpsamplingNearest2d"]

# -- issue 16 items 1, 2, 5: normalization, embedding, activations, losses
from .activation import (CELU, ELU, GLU, SELU, Hardsigmoid, Hardswish, Hardtanh,  # noqa: E402
                         LeakyReLU, LogSigmoid, Mish, PReLU, ReLU6, SiLU, Softmax2d, Softmin,
                         Softplus, Softsign, Tanhshrink, Threshold)
from .embedding import Embedding, EmbeddingBag  # noqa: E402
from .loss import (BCELoss, CosineEmbeddingLoss, CTCLoss, GaussianNLLLoss, HuberLoss,  # noqa: E402
                   HingeEmbeddingLoss, KLDivLoss, L1Loss, MarginRankingLoss,
                   MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
                   PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss,
                   TripletMarginWithDistanceLoss)
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm,  # noqa: E402
                            InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LayerNorm,
                            LocalResponseNorm, RMSNorm)

__all__ += ["SiLU", "LeakyReLU", "ELU", "SELU", "CELU", "Softplus", "Softsign", "Hardtanh",
            "ReLU6", "Hardsigmoid", "Hardswish", "Mish", "PReLU", "Tanhshrink", "Threshold",
            "GLU", "LogSigmoid", "Softmin", "Softmax2d", "Embedding", "EmbeddingBag",
            "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
            "InstanceNorm3d", "LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "L1Loss",
            "SmoothL1Loss", "HuberLoss", "BCELoss", "KLDivLoss", "PoissonNLLLoss",
            "GaussianNLLLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "TripletMarginLoss",
            "MultiLabelSoftMarginLoss", "CTCLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
            "MultiMarginLoss", "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss"]

# -- recurrent and attention layers (issue 16, item 4)
from .attention import MultiheadAttention  # noqa: E402
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: E402
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: E402
                          TransformerEncoder, TransformerEncoderLayer)

__all__ += ["MultiheadAttention", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell",
            "LSTMCell", "GRUCell", "Transformer", "TransformerEncoder", "TransformerDecoder",
            "TransformerEncoderLayer", "TransformerDecoderLayer"]

from .distance import CosineSimilarity, PairwiseDistance  # noqa: E402

__all__ += ["CosineSimilarity", "PairwiseDistance"]

from . import parallel  # noqa: E402,F401  (DistributedDataParallel)

# -- 3-D pooling (issue 16, item 3)
from .pooling import (AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, LPPool1d,  # noqa: E402
                      LPPool2d, LPPool3d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)

__all__ += ["MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "MaxUnpool1d",
            "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d"]

# -- everyday pieces (issue 16 breadth): dropout family, shrink/RReLU, Bilinear, lazy layers
from .activation_extra import Hardshrink, RReLU, Softshrink  # noqa: E402
from .bilinear import Bilinear, ChannelShuffle  # noqa: E402
from .dropout import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa
from .lazy import (LazyConv1d, LazyConv2d, LazyLinear, UninitializedBuffer,  # noqa: E402
                   UninitializedParameter)

__all__ += ["Hardshrink", "Softshrink", "RReLU", "Bilinear", "ChannelShuffle", "AlphaDropout",
            "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout", "LazyLinear",
            "LazyConv1d", "LazyConv2d", "UninitializedParameter", "UninitializedBuffer"]
