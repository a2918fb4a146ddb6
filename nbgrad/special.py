"""``nbgrad.special``: PyTorch's ``torch.special`` namespace, as far as nbgrad
has it: the special functions that are rows of the op table (``expit``,
``logit``, ``erf``, ``erfc``, ``erfinv``, ``gammaln``, ``digamma``/``psi``,
``polygamma``, ``xlogy``, ``xlog1py``, ``entr``, ``sinc``, ...), composites
(``ndtr``, ``multigammaln``) and the reductions PyTorch repeats here
(``softmax``, ``log_softmax``, ``logsumexp``). Not yet: the Bessel functions
(``i0``, ``i0e``, ``i1``, ``i1e`` and the rest), ``erfcx``, ``ndtri``,
``log_ndtr``, ``zeta`` and the orthogonal polynomials."""
from .declarations.op_table import BY_NAME
from .ops.pointwise import logit, round, special_polygamma as polygamma
from .ops.registry import FUNCTIONS
from .ops.special_functions import mvlgamma as multigammaln, ndtr

expit = BY_NAME["sigmoid"]
erf, erfc, erfinv = BY_NAME["erf"], BY_NAME["erfc"], BY_NAME["erfinv"]
exp2, expm1, log1p = BY_NAME["exp2"], BY_NAME["expm1"], BY_NAME["log1p"]
gammaln, digamma, psi = BY_NAME["lgamma"], BY_NAME["digamma"], BY_NAME["digamma"]
sinc, xlogy = BY_NAME["sinc"], BY_NAME["xlogy"]
xlog1py, entr = BY_NAME["xlog1py"], BY_NAME["entr"]
softmax, log_softmax, logsumexp = (FUNCTIONS["softmax"], FUNCTIONS["log_softmax"],
                                   FUNCTIONS["logsumexp"])

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln",
           "log1p", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "polygamma",
           "psi", "round", "sinc", "softmax", "xlog1py", "xlogy"]
