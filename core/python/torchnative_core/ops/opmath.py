"""float16/bfloat16 composites computed in float32 and rounded once, as upstream's kernels are.

Upstream's CPU kernels for these operators widen reduced-precision operands to their "opmath"
type (float32), compute the whole formula there and round the result once (for example
`addcmul` in PointwiseOpsKernel.cpp, `lerp`, `sinc`, the normalisation and upsampling kernels,
which accumulate in float). Ours are compositions of several operators, each of which would round
to the reduced dtype, so without this a composite differs from upstream by several units in the
last place. `install` wraps the listed implementations: when every floating tensor operand has
the same reduced dtype, the operands go to float32, the composite runs, and floating results
come back in that dtype. Which operators belong here was decided by measurement against
upstream's own OpInfo samples (`tools/opinfo_agreement.py record --dtypes reduced`, docs/STATUS.md),
not by guessing: an operator is listed only where upstream's kernel computes in opmath and the
replay agrees with it.
"""

from __future__ import annotations

from . import IMPLS
from . import base as B


REDUCED = {B.T.BY_NAME["float16"], B.T.BY_NAME["bfloat16"]}


OPMATH_COMPOSITES = (
    "addcmul", "addcdiv",
    "lerp.Scalar", "lerp.Tensor",
    "sinc",
    "baddbmm", "linalg_vector_norm", "native_group_norm", "_adaptive_avg_pool2d", "huber_loss",
)


def _reduced_dtype(args, kwargs):
    """The one reduced float dtype shared by every floating tensor operand, else None."""
    seen = set()
    for a in (*args, *kwargs.values()):
        if hasattr(a, "_tn_dtype_code"):
            dt = B.dtype_of(a)
            if dt.is_floating_point:
                seen.add(dt)
    return seen.pop() if len(seen) == 1 and not seen.isdisjoint(REDUCED) else None


def _cast(x, dtype, only=None):
    if hasattr(x, "_tn_dtype_code") and (only is None or B.dtype_of(x) is only):
        return B.call("_to_copy", x, dtype)
    if isinstance(x, (tuple, list)):
        return type(x)(_cast(v, dtype, only) for v in x)
    return x


# Operators whose tensor operands must share one dtype (lerp's meta check): with another dtype
# among them the implementation runs as called, to raise upstream's error naming the dtypes.
SAME_DTYPE = {"lerp.Scalar", "lerp.Tensor"}


def in_opmath(fn, same_dtype=False):
    def wrapped(*args, **kwargs):
        dtype = _reduced_dtype(args, kwargs)
        if dtype is not None and same_dtype and any(
                hasattr(a, "_tn_dtype_code") and B.dtype_of(a) is not dtype for a in args):
            dtype = None
        if dtype is None:
            return fn(*args, **kwargs)
        args = tuple(_cast(a, B.F32, dtype) for a in args)
        kwargs = {k: _cast(v, B.F32, dtype) for k, v in kwargs.items()}
        return _cast(fn(*args, **kwargs), dtype, B.F32)

    wrapped.__name__ = getattr(fn, "__name__", "opmath")
    wrapped.__wrapped__ = fn
    return wrapped


def install() -> None:
    for name in OPMATH_COMPOSITES:
        IMPLS[name] = in_opmath(IMPLS[name], name in SAME_DTYPE)
    from . import reduced_precision as reduced_kernels  # operators that round where upstream's kernels round

    reduced_kernels.install()
