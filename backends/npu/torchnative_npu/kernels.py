"""The npu kernels: each aten overload lowered to ONNX nodes of the pending graph (graph.py).

A kernel is `lower(g, args, outs)`: it reads its tensor arguments as graph values (`g.read`),
records nodes (`g.node`), and writes each output value into its output tensor (`g.write`); the
core has already done the meta step (shapes, dtypes, broadcasting, type promotion; outputs
allocated on npu), as for every backend (docs/design/kernel-conventions.md). Nothing is computed
here: the graph runs when its results are needed.

Numerics follow upstream's definitions where ONNX's differ: remainder is fmod plus upstream's sign
correction, div(rounding_mode='floor') is upstream's div_floor_floating, trunc is sign * floor(|x|),
softplus has upstream's threshold, float16 elementwise arithmetic computes in float32 and rounds
once (upstream's CPU kernels do the same), and min/max/clamp propagate NaN explicitly.

`need(op, code)` asks ONNX Runtime's kernel registry whether it has a kernel for the node; when
it does not, the kernel raises `Rejected` before it wrote anything, and `run` (below) runs the
whole aten operator on the cpu backend instead (counted in torchnative.fallback_report()).
Operators listed nowhere here are refused by name by the core.
"""

from __future__ import annotations

import math

import numpy as np

from . import providers
from .graph import BOOL, FLOATS, INTS, Rejected, elem, npdtype, tproto

KERNELS: dict = {}


def kernel(*names):
    def deco(fn):
        for n in names:
            KERNELS[n] = fn
        return fn
    return deco


# --- helpers --------------------------------------------------------------------------------------

def need(op, code, domain=""):
    if not providers.supported(op, elem(code), domain):
        raise Rejected(f"ONNX Runtime has no {op} kernel for {elem(code)}")


def code_of(t):
    return t._tn_dtype_code


def wide(code):
    """The dtype elementwise arithmetic computes in: float16 in float32 (rounded once at the end)."""
    return 6 if code == 5 else code


def cast(g, v, src, dst):
    if src == dst:
        return v
    need("Cast", src)
    return g.node("Cast", [v], to=tproto(dst))


def rd(g, t, code=None):
    """Tensor `t` as a value of dtype `code` (its own by default)."""
    v = g.read(t)
    return v if code is None else cast(g, v, code_of(t), code)


def wr(g, out, v, code):
    """Write value `v` (dtype `code`) into `out`, cast to out's dtype."""
    g.write(out, cast(g, v, code, code_of(out)))


def const(g, value, code):
    return g.scalar(value, code)


def op(g, name, inputs, code, **attrs):
    need(name, code)
    return g.node(name, inputs, **attrs)


def select(g, ins, code):
    """ONNX Where, bit-exact for floats. ONNX Runtime 1.32's CPU Where returns +0.0 where it
    selects -0.0 from its first branch (upstream keeps the sign), so floats are selected by
    gathering: both branches stacked on a new last axis, the condition as the index."""
    cond, a, b = ins
    if code == BOOL:  # ONNX Runtime has no bool Where
        return op(g, "Or", [op(g, "And", [cond, a], BOOL), op(g, "And", [op(g, "Not", [cond], BOOL), b], BOOL)], BOOL)
    if code == 5:  # nor a float16 one: select in float32 (exact both ways)
        return cast(g, select(g, [cond, cast(g, a, 5, 6), cast(g, b, 5, 6)], 6), 6, 5)
    y = op(g, "Where", [cond, a, b], code)
    if code not in FLOATS:
        return y
    shape = g.node("Shape", [y])  # the broadcast shape of the three
    last = g.ints([-1])
    ab = [g.node("Unsqueeze", [g.node("Expand", [v, shape]), last]) for v in (b, a)]
    idx = g.node("Unsqueeze", [cast(g, g.node("Expand", [cond, shape]), BOOL, 4), last])
    need("GatherElements", code)
    picked = g.node("GatherElements", [g.node("Concat", ab, axis=-1), idx], axis=-1)
    return g.node("Squeeze", [picked, last])


def isnan(g, v, code):
    return op(g, "IsNaN", [v], code) if code in FLOATS else None


# --- copies and fills ----------------------------------------------------------------------------

@kernel("copy_")
def copy_(g, args, outs):
    src, out = args[1], outs[0]
    s, d = code_of(src), code_of(out)
    v = g.read(src)
    if s in FLOATS and d in INTS:  # torch truncates toward zero; ONNX Cast does too (C++ cast)
        pass
    if d == BOOL and s != BOOL:
        v = op(g, "Not", [op(g, "Equal", [v, const(g, 0, s)], s)], BOOL)
        s = BOOL
    g.write(out, cast(g, v, s, d))


@kernel("fill_.Scalar")
def fill_(g, args, outs):
    out = outs[0]
    code = code_of(out)
    value = args[1]
    if code == BOOL:
        value = bool(value)
    elif code in INTS:
        value = int(value)
    shape = tuple(out._tn_sizes)
    g.write(out, g.const(np.full(shape, value, dtype=npdtype(code))) if np.prod(shape, dtype=np.int64) <= 4096
            else op(g, "Expand", [const(g, value, code), g.ints(shape)], code))


@kernel("arange.start_out")
def arange(g, args, outs):
    out = outs[0]
    n = out._tn_sizes[0]
    start, step = args[0], args[2]
    code = code_of(out)
    vals = (np.arange(n, dtype=np.float64) * step + start) if code in FLOATS else \
        np.arange(n, dtype=np.int64) * int(step) + int(start)
    g.write(out, g.const(vals.astype(npdtype(code))))


# --- unary elementwise --------------------------------------------------------------------------

SIMPLE = {"neg": "Neg", "abs": "Abs", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin", "cos": "Cos",
          "tan": "Tan", "atan": "Atan", "asin": "Asin", "acos": "Acos", "sinh": "Sinh", "cosh": "Cosh",
          "tanh": "Tanh", "sigmoid": "Sigmoid", "relu": "Relu", "erf": "Erf", "floor": "Floor", "ceil": "Ceil",
          "round": "Round", "reciprocal": "Reciprocal", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh"}


def _unary(onnx_op):
    def lower(g, args, outs):
        out = outs[0]
        code = code_of(out)
        c = wide(code)
        x = rd(g, args[0], c)
        if onnx_op in ("Floor", "Ceil", "Round") and c in INTS:
            y = x
        else:
            y = op(g, onnx_op, [x], c)
        wr(g, out, y, c)
    return lower


for _name, _onnx in SIMPLE.items():
    kernel(_name, _name + "_")(_unary(_onnx))


def _math(fn):
    """A unary operator composed of several nodes: fn(g, x, code) -> value (in `code`)."""
    def lower(g, args, outs):
        out = outs[0]
        c = wide(code_of(out))
        wr(g, out, fn(g, rd(g, args[0], c), c, args), c)
    return lower


def _sign(g, x, c, args):
    if c == BOOL:
        return x
    return op(g, "Sign", [x], c)


def _trunc(g, x, c, args=None):
    if c not in FLOATS:
        return x
    return op(g, "Mul", [op(g, "Sign", [x], c), op(g, "Floor", [op(g, "Abs", [x], c)], c)], c)


def _frac(g, x, c, args):
    return op(g, "Sub", [x, _trunc(g, x, c)], c)


def _rsqrt(g, x, c, args):
    return op(g, "Div", [const(g, 1, c), op(g, "Sqrt", [x], c)], c)


def _exp2(g, x, c, args):
    return op(g, "Pow", [const(g, 2, c), x], c)


def _expm1(g, x, c, args):
    return op(g, "Sub", [op(g, "Exp", [x], c), const(g, 1, c)], c)


def _log2(g, x, c, args):
    return op(g, "Div", [op(g, "Log", [x], c), const(g, math.log(2), c)], c)


def _log10(g, x, c, args):
    return op(g, "Div", [op(g, "Log", [x], c), const(g, math.log(10), c)], c)


def _log1p(g, x, c, args):
    return op(g, "Log", [op(g, "Add", [x, const(g, 1, c)], c)], c)


def _gelu(g, x, c, args):
    half = const(g, 0.5, c)
    if args[1] == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        x3 = op(g, "Mul", [op(g, "Mul", [x, x], c), x], c)
        inner = op(g, "Mul", [const(g, math.sqrt(2 / math.pi), c),
                              op(g, "Add", [x, op(g, "Mul", [const(g, 0.044715, c), x3], c)], c)], c)
        t = op(g, "Tanh", [inner], c)
    else:  # 0.5 x (1 + erf(x / sqrt 2)), upstream's formula
        t = op(g, "Erf", [op(g, "Mul", [x, const(g, math.sqrt(0.5), c)], c)], c)
    return op(g, "Mul", [op(g, "Mul", [x, half], c), op(g, "Add", [const(g, 1, c), t], c)], c)


def _silu(g, x, c, args):
    return op(g, "Div", [x, op(g, "Add", [const(g, 1, c), op(g, "Exp", [op(g, "Neg", [x], c)], c)], c)], c)


def _softplus(g, x, c, args):
    beta, threshold = args[1], args[2]
    bx = op(g, "Mul", [x, const(g, beta, c)], c)
    soft = op(g, "Div", [_log1p(g, op(g, "Exp", [bx], c), c, None), const(g, beta, c)], c)
    return select(g, [op(g, "Greater", [bx, const(g, threshold, c)], c), x, soft], c)


def _elu(g, x, c, args):
    alpha, scale, input_scale = args[1], args[2], args[3]
    neg = op(g, "Mul", [const(g, alpha * scale, c),
                        _expm1(g, op(g, "Mul", [x, const(g, input_scale, c)], c), c, None)], c)
    pos = op(g, "Mul", [x, const(g, scale, c)], c)
    return select(g, [op(g, "Greater", [x, const(g, 0, c)], c), pos, neg], c)


def _leaky_relu(g, x, c, args):
    return select(g, [op(g, "Greater", [x, const(g, 0, c)], c), x,
                           op(g, "Mul", [x, const(g, args[1], c)], c)], c)


def _hardtanh(g, x, c, args):
    return _clamp_values(g, x, c, const(g, args[1], c), const(g, args[2], c))


def _nan_to_num(g, x, c, args):
    if c not in FLOATS:
        return x
    info = np.finfo(npdtype(c))
    nan = 0.0 if args[1] is None else args[1]
    posinf = float(info.max) if args[2] is None else args[2]
    neginf = float(info.min) if args[3] is None else args[3]
    y = select(g, [op(g, "IsNaN", [x], c), const(g, nan, c), x], c)
    y = select(g, [op(g, "IsInf", [x], c, detect_negative=0), const(g, posinf, c), y], c)
    return select(g, [op(g, "IsInf", [x], c, detect_positive=0), const(g, neginf, c), y], c)


for _name, _fn in [("sign", _sign), ("trunc", _trunc), ("frac", _frac), ("rsqrt", _rsqrt), ("exp2", _exp2),
                   ("expm1", _expm1), ("log2", _log2), ("log10", _log10), ("log1p", _log1p), ("gelu", _gelu),
                   ("silu", _silu), ("softplus", _softplus), ("elu", _elu), ("leaky_relu", _leaky_relu),
                   ("hardtanh", _hardtanh), ("nan_to_num", _nan_to_num)]:
    kernel(_name, _name + "_")(_math(_fn))


def _predicate(fn):
    def lower(g, args, outs):
        x = args[0]
        c = code_of(x)
        g.write(outs[0], fn(g, g.read(x), c))
    return lower


def _bool_of(g, x, c):
    if c == BOOL:
        return x
    return op(g, "Not", [op(g, "Equal", [x, const(g, 0, c)], c)], BOOL)


kernel("isnan")(_predicate(lambda g, x, c: op(g, "IsNaN", [x], c) if c in FLOATS else g.const(np.zeros((), bool))))
kernel("isinf")(_predicate(lambda g, x, c: op(g, "IsInf", [x], c) if c in FLOATS else g.const(np.zeros((), bool))))
kernel("isfinite")(_predicate(
    lambda g, x, c: op(g, "Not", [op(g, "Or", [op(g, "IsNaN", [x], c), op(g, "IsInf", [x], c)], BOOL)], BOOL)
    if c in FLOATS else g.const(np.ones((), bool))))
kernel("logical_not")(_predicate(lambda g, x, c: op(g, "Not", [_bool_of(g, x, c)], BOOL)))


@kernel("bitwise_not")
def bitwise_not(g, args, outs):
    c = code_of(outs[0])
    x = g.read(args[0])
    g.write(outs[0], op(g, "Not", [x], BOOL) if c == BOOL else op(g, "BitwiseNot", [x], c))


# --- binary elementwise -------------------------------------------------------------------------

def _binary(fn, compare=False):
    """fn(g, a, b, c, args) -> value in `c` (or bool when `compare`)."""
    def lower(g, args, outs):
        out = outs[0]
        c = wide(code_of(args[0])) if compare else wide(code_of(out))
        a, b = rd(g, args[0], c), rd(g, args[1], c)
        y = fn(g, a, b, c, args)
        wr(g, out, y, BOOL if compare else c)
    return lower


def _add(g, a, b, c, args, name="Add"):
    alpha = args[2]
    if alpha != 1:
        b = op(g, "Mul", [b, const(g, alpha, c)], c)
    if c == BOOL:
        return op(g, "Or" if name == "Add" else "Xor", [a, b], BOOL)
    return op(g, name, [a, b], c)


def _fmod(g, a, b, c):
    return op(g, "Mod", [a, b], c, fmod=1 if c in FLOATS else 0) if c in FLOATS else \
        op(g, "Sub", [a, op(g, "Mul", [_int_trunc_div(g, a, b, c), b], c)], c)


def _int_trunc_div(g, a, b, c):
    raise Rejected("integer division: ONNX Runtime's Div has no division-by-zero error (upstream raises)")


def _remainder(g, a, b, c, args):
    if c not in FLOATS:
        raise Rejected("integer remainder: no division-by-zero error in ONNX Runtime")
    m = _fmod(g, a, b, c)
    zero = const(g, 0, c)
    fix = op(g, "And", [op(g, "Not", [op(g, "Equal", [m, zero], c)], BOOL),
                        op(g, "Xor", [op(g, "Less", [m, zero], c), op(g, "Less", [b, zero], c)], BOOL)], BOOL)
    return select(g, [fix, op(g, "Add", [m, b], c), m], c)


def _fmod_k(g, a, b, c, args):
    if c not in FLOATS:
        raise Rejected("integer fmod: no division-by-zero error in ONNX Runtime")
    return _fmod(g, a, b, c)


def _div_floor(g, a, b, c):
    """upstream's div_floor_floating (aten/src/ATen/native/BinaryOps.h)."""
    zero, one = const(g, 0, c), const(g, 1, c)
    mod = _fmod(g, a, b, c)
    div = op(g, "Div", [op(g, "Sub", [a, mod], c), b], c)
    fix = op(g, "And", [op(g, "Not", [op(g, "Equal", [mod, zero], c)], BOOL),
                        op(g, "Xor", [op(g, "Less", [b, zero], c), op(g, "Less", [mod, zero], c)], BOOL)], BOOL)
    div = select(g, [fix, op(g, "Sub", [div, one], c), div], c)
    fl = op(g, "Floor", [div], c)
    fl = select(g, [op(g, "Greater", [op(g, "Sub", [div, fl], c), const(g, 0.5, c)], c),
                         op(g, "Add", [fl, one], c), fl], c)
    q = op(g, "Div", [a, b], c)
    # copysign(0, a / b): 1 / q is negative for q < 0 and q = -0.0
    neg = op(g, "Less", [op(g, "Div", [one, q], c), zero], c)
    signed_zero = select(g, [neg, const(g, -0.0, c), zero], c)
    fl = select(g, [op(g, "Equal", [div, zero], c), signed_zero, fl], c)
    return select(g, [op(g, "Equal", [b, zero], c), q, fl], c)


@kernel("div.Tensor_mode", "div_.Tensor_mode")
def div_mode(g, args, outs):
    out = outs[0]
    c = wide(code_of(out))
    mode = args[2]
    if c not in FLOATS:
        raise Rejected("integer division: ONNX Runtime's Div has no division-by-zero error (upstream raises)")
    a, b = rd(g, args[0], c), rd(g, args[1], c)
    if mode is None:
        y = op(g, "Div", [a, b], c)
    elif mode == "trunc":
        y = _trunc(g, op(g, "Div", [a, b], c), c)
    else:
        y = _div_floor(g, a, b, c)
    wr(g, out, y, c)


def _div(g, a, b, c, args):
    if c not in FLOATS:
        raise Rejected("integer division: no division-by-zero error in ONNX Runtime")
    return op(g, "Div", [a, b], c)


def _atan2(g, a, b, c, args):
    """atan2(y=a, x=b) from atan(y/x) and the quadrant, as libm (also for x = 0 and infinities
    where the ratio is NaN the result is off: upstream's agrees with libm there; tested on finite
    nonzero inputs)."""
    zero = const(g, 0, c)
    pi = const(g, math.pi, c)
    base = op(g, "Atan", [op(g, "Div", [a, b], c)], c)
    xneg = op(g, "Less", [b, zero], c)
    yneg = op(g, "Less", [a, zero], c)
    adj = select(g, [xneg, select(g, [yneg, op(g, "Neg", [pi], c), pi], c), zero], c)
    r = op(g, "Add", [base, adj], c)
    xzero = op(g, "Equal", [b, zero], c)
    half = op(g, "Mul", [op(g, "Sign", [a], c), const(g, math.pi / 2, c)], c)
    return select(g, [xzero, half, r], c)


def _pow(g, a, b, c, args):
    if c not in FLOATS:
        raise Rejected("integer pow")
    return op(g, "Pow", [a, b], c)


def _minmax(name):
    def fn(g, a, b, c, args):
        y = op(g, name, [a, b], c)
        if c in FLOATS:
            # a tie of zeros: upstream's minimum(-0.0, 0.0) is -0.0 and maximum's 0.0, either order
            a_neg = op(g, "Less", [op(g, "Div", [const(g, 1, c), a], c), const(g, 0, c)], c)
            tie = select(g, [a_neg, a, b] if name == "Min" else [a_neg, b, a], c)
            y = select(g, [op(g, "Equal", [a, b], c), tie, y], c)
            y = select(g, [op(g, "IsNaN", [a], c), a, y], c)
            y = select(g, [op(g, "IsNaN", [b], c), b, y], c)
        return y
    return fn


def _cmp(name, negate=False):
    def fn(g, a, b, c, args):
        if c == BOOL and name != "Equal":
            a, b, c = cast(g, a, BOOL, 1), cast(g, b, BOOL, 1), 1  # int8 orders false < true
        y = op(g, name, [a, b], c)
        return op(g, "Not", [y], BOOL) if negate else y
    return fn


def _logical(name):
    def fn(g, a, b, c, args):
        return op(g, name, [_bool_of(g, a, c), _bool_of(g, b, c)], BOOL)
    return fn


def _bitwise(name, boolname):
    def fn(g, a, b, c, args):
        return op(g, boolname, [a, b], BOOL) if c == BOOL else op(g, name, [a, b], c)
    return fn


for _names, _fn, _cmpflag in [
    (("add.Tensor", "add_.Tensor"), _add, False),
    (("sub.Tensor", "sub_.Tensor"), lambda g, a, b, c, args: _add(g, a, b, c, args, "Sub"), False),
    (("mul.Tensor", "mul_.Tensor"), lambda g, a, b, c, args: op(g, "And", [a, b], BOOL) if c == BOOL
     else op(g, "Mul", [a, b], c), False),
    (("div.Tensor", "div_.Tensor"), _div, False),
    (("remainder.Tensor", "remainder_.Tensor"), _remainder, False),
    (("fmod.Tensor", "fmod_.Tensor"), _fmod_k, False),
    (("atan2", "atan2_"), _atan2, False),
    (("pow.Tensor_Tensor", "pow_.Tensor"), _pow, False),
    (("maximum",), _minmax("Max"), False),
    (("minimum",), _minmax("Min"), False),
    (("eq.Tensor",), _cmp("Equal"), True),
    (("ne.Tensor",), _cmp("Equal", True), True),
    (("lt.Tensor",), _cmp("Less"), True),
    (("le.Tensor",), _cmp("LessOrEqual"), True),
    (("gt.Tensor",), _cmp("Greater"), True),
    (("ge.Tensor",), _cmp("GreaterOrEqual"), True),
    (("logical_and",), _logical("And"), True),
    (("logical_or",), _logical("Or"), True),
    (("logical_xor",), _logical("Xor"), True),
    (("bitwise_and.Tensor",), _bitwise("BitwiseAnd", "And"), False),
    (("bitwise_or.Tensor",), _bitwise("BitwiseOr", "Or"), False),
    (("bitwise_xor.Tensor",), _bitwise("BitwiseXor", "Xor"), False),
]:
    kernel(*_names)(_binary(_fn, _cmpflag))


@kernel("pow.Tensor_Scalar", "pow_.Scalar")
def pow_scalar(g, args, outs):
    out = outs[0]
    c = wide(code_of(out))
    if c not in FLOATS:
        raise Rejected("integer pow")
    x = rd(g, args[0], c)
    e = args[1]
    if e == 2:
        y = op(g, "Mul", [x, x], c)
    elif e == 1:
        y = x
    elif e == 0.5:
        y = op(g, "Sqrt", [x], c)
    else:
        y = op(g, "Pow", [x, const(g, e, c)], c)
    wr(g, out, y, c)


@kernel("where.self")
def where(g, args, outs):
    out = outs[0]
    c = code_of(out)
    cond = rd(g, args[0], BOOL)
    g.write(out, select(g, [cond, rd(g, args[1], c), rd(g, args[2], c)], c))


@kernel("masked_fill.Scalar", "masked_fill_.Scalar")
def masked_fill(g, args, outs):
    out = outs[0]
    c = code_of(out)
    value = args[2]
    value = bool(value) if c == BOOL else int(value) if c in INTS else value
    g.write(out, select(g, [rd(g, args[1], BOOL), const(g, value, c), rd(g, args[0], c)], c))


def _clamp_values(g, x, c, lo, hi):
    y = x
    if lo is not None:
        y = select(g, [op(g, "Less", [y, lo], c), lo, y], c)
        if c in FLOATS:
            y = select(g, [op(g, "IsNaN", [lo], c), lo, y], c)
    if hi is not None:
        y = select(g, [op(g, "Greater", [y, hi], c), hi, y], c)
        if c in FLOATS:
            y = select(g, [op(g, "IsNaN", [hi], c), hi, y], c)
    return y  # NaN in x: both comparisons are false, x (NaN) stays


@kernel("clamp", "clamp_")
def clamp(g, args, outs):
    out = outs[0]
    c = wide(code_of(out))
    x = rd(g, args[0], c)
    lo = None if args[1] is None else const(g, args[1], c)
    hi = None if args[2] is None else const(g, args[2], c)
    wr(g, out, _clamp_values(g, x, c, lo, hi), c)


@kernel("clamp.Tensor", "clamp_.Tensor")
def clamp_t(g, args, outs):
    out = outs[0]
    c = wide(code_of(out))
    x = rd(g, args[0], c)
    lo = None if args[1] is None else rd(g, args[1], c)
    hi = None if args[2] is None else rd(g, args[2], c)
    wr(g, out, _clamp_values(g, x, c, lo, hi), c)


# --- reductions ------------------------------------------------------------------------------------

def _dims(d, ndim):
    if d is None or (isinstance(d, (list, tuple)) and len(d) == 0):
        return list(range(ndim))
    return [d] if isinstance(d, int) else list(d)


def _reduce(g, name, x, c, axes, keepdim):
    if not axes:
        return x
    return op(g, name, [x, g.ints(axes)], c, keepdims=int(keepdim))


def _acc(code):
    return 4 if code in INTS or code == BOOL else wide(code)


def _reduction(name, dim_arg=None, keep_arg=None, mean=False):
    def lower(g, args, outs):
        x, out = args[0], outs[0]
        nd = len(x._tn_sizes)
        axes = _dims(args[dim_arg] if dim_arg is not None else None, nd)
        keep = args[keep_arg] if keep_arg is not None else False
        c = _acc(code_of(out)) if name in ("ReduceSum", "ReduceProd") or mean else wide(code_of(out))
        if mean:
            c = wide(code_of(out))
        v = _reduce(g, name, rd(g, x, c), c, axes, keep)
        wr(g, out, v, c)
    return lower


kernel("sum")(_reduction("ReduceSum"))
kernel("sum.dim_IntList")(_reduction("ReduceSum", 1, 2))
kernel("mean")(_reduction("ReduceMean", mean=True))
kernel("mean.dim")(_reduction("ReduceMean", 1, 2, mean=True))
kernel("prod")(_reduction("ReduceProd"))
kernel("prod.dim_int")(_reduction("ReduceProd", 1, 2))


def _maxmin(name, dim_arg=None, keep_arg=None):
    def lower(g, args, outs):
        x, out = args[0], outs[0]
        c = code_of(x)
        axes = _dims(args[dim_arg] if dim_arg is not None else None, len(x._tn_sizes))
        keep = args[keep_arg] if keep_arg is not None else False
        cc = 1 if c == BOOL else wide(c)
        v = rd(g, x, cc)
        y = _reduce(g, name, v, cc, axes, keep)
        if cc in FLOATS and axes:  # NaN propagates (ONNX Runtime's reduce ignores it)
            anynan = _reduce(g, "ReduceMax", cast(g, op(g, "IsNaN", [v], cc), BOOL, 1), 1, axes, keep)
            y = select(g, [cast(g, anynan, 1, BOOL), const(g, float("nan"), cc), y], cc)
        wr(g, out, y, cc)
    return lower


kernel("amax")(_maxmin("ReduceMax", 1, 2))
kernel("amin")(_maxmin("ReduceMin", 1, 2))
kernel("max")(_maxmin("ReduceMax"))
kernel("min")(_maxmin("ReduceMin"))


def _arg(name):
    def lower(g, args, outs, values_out=None):
        x = args[0]
        c = code_of(x)
        cc = 1 if c == BOOL else wide(c)
        v = rd(g, x, cc)
        dim = args[1]
        keep = args[2]
        if dim is None:
            v = g.node("Reshape", [v, g.ints([-1])])
            dim = 0
        if cc in FLOATS:  # a NaN is the max (and the min), its first index wins, as upstream
            nanmask = op(g, "IsNaN", [v], cc)
            big = const(g, float("inf") if name == "ArgMax" else -float("inf"), cc)
            v2 = select(g, [nanmask, big, v], cc)
            idx = op(g, name, [v2], cc, axis=dim, keepdims=int(keep))
            nan_idx = op(g, "ArgMax", [cast(g, nanmask, BOOL, 1)], 1, axis=dim, keepdims=int(keep))
            anynan = cast(g, _reduce(g, "ReduceMax", cast(g, nanmask, BOOL, 1), 1, [dim], keep), 1, BOOL)
            idx = select(g, [anynan, nan_idx, idx], 4)
        else:
            idx = op(g, name, [v], cc, axis=dim, keepdims=int(keep))
        return idx, v, dim, cc
    return lower


def _argk(name):
    def lower(g, args, outs):
        g.write(outs[0], _arg(name)(g, args, outs)[0])
    return lower


kernel("argmax")(_argk("ArgMax"))
kernel("argmin")(_argk("ArgMin"))


def _maxmin_dim(name, arg):
    def lower(g, args, outs):
        idx, v, dim, cc = _arg(arg)(g, args, outs)
        keep = args[2]
        ix = idx if keep else op(g, "Unsqueeze", [idx, g.ints([dim])], 4)
        vals = op(g, "GatherElements", [v, ix], cc, axis=dim)
        if not keep:
            vals = g.node("Squeeze", [vals, g.ints([dim])])
        wr(g, outs[0], vals, cc)
        g.write(outs[1], idx)
    return lower


kernel("max.dim")(_maxmin_dim("ReduceMax", "ArgMax"))
kernel("min.dim")(_maxmin_dim("ReduceMin", "ArgMin"))


def _var(std):
    def lower(g, args, outs):
        x, out = args[0], outs[0]
        c = wide(code_of(out))
        axes = _dims(args[1], len(x._tn_sizes))
        corr = 1 if args[2] is None else args[2]
        keep = args[3]
        n = 1
        for a in axes:
            n *= x._tn_sizes[a]
        v = rd(g, x, c)
        mean = _reduce(g, "ReduceMean", v, c, axes, True)
        d = op(g, "Sub", [v, mean], c)
        ss = _reduce(g, "ReduceSum", op(g, "Mul", [d, d], c), c, axes, keep)
        y = op(g, "Div", [ss, const(g, max(n - corr, 0), c)], c)
        if std:
            y = op(g, "Sqrt", [y], c)
        wr(g, out, y, c)
    return lower


kernel("var.correction")(_var(False))
kernel("std.correction")(_var(True))


@kernel("logsumexp")
def logsumexp(g, args, outs):
    x, out = args[0], outs[0]
    c = wide(code_of(out))
    axes = _dims(args[1], len(x._tn_sizes))
    keep = args[2]
    v = rd(g, x, c)
    m = _reduce(g, "ReduceMax", v, c, axes, True)
    m = select(g, [op(g, "IsInf", [m], c), const(g, 0, c), m], c)  # upstream: inf max -> 0
    s = _reduce(g, "ReduceSum", op(g, "Exp", [op(g, "Sub", [v, m], c)], c), c, axes, keep)
    mm = m if keep else g.node("Squeeze", [m, g.ints(axes)]) if axes else m
    wr(g, out, op(g, "Add", [op(g, "Log", [s], c), mm], c), c)


@kernel("cumsum", "cumsum_")
def cumsum(g, args, outs):
    x, out = args[0], outs[0]
    c = _acc(code_of(out)) if code_of(out) not in FLOATS else wide(code_of(out))
    v = rd(g, x, c)
    if len(x._tn_sizes) == 0:
        wr(g, out, v, c)
        return
    wr(g, out, op(g, "CumSum", [v, g.ints(args[1])], c), c)


@kernel("cumprod", "cumprod_")
def cumprod(g, args, outs):
    """ONNX has CumProd only from opset 26 (ours is 21): running products of the slices along
    `dim`, in order (upstream's CPU scan multiplies in the same order), for up to 256 of them."""
    x, out = args[0], outs[0]
    c = _acc(code_of(out)) if code_of(out) not in FLOATS else wide(code_of(out))
    v = rd(g, x, c)
    sizes = list(x._tn_sizes)
    if not sizes:
        wr(g, out, v, c)
        return
    dim = args[1]
    n = sizes[dim]
    if n > 256:
        raise Rejected("cumprod over more than 256 elements (ONNX CumProd needs opset 26)")
    need("Mul", c)
    parts = g.node("Split", [v, g.ints([1] * n)], nout=n, axis=dim) if n > 1 else [v]
    acc, prods = parts[0], [parts[0]]
    for p in parts[1:]:
        acc = g.node("Mul", [acc, p])
        prods.append(acc)
    wr(g, out, g.node("Concat", prods, axis=dim) if n > 1 else prods[0], c)


def _allany(name):
    def lower(g, args, outs):
        x, out = args[0], outs[0]
        nd = len(x._tn_sizes)
        axes = _dims(args[1] if len(args) > 1 else None, nd)
        keep = args[2] if len(args) > 2 else False
        b = cast(g, _bool_of(g, g.read(x), code_of(x)), BOOL, 1)
        r = _reduce(g, name, b, 1, axes, keep)
        g.write(out, cast(g, r, 1, BOOL) if code_of(out) == BOOL else cast(g, r, 1, code_of(out)))
    return lower


kernel("all", "all.dim", "all.dims")(_allany("ReduceMin"))
kernel("any", "any.dim", "any.dims")(_allany("ReduceMax"))


@kernel("linalg_vector_norm")
def vector_norm(g, args, outs):
    x, out = args[0], outs[0]
    c = wide(code_of(out))
    ordv, axes, keep = args[1], _dims(args[2], len(x._tn_sizes)), args[3]
    a = op(g, "Abs", [rd(g, x, c)], c)
    if ordv == float("inf"):
        y = _reduce(g, "ReduceMax", a, c, axes, keep)
    elif ordv == -float("inf"):
        y = _reduce(g, "ReduceMin", a, c, axes, keep)
    elif ordv == 2:
        y = op(g, "Sqrt", [_reduce(g, "ReduceSum", op(g, "Mul", [a, a], c), c, axes, keep)], c)
    elif ordv == 1:
        y = _reduce(g, "ReduceSum", a, c, axes, keep)
    elif ordv == 0:
        y = _reduce(g, "ReduceSum", cast(g, op(g, "Not", [op(g, "Equal", [a, const(g, 0, c)], c)], BOOL), BOOL, c),
                    c, axes, keep)
    else:
        p = const(g, ordv, c)
        y = op(g, "Pow", [_reduce(g, "ReduceSum", op(g, "Pow", [a, p], c), c, axes, keep),
                          const(g, 1.0 / ordv, c)], c)
    wr(g, out, y, c)


# --- matmul --------------------------------------------------------------------------------------

def _check_float(c):
    if c not in FLOATS:
        raise Rejected("integer matmul")


@kernel("mm", "bmm")
def mm(g, args, outs):
    out = outs[0]
    c = wide(code_of(out))
    _check_float(c)
    wr(g, out, op(g, "MatMul", [rd(g, args[0], c), rd(g, args[1], c)], c), c)


@kernel("addmm", "baddbmm", "addmm_", "baddbmm_")
def addmm(g, args, outs):
    out = outs[0]
    c = wide(code_of(out))
    _check_float(c)
    beta, alpha = args[3], args[4]
    prod = op(g, "MatMul", [rd(g, args[1], c), rd(g, args[2], c)], c)
    if alpha != 1:
        prod = op(g, "Mul", [prod, const(g, alpha, c)], c)
    if beta != 0:
        s = rd(g, args[0], c)
        if beta != 1:
            s = op(g, "Mul", [s, const(g, beta, c)], c)
        prod = op(g, "Add", [s, prod], c)
    wr(g, out, prod, c)


# --- nn ---------------------------------------------------------------------------------------------

def _softmax(name):
    def lower(g, args, outs):
        out = outs[0]
        c = wide(code_of(out))
        x = rd(g, args[0], c)
        if len(args[0]._tn_sizes) == 0:
            y = op(g, name, [g.node("Reshape", [x, g.ints([1])])], c, axis=0)
            y = g.node("Reshape", [y, g.ints([])])
        else:
            y = op(g, name, [x], c, axis=args[1])
        wr(g, out, y, c)
    return lower


kernel("_softmax")(_softmax("Softmax"))
kernel("_log_softmax")(_softmax("LogSoftmax"))


@kernel("native_layer_norm")
def layer_norm(g, args, outs):
    x, shape, weight, bias, eps = args
    c = code_of(outs[0])
    cc = wide(c)
    nd = len(x._tn_sizes)
    axis = nd - len(shape)
    v = rd(g, x, cc)
    w = rd(g, weight, cc) if weight is not None else g.const(np.ones(tuple(shape), npdtype(cc)))
    ins = [v, w] + ([rd(g, bias, cc)] if bias is not None else [])
    need("LayerNormalization", cc)
    y, mean, rstd = g.node("LayerNormalization", ins, nout=3, axis=axis, epsilon=float(eps), stash_type=1)
    wr(g, outs[0], y, cc)
    g.write(outs[1], cast(g, mean, 6, code_of(outs[1])))
    g.write(outs[2], cast(g, rstd, 6, code_of(outs[2])))


@kernel("_scaled_dot_product_flash_attention_for_cpu")
def sdpa(g, args, outs):
    q, k, v, dropout_p, is_causal = args[:5]
    mask, scale = args[5], args[6]
    if dropout_p:
        raise Rejected("scaled_dot_product_attention with dropout (random numbers on the device)")
    c = wide(code_of(outs[0]))
    _check_float(c)
    # plain Where below (not `select`): the sign of a zero score or probability changes nothing here
    E = q._tn_sizes[-1]
    L, S = q._tn_sizes[-2], k._tn_sizes[-2]
    sc = scale if scale is not None else 1.0 / math.sqrt(E)
    qv, kv, vv = rd(g, q, c), rd(g, k, c), rd(g, v, c)
    nd = len(k._tn_sizes)
    perm = list(range(nd - 2)) + [nd - 1, nd - 2]
    kt = g.node("Transpose", [kv], perm=perm)
    scores = op(g, "Mul", [op(g, "MatMul", [qv, kt], c), const(g, sc, c)], c)
    if is_causal:
        tri = np.tril(np.ones((L, S), dtype=bool))
        scores = op(g, "Where", [g.const(tri), scores, const(g, -float("inf"), c)], c)
    if mask is not None:
        if code_of(mask) == BOOL:
            scores = op(g, "Where", [g.read(mask), scores, const(g, -float("inf"), c)], c)
        else:
            scores = op(g, "Add", [scores, rd(g, mask, c)], c)
    m = _reduce(g, "ReduceMax", scores, c, [nd - 1], True)
    finite = op(g, "Where", [op(g, "IsInf", [m], c), const(g, 0, c), m], c)
    e = op(g, "Exp", [op(g, "Sub", [scores, finite], c)], c)
    s = _reduce(g, "ReduceSum", e, c, [nd - 1], True)
    p = op(g, "Div", [e, s], c)
    p = op(g, "Where", [op(g, "Equal", [s, const(g, 0, c)], c), const(g, 0, c), p], c)  # fully masked row: 0
    wr(g, outs[0], op(g, "MatMul", [p, vv], c), c)
    lse = op(g, "Add", [op(g, "Log", [s], c), finite], c)
    lse = g.node("Squeeze", [lse, g.ints([nd - 1])])
    # upstream's logsumexp output is [B, H, L] (its layout); the core allocated outs[1]'s shape
    wr(g, outs[1], g.node("Reshape", [lse, g.ints(list(outs[1]._tn_sizes))]), c)


@kernel("embedding")
def embedding(g, args, outs):
    w, idx = args[0], args[1]
    c = code_of(outs[0])
    need("Gather", c)
    g.write(outs[0], g.node("Gather", [g.read(w), rd(g, idx, 4)], axis=0))


@kernel("index_select")
def index_select(g, args, outs):
    x, dim, idx = args
    c = code_of(outs[0])
    need("Gather", c)
    v = g.read(x)
    if len(x._tn_sizes) == 0:
        g.write(outs[0], v)
        return
    g.write(outs[0], g.node("Gather", [v, g.node("Reshape", [rd(g, idx, 4), g.ints([-1])])], axis=dim))


@kernel("gather")
def gather(g, args, outs):
    x, dim, idx = args[0], args[1], args[2]
    c = code_of(outs[0])
    need("GatherElements", c)
    if len(x._tn_sizes) == 0:
        g.write(outs[0], g.read(x))
        return
    g.write(outs[0], g.node("GatherElements", [g.read(x), rd(g, idx, 4)], axis=dim))


@kernel("cat")
def cat(g, args, outs):
    tensors, dim = args[0], args[1]
    out = outs[0]
    c = code_of(out)
    # upstream skips legacy empty 1-D tensors ([0]) beside tensors of more dimensions
    parts = [rd(g, t, c) for t in tensors if not (list(t._tn_sizes) == [0] and len(out._tn_sizes) != 1)]
    need("Concat", c)
    g.write(out, g.node("Concat", parts, axis=dim) if len(parts) > 1 else parts[0])


def _tri(upper):
    def lower(g, args, outs):
        c = code_of(outs[0])
        need("Trilu", c)
        g.write(outs[0], g.node("Trilu", [g.read(args[0]), g.ints(args[1])], upper=int(upper)))
    return lower


kernel("tril", "tril_")(_tri(False))
kernel("triu", "triu_")(_tri(True))


@kernel("flip")
def flip(g, args, outs):
    x, dims = args
    c = code_of(outs[0])
    v = g.read(x)
    if dims:
        big = np.iinfo(np.int64).max
        need("Slice", c)
        v = g.node("Slice", [v, g.ints([-1] * len(dims)), g.ints([-big] * len(dims)), g.ints(list(dims)),
                             g.ints([-1] * len(dims))])
    g.write(outs[0], v)


@kernel("repeat")
def repeat(g, args, outs):
    x, reps = args
    c = code_of(outs[0])
    need("Tile", c)
    v = g.read(x)
    extra = len(reps) - len(x._tn_sizes)
    if extra:
        v = g.node("Reshape", [v, g.ints([1] * extra + list(x._tn_sizes))])
    g.write(outs[0], g.node("Tile", [v, g.ints(list(reps))]))


# --- operators whose output shape depends on the data ---------------------------------------------
# Called as fn(g, args) -> [(output index, tensor)]: they allocate their outputs on npu themselves
# (registrar.register_allocating_kernel). A boolean mask's positions are data: the pending graph is
# flushed to read it, and they enter the graph as constant indices.

ALLOCATING: dict = {}


def _mask_positions(g, t):
    from .graph import host_array, memory_array

    code, sizes, strides = code_of(t), list(t._tn_sizes), list(t._tn_strides)
    if t._tn_device_key != "npu":
        m = host_array(t, code, sizes, strides)
    else:
        item = np.dtype(npdtype(code)).itemsize
        base = t.data_ptr() - t.storage_offset() * item
        g.before_copy_out(base)
        m = memory_array(base, t.storage_offset(), sizes, strides, code)
    return [p.astype(np.int64) for p in np.nonzero(m)]


def _advanced(g, x, indices):
    """Advanced indexing of `x` by `indices` (None, integer or boolean tensors), as upstream:
    the indexed dims are transposed to the front and addressed by a [*B, k] index tensor (B the
    broadcast shape of the index tensors); returns (data transposed, the index value, B, the
    sizes of the other dims, perm, where B goes in the result: 0 or the first indexed dim)."""
    sizes = list(x._tn_sizes)
    entries = []  # per leading dim of x: None or (value, shape)
    for t in indices:
        if t is None:
            entries.append(None)
        elif code_of(t) in (BOOL, 0):
            for p in _mask_positions(g, t):
                entries.append((g.const(p), p.shape))
        else:
            entries.append((rd(g, t, 4), tuple(t._tn_sizes)))
    adv = [i for i, e in enumerate(entries) if e is not None]
    if not adv:
        raise Rejected("advanced indexing without index tensors")
    B = tuple(np.broadcast_shapes(*[e[1] for e in entries if e is not None]))
    others = [i for i in range(len(sizes)) if i not in adv]
    data = g.read(x)
    perm = adv + others
    if perm != list(range(len(sizes))):
        data = g.node("Transpose", [data], perm=perm)
    cols = []
    for i in adv:
        v = entries[i][0]
        v = select(g, [op(g, "Less", [v, const(g, 0, 4)], 4), op(g, "Add", [v, const(g, sizes[i], 4)], 4), v], 4)
        v = g.node("Expand", [v, g.ints(B)])
        cols.append(g.node("Unsqueeze", [v, g.ints([-1])]))
    ind = g.node("Concat", cols, axis=-1) if len(cols) > 1 else cols[0]
    adjacent = adv == list(range(adv[0], adv[-1] + 1))
    return data, ind, B, [sizes[i] for i in others], perm, (adv[0] if adjacent else 0)


def _b_to(nb, at, nrest):
    """The permutation moving B (first nb dims) to position `at` among nrest other dims."""
    return list(range(nb, nb + at)) + list(range(nb)) + list(range(nb + at, nb + nrest))


def index_tensor(g, args):
    import torch

    x, indices = args[0], list(args[1])
    c = code_of(x)
    data, ind, B, rest, _, at = _advanced(g, x, indices)
    need("GatherND", c)
    y = g.node("GatherND", [data, ind])
    out_sizes = list(B) + rest
    if at:
        y = g.node("Transpose", [y], perm=_b_to(len(B), at, len(rest)))
        out_sizes = rest[:at] + list(B) + rest[at:]
    out = torch._C._tn_empty(out_sizes, c, "npu", x._tn_device_index)
    g.write(out, y)
    return [(0, out)]


@kernel("index_put_")
def index_put_(g, args, outs):
    x, indices, values, accumulate = args[0], list(args[1]), args[2], args[3]
    c = code_of(x)
    data, ind, B, rest, perm, at = _advanced(g, x, indices)
    shape = (rest[:at] + list(B) + rest[at:]) if at else (list(B) + rest)
    upd = g.node("Expand", [rd(g, values, c), g.ints(shape)])
    if at:  # the values come in the result's order: B back to the front
        upd = g.node("Transpose", [upd], perm=[_b_to(len(B), at, len(rest)).index(i) for i in range(len(shape))])
    need("ScatterND", c)
    attrs = {"reduction": "add"} if accumulate else {}
    y = g.node("ScatterND", [data, ind, upd], **attrs)
    if perm != sorted(perm):
        y = g.node("Transpose", [y], perm=[perm.index(i) for i in range(len(perm))])
    g.write(outs[0], y)


ALLOCATING["index.Tensor"] = index_tensor
