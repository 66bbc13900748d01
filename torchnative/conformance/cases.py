"""Conformance cases: one operator each, run on a device and compared with upstream on cpu.

A case is ``fn(dev) -> result``: it builds its inputs on the host from exactly representable
numbers (pure Python, so both torches start from the same bits), moves them to `dev`, makes any
strided view ON the device (transpose, slice, expand: views are metadata in the core, so the
device's kernels see the strides), runs the operator there and returns the result still on the
device; runner.py checks the device and brings it back with ``.cpu()``. The oracle runs the same
function with ``dev="cpu"`` under upstream torch 2.13.0.

Importable without torch (the pytest process reads ids, operators and families only).

``op`` is the user-facing operator the case exercises (the unit the "operators that agree"
count uses); ``family`` selects the per-device tolerance in tolerances.py:

    exact      data movement, selection, comparisons, conversions, sign/abs/floor...: bit-exact
    arith      IEEE basic operations (+ - * /): correctly rounded on a conforming CPU (sqrt is
               not: upstream's vectorised sqrt is 1 ulp off the correctly rounded value)
    math       transcendental elementwise (exp, log, tanh, erf, gelu, pow, ...)
    reduction  sums, means, variances, cumulative ops: the order of summation differs
    matmul     mm/bmm/addmm/matmul/linear
    nn         softmax, log_softmax, layer_norm, normalize, attention
"""
import importlib

CASES = {}  # id -> Case, in registration order
FAMILIES = ("exact", "arith", "math", "reduction", "matmul", "nn")


class Case:
    def __init__(self, id, fn, op, family):
        if family not in FAMILIES:
            raise ValueError(f"case {id}: unknown family {family}")
        if id in CASES:
            raise ValueError(f"duplicate case id {id}")
        self.id, self.fn, self.op, self.family = id, fn, op, family


def case(op, family):
    def deco(fn):
        CASES[fn.__name__] = Case(fn.__name__, fn, op, family)
        return fn
    return deco


class _Lazy:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._name), attr)


torch = _Lazy("torch")
F = _Lazy("torch.nn.functional")


# ---- inputs: exactly representable, deterministic, no RNG of either torch -----------------

def _values(n, seed, lo, hi):
    """n multiples of 1/64 in [lo, hi] from a small LCG (exact in float16 and up)."""
    out, s, steps = [], (seed * 2654435761 + 12345) % 2 ** 32, int((hi - lo) * 64)
    for _ in range(n):
        s = (1103515245 * s + 12345) % 2 ** 31
        out.append(lo + (s % (steps + 1)) / 64)
    return out


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def T(*shape, seed=0, lo=-3.0, hi=3.0, dtype=None):
    """A float tensor on the host (float32 unless `dtype`)."""
    return torch.tensor(_values(_numel(shape), seed, lo, hi),
                        dtype=dtype or torch.float32).reshape(shape)


def R(*shape, seed=0):
    """T / 3: not dyadic, so sums and products round and the order of accumulation shows (with
    multiples of 1/64 alone, most sums and matmuls here would be exact in any order)."""
    return T(*shape, seed=seed) / 3


def P(*shape, seed=0):
    """Strictly positive floats (log, sqrt, pow bases)."""
    return T(*shape, seed=seed, lo=0.125, hi=4.0)


def NZ(*shape, seed=0):
    """No zeros: |x| >= 0.25 (divisors)."""
    x = T(*shape, seed=seed)
    return torch.where(x.abs() < 0.25, torch.full_like(x, 0.5), x)


def Ints(*shape, seed=0, lo=-9, hi=9, dtype=None):
    """Integers in [lo, hi] (int64 unless `dtype`)."""
    vals = [int(v * 64) % (hi - lo + 1) + lo for v in _values(_numel(shape), seed, 0, 8)]
    return torch.tensor(vals, dtype=dtype or torch.int64).reshape(shape)


def SPECIAL():
    """nan, +-inf, +-0 and ordinary values."""
    return torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.5, -2.25, 1e30])


# ---- unary elementwise (contiguous; strided variants further down) -------------------------

def _unary(name, op, family, make, fn):
    def run(dev):
        return fn(make().to(dev))
    run.__name__ = name
    case(op, family)(run)


for _name, _op, _fam, _make, _fn in [
    ("abs", "abs", "exact", lambda: T(4, 5), lambda x: x.abs()),
    ("neg", "neg", "exact", lambda: T(4, 5), lambda x: -x),
    ("relu", "relu", "exact", lambda: T(4, 5), lambda x: F.relu(x)),
    ("floor", "floor", "exact", lambda: T(4, 5), lambda x: torch.floor(x)),
    ("ceil", "ceil", "exact", lambda: T(4, 5), lambda x: torch.ceil(x)),
    ("trunc", "trunc", "exact", lambda: T(4, 5), lambda x: torch.trunc(x)),
    ("round", "round", "exact", lambda: T(4, 5) * 1.5, lambda x: torch.round(x)),
    ("sign", "sign", "exact", lambda: T(4, 5), lambda x: torch.sign(x)),
    ("frac", "frac", "arith", lambda: T(4, 5) * 1.7, lambda x: torch.frac(x)),
    ("sqrt", "sqrt", "math", lambda: P(4, 5), lambda x: torch.sqrt(x)),
    ("reciprocal", "reciprocal", "arith", lambda: NZ(4, 5), lambda x: torch.reciprocal(x)),
    ("square", "square", "arith", lambda: T(4, 5), lambda x: torch.square(x)),
    ("rsqrt", "rsqrt", "math", lambda: P(4, 5), lambda x: torch.rsqrt(x)),
    ("exp", "exp", "math", lambda: T(4, 5), lambda x: torch.exp(x)),
    ("exp2", "exp2", "math", lambda: T(4, 5), lambda x: torch.exp2(x)),
    ("expm1", "expm1", "math", lambda: T(4, 5) / 4, lambda x: torch.expm1(x)),
    ("log", "log", "math", lambda: P(4, 5), lambda x: torch.log(x)),
    ("log2", "log2", "math", lambda: P(4, 5), lambda x: torch.log2(x)),
    ("log10", "log10", "math", lambda: P(4, 5), lambda x: torch.log10(x)),
    ("log1p", "log1p", "math", lambda: P(4, 5) / 8, lambda x: torch.log1p(x)),
    ("sin", "sin", "math", lambda: T(4, 5), lambda x: torch.sin(x)),
    ("cos", "cos", "math", lambda: T(4, 5), lambda x: torch.cos(x)),
    ("tan", "tan", "math", lambda: T(4, 5) / 3, lambda x: torch.tan(x)),
    ("asin", "asin", "math", lambda: T(4, 5) / 4, lambda x: torch.asin(x)),
    ("acos", "acos", "math", lambda: T(4, 5) / 4, lambda x: torch.acos(x)),
    ("atan", "atan", "math", lambda: T(4, 5), lambda x: torch.atan(x)),
    ("sinh", "sinh", "math", lambda: T(4, 5), lambda x: torch.sinh(x)),
    ("cosh", "cosh", "math", lambda: T(4, 5), lambda x: torch.cosh(x)),
    ("tanh", "tanh", "math", lambda: T(4, 5), lambda x: torch.tanh(x)),
    ("sigmoid", "sigmoid", "math", lambda: T(4, 5), lambda x: torch.sigmoid(x)),
    ("erf", "erf", "math", lambda: T(4, 5), lambda x: torch.erf(x)),
    ("gelu", "gelu", "math", lambda: T(4, 5), lambda x: F.gelu(x)),
    ("gelu_tanh", "gelu", "math", lambda: T(4, 5), lambda x: F.gelu(x, approximate="tanh")),
    ("silu", "silu", "math", lambda: T(4, 5), lambda x: F.silu(x)),
    ("softplus", "softplus", "math", lambda: T(4, 5), lambda x: F.softplus(x)),
    ("elu", "elu", "math", lambda: T(4, 5), lambda x: F.elu(x)),
    ("leaky_relu", "leaky_relu", "arith", lambda: T(4, 5), lambda x: F.leaky_relu(x, 0.125)),
    ("hardtanh", "hardtanh", "exact", lambda: T(4, 5), lambda x: F.hardtanh(x, -1.0, 1.5)),
    ("isnan", "isnan", "exact", SPECIAL, lambda x: torch.isnan(x)),
    ("isinf", "isinf", "exact", SPECIAL, lambda x: torch.isinf(x)),
    ("isfinite", "isfinite", "exact", SPECIAL, lambda x: torch.isfinite(x)),
    ("nan_to_num", "nan_to_num", "exact", SPECIAL, lambda x: torch.nan_to_num(x, 0.0, 7.0, -7.0)),
    ("logical_not", "logical_not", "exact", lambda: T(4, 5).round(), lambda x: torch.logical_not(x)),
    ("bitwise_not_int", "bitwise_not", "exact", lambda: Ints(4, 5), lambda x: torch.bitwise_not(x)),
]:
    _unary(_name, _op, _fam, _make, _fn)


# ---- strided inputs (views made on the device) ------------------------------------------

@case("exp", "math")
def exp_transposed(dev):
    return T(5, 4).to(dev).t().exp()


@case("abs", "exact")
def abs_sliced(dev):
    return T(4, 10).to(dev)[1:, ::3].abs()


@case("tanh", "math")
def tanh_expanded(dev):
    return T(1, 5).to(dev).expand(3, 5).tanh()


@case("sigmoid", "math")
def sigmoid_permuted_3d(dev):
    return T(2, 3, 4).to(dev).permute(2, 0, 1).sigmoid()


@case("contiguous", "exact")
def contiguous_of_transposed(dev):
    return T(3, 5).to(dev).t().contiguous()


@case("clone", "exact")
def clone_of_slice(dev):
    return T(6, 4).to(dev)[::2, 1:3].clone()


# ---- binary elementwise: broadcasting, scalars, strided operands -------------------------

@case("add", "arith")
def add_same_shape(dev):
    return T(4, 5, seed=1).to(dev) + T(4, 5, seed=2).to(dev)


@case("add", "arith")
def add_broadcast_row(dev):
    return T(4, 5, seed=1).to(dev) + T(5, seed=3).to(dev)


@case("add", "arith")
def add_broadcast_outer(dev):
    return T(4, 1, seed=4).to(dev) + T(1, 5, seed=3).to(dev)


@case("add", "arith")
def add_alpha_and_scalar(dev):
    a, b = T(4, 5, seed=1).to(dev), T(4, 5, seed=2).to(dev)
    return torch.add(a, b, alpha=0.5), a + 2.5


@case("add", "arith")
def add_transposed_operands(dev):
    return T(5, 4, seed=1).to(dev).t() + T(4, 5, seed=2).to(dev)


@case("sub", "arith")
def sub_sliced_and_expanded(dev):
    return T(4, 10, seed=1).to(dev)[:, ::2] - T(1, 5, seed=2).to(dev).expand(4, 5)


@case("mul", "arith")
def mul_broadcast_3d(dev):
    return T(2, 1, 5, seed=1).to(dev) * T(3, 1, seed=2).to(dev)


@case("mul", "arith")
def mul_scalar(dev):
    return T(4, 5).to(dev) * 0.375


@case("div", "arith")
def div_tensor(dev):
    return T(4, 5, seed=1).to(dev) / NZ(4, 5, seed=2).to(dev)


@case("div", "arith")
def div_scalar_and_rounding(dev):
    a, b = T(4, 5, seed=1).to(dev) * 4, NZ(4, 5, seed=2).to(dev)
    return a / 3.0, torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc")


@case("pow", "math")
def pow_tensor_scalar(dev):
    x = P(4, 5).to(dev)
    return x ** 2, x ** 0.5, x ** -1.5


@case("pow", "math")
def pow_tensor_tensor(dev):
    return P(4, 5, seed=1).to(dev) ** T(4, 5, seed=2).to(dev)


@case("maximum", "exact")
def maximum_broadcast(dev):
    return torch.maximum(T(4, 5, seed=1).to(dev), T(5, seed=2).to(dev))


@case("minimum", "exact")
def minimum_nan(dev):
    return torch.minimum(SPECIAL().to(dev), torch.zeros(8).to(dev))


@case("remainder", "arith")
def remainder_float(dev):
    return torch.remainder(T(4, 5, seed=1).to(dev) * 3, NZ(4, 5, seed=2).to(dev))


@case("fmod", "arith")
def fmod_float(dev):
    return torch.fmod(T(4, 5, seed=1).to(dev) * 3, NZ(4, 5, seed=2).to(dev))


@case("atan2", "math")
def atan2(dev):
    return torch.atan2(T(4, 5, seed=1).to(dev), T(4, 5, seed=2).to(dev))


@case("add", "exact")
def int_add_mul(dev):
    a, b = Ints(4, 5, seed=1).to(dev), Ints(4, 5, seed=2).to(dev)
    return a + b, a * b, a - 3


@case("floor_divide", "exact")
def int_floor_divide_remainder(dev):
    a = Ints(4, 5, seed=1).to(dev)
    b = torch.where(Ints(4, 5, seed=2) == 0, 3, Ints(4, 5, seed=2)).to(dev)
    return a // b, a % b


@case("add", "exact")
def int32_add(dev):
    return Ints(3, 4, seed=1, dtype=torch.int32).to(dev) + Ints(3, 4, seed=2, dtype=torch.int32).to(dev)


@case("add_", "arith")
def add_inplace_on_view(dev):
    x = T(4, 6, seed=1).to(dev)
    x[:, 1::2].add_(T(4, 3, seed=2).to(dev))
    return x


@case("mul_", "arith")
def mul_inplace(dev):
    x = T(4, 5, seed=1).to(dev)
    x.mul_(T(5, seed=2).to(dev))
    return x


# ---- comparisons and logical ------------------------------------------------------------

@case("eq", "exact")
def eq_ne(dev):
    a, b = T(4, 5, seed=1).round().to(dev), T(4, 5, seed=2).round().to(dev)
    return a == b, a != b, a == 1.0


@case("lt", "exact")
def lt_le_broadcast(dev):
    a, b = T(4, 5, seed=1).to(dev), T(5, seed=2).to(dev)
    return a < b, a <= b, a < 0.5


@case("gt", "exact")
def gt_ge_transposed(dev):
    a, b = T(5, 4, seed=1).to(dev).t(), T(4, 5, seed=2).to(dev)
    return a > b, a >= b, a >= -1


@case("eq", "exact")
def compare_nan(dev):
    x = SPECIAL().to(dev)
    return x == x, x != x, x < 1.0


@case("eq", "exact")
def compare_int(dev):
    a, b = Ints(4, 5, seed=1).to(dev), Ints(4, 5, seed=2).to(dev)
    return a == b, a < b, a >= 0


@case("logical_and", "exact")
def logical_and_or_xor(dev):
    a, b = (T(4, 5, seed=1) > 0).to(dev), (T(4, 5, seed=2) > 0).to(dev)
    return torch.logical_and(a, b), torch.logical_or(a, b), torch.logical_xor(a, b)


@case("bitwise_and", "exact")
def bitwise_int(dev):
    a, b = Ints(4, 5, seed=1, lo=0, hi=255).to(dev), Ints(4, 5, seed=2, lo=0, hi=255).to(dev)
    return a & b, a | b, a ^ b


@case("where", "exact")
def where_broadcast(dev):
    cond = (T(4, 1, seed=1) > 0).to(dev)
    return torch.where(cond, T(4, 5, seed=2).to(dev), T(5, seed=3).to(dev))


@case("where", "exact")
def where_scalar(dev):
    x = T(4, 5).to(dev)
    return torch.where(x > 0, x, 0.0)


@case("masked_fill", "exact")
def masked_fill(dev):
    x = T(4, 5, seed=1).to(dev)
    return x.masked_fill((T(4, 5, seed=2) > 1).to(dev), -1e9)


@case("clamp", "exact")
def clamp_scalar(dev):
    x = T(4, 5).to(dev)
    return x.clamp(-1.0, 2.0), x.clamp(min=0.5), x.clamp(max=-0.5)


@case("clamp", "exact")
def clamp_tensor(dev):
    x = T(4, 5, seed=1).to(dev)
    return torch.clamp(x, min=T(5, seed=2).to(dev) - 1, max=T(4, 1, seed=3).to(dev) + 1)


# ---- reductions ------------------------------------------------------------------------------

@case("sum", "reduction")
def sum_all_and_dims(dev):
    x = R(6, 7).to(dev)
    return x.sum(), x.sum(0), x.sum(1, keepdim=True), x.sum((0, 1))


@case("sum", "reduction")
def sum_transposed_3d(dev):
    return R(3, 4, 5).to(dev).transpose(0, 2).sum(1)


@case("sum", "reduction")
def sum_large(dev):
    return R(4096, seed=7).to(dev).sum(), R(64, 300, seed=8).to(dev).sum(1)


@case("sum", "exact")
def sum_int(dev):
    x = Ints(5, 6).to(dev)
    return x.sum(), x.sum(1), (x > 0).sum()


@case("mean", "reduction")
def mean(dev):
    x = R(6, 7).to(dev)
    return x.mean(), x.mean(0), x.mean(-1, keepdim=True)


@case("prod", "reduction")
def prod(dev):
    x = (R(4, 5) * 1.5).to(dev)
    return x.prod(), x.prod(1)


@case("amax", "exact")
def amax_amin(dev):
    x = R(4, 5, 3).to(dev)
    return x.amax(), x.amax(1), x.amin((0, 2))


@case("max", "exact")
def max_min_dim(dev):
    x = R(5, 6).to(dev)
    return tuple(x.max(1)), tuple(x.min(0)), x.max(), x.min()


@case("argmax", "exact")
def argmax_argmin(dev):
    x = R(5, 6).to(dev)
    return x.argmax(), x.argmax(1), x.argmin(0), x.argmin()


@case("var", "reduction")
def var_std(dev):
    x = R(6, 7).to(dev)
    return x.var(), x.var(1), x.std(0), x.var(1, correction=0)


@case("logsumexp", "reduction")
def logsumexp(dev):
    return torch.logsumexp(R(4, 9).to(dev) * 3, 1)


@case("cumsum", "reduction")
def cumsum_cumprod(dev):
    x = R(4, 6).to(dev)
    return x.cumsum(1), (x / 2).cumprod(0)


@case("all", "exact")
def all_any(dev):
    x = T(4, 5).to(dev) > -2
    return x.all(), x.any(), x.all(1), x.any(0)


@case("norm", "reduction")
def vector_norm(dev):
    x = R(4, 9).to(dev)
    return torch.linalg.vector_norm(x), x.norm(dim=1), torch.linalg.vector_norm(x, 1, dim=0)


# ---- matmul ------------------------------------------------------------------------------------

@case("mm", "matmul")
def mm(dev):
    return torch.mm(R(8, 16, seed=1).to(dev), R(16, 12, seed=2).to(dev))


@case("mm", "matmul")
def mm_transposed_operands(dev):
    return torch.mm(R(16, 8, seed=1).to(dev).t(), R(12, 16, seed=2).to(dev).t())


@case("mm", "matmul")
def mm_larger(dev):
    return torch.mm(R(64, 256, seed=1).to(dev), R(256, 48, seed=2).to(dev))


@case("bmm", "matmul")
def bmm(dev):
    return torch.bmm(R(3, 4, 5, seed=1).to(dev), R(3, 5, 6, seed=2).to(dev))


@case("addmm", "matmul")
def addmm(dev):
    return (torch.addmm(R(6, seed=3).to(dev), R(4, 5, seed=1).to(dev), R(5, 6, seed=2).to(dev)),
            torch.addmm(R(4, 6, seed=3).to(dev), R(4, 5, seed=1).to(dev), R(5, 6, seed=2).to(dev),
                        beta=0.5, alpha=2.0))


@case("matmul", "matmul")
def matmul_broadcast(dev):
    a, b = R(2, 3, 4, 5, seed=1).to(dev), R(5, 6, seed=2).to(dev)
    return a @ b, a @ R(5, seed=3).to(dev)


@case("linear", "matmul")
def linear(dev):
    return F.linear(R(2, 3, 8, seed=1).to(dev), R(5, 8, seed=2).to(dev), R(5, seed=3).to(dev))


# ---- nn --------------------------------------------------------------------------------------

@case("softmax", "nn")
def softmax(dev):
    x = (R(4, 9) * 4).to(dev)
    return x.softmax(-1), x.softmax(0)


@case("log_softmax", "nn")
def log_softmax(dev):
    return F.log_softmax((R(4, 9) * 4).to(dev), dim=1)


@case("softmax", "nn")
def softmax_masked(dev):
    x = R(2, 3, 5).to(dev).masked_fill((R(1, 1, 5, seed=2) > 0.5).to(dev), float("-inf"))
    return x.softmax(-1)


@case("layer_norm", "nn")
def layer_norm(dev):
    x = R(3, 4, 16, seed=1).to(dev)
    return (F.layer_norm(x, (16,), R(16, seed=2).to(dev), R(16, seed=3).to(dev), eps=1e-12),
            F.layer_norm(x, (4, 16)))


@case("normalize", "nn")
def normalize(dev):
    return F.normalize(R(4, 9).to(dev), p=2, dim=1)


@case("scaled_dot_product_attention", "nn")
def sdpa(dev):
    q, k, v = (R(2, 3, 5, 8, seed=s).to(dev) for s in (1, 2, 3))
    return F.scaled_dot_product_attention(q, k, v)


@case("scaled_dot_product_attention", "nn")
def sdpa_masked(dev):
    q, k, v = (R(2, 3, 5, 8, seed=s).to(dev) for s in (1, 2, 3))
    mask = torch.tensor([[True] * 4 + [False], [True] * 5]).reshape(2, 1, 1, 5).to(dev)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


# ---- indexing, joining -------------------------------------------------------------------------

@case("embedding", "exact")
def embedding(dev):
    return F.embedding(torch.tensor([[0, 3, 9], [9, 1, 1]]).to(dev), T(10, 6).to(dev))


@case("gather", "exact")
def gather(dev):
    x = T(4, 6).to(dev)
    return (torch.gather(x, 1, torch.tensor([[0, 5], [1, 1], [2, 0], [5, 4]]).to(dev)),
            torch.gather(x, 0, torch.tensor([[3, 2, 1, 0, 0, 1]]).to(dev)))


@case("index_select", "exact")
def index_select(dev):
    x, i = T(5, 6).to(dev), torch.tensor([4, 0, 2, 2]).to(dev)
    return x.index_select(0, i), x.index_select(1, i), x.t().index_select(0, i)


@case("index", "exact")
def advanced_index(dev):
    x = T(5, 6).to(dev)
    return x[torch.tensor([3, 0, 3]).to(dev)], x[:, torch.tensor([5, 1]).to(dev)], x[x > 1]


@case("index_put_", "exact")
def setitem_slice_and_mask(dev):
    x = T(4, 5, seed=1).to(dev)
    x[:, 2] = T(4, seed=2).to(dev)
    x[x < -2] = 0.0
    return x


@case("cat", "exact")
def cat(dev):
    a, b = T(2, 5, seed=1).to(dev), T(3, 5, seed=2).to(dev)
    return torch.cat([a, b]), torch.cat([a, a * 0 + 1], dim=1), torch.cat([a.t(), b.t()], dim=1)


@case("stack", "exact")
def stack(dev):
    return torch.stack([T(3, 4, seed=s).to(dev) for s in (1, 2, 3)], dim=1)


@case("tril", "exact")
def tril_triu(dev):
    x = T(5, 5).to(dev)
    return x.tril(), x.triu(1)


@case("flip", "exact")
def flip(dev):
    return T(3, 4).to(dev).flip(1)


@case("repeat", "exact")
def repeat(dev):
    return T(2, 3).to(dev).repeat(2, 2)


# ---- factories, fills, copies, conversions -------------------------------------------------------

@case("zeros", "exact")
def factories_on_device(dev):
    return (torch.zeros(2, 3, device=dev), torch.ones(4, device=dev, dtype=torch.int64),
            torch.full((2, 2), 2.5, device=dev), torch.arange(6, device=dev),
            torch.arange(0.0, 1.0, 0.125, device=dev))


@case("fill_", "exact")
def fill_and_zero(dev):
    x, y = T(3, 4).to(dev), T(3, 4).to(dev)
    x[1:].fill_(7.0)
    y.t()[::2].zero_()
    return x, y


@case("copy_", "exact")
def copy_between_strided(dev):
    x = torch.zeros(4, 6).to(dev)
    x[:, ::2].copy_(T(3, 4).to(dev).t())
    return x


@case("to", "exact")
def to_int_from_float(dev):
    x = (T(4, 5) * 3).to(dev)
    return x.long(), x.to(torch.int32), x.to(torch.bool)


@case("to", "exact")
def to_float_from_int_bool(dev):
    return Ints(4, 5).to(dev).float(), (T(4, 5) > 0).to(dev).float(), Ints(4, 5).to(dev).double()


@case("to", "exact")
def to_float64_and_back(dev):
    x = T(4, 5).to(dev)
    return x.double(), (x.double() / 3).float()


@case("to", "exact")
def to_float16(dev):
    x = (T(4, 5) / 3).to(dev)
    return x.half(), x.half().float()


@case("to", "exact")
def to_int64_int32_bool(dev):
    x = Ints(4, 5).to(dev)
    return x.int(), x.bool().long(), x.to(torch.uint8)


@case("to", "exact")
def to_with_device_and_dtype(dev):
    return T(3, 4).to(dev, torch.float64), Ints(3, 4).to(device=dev, dtype=torch.float32)
