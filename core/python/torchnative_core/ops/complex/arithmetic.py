"""Complex arithmetic composed from real kernels on the real view.

A complex64 element is two float32s, so `view_as_real` turns every complex operand into a real
tensor with a trailing dimension of 2 over the same bytes. When a backend's kernel refuses a
complex dtype (NotImplementedError), `launch` here computes the same result from that device's
real kernels: additions and negation on the real views directly, products, quotients and the
transcendental functions from the two parts. So complex tensors work on every backend that has
the real kernels, and a backend that registers complex kernels of its own runs them instead (the
door tries the backend first). The formulas are upstream's scalar ones (c10/util/complex.h):
products without fused multiply-add, as upstream's vectorised product is; the quotient scaled by
the larger part of the divisor. Upstream's vectorised quotient and transcendental functions round
differently, so those agree within a few ulp, not bit for bit.

The operator-level steps that differ for complex inputs also live here: `abs`/`angle` give real
results, `conj` is a copy (there is no lazily conjugated view here: `is_conj()` is always False),
the random fills draw into the real view as upstream's do.
"""

from __future__ import annotations

from .. import IMPLS, impl
from .. import base as B
from .views import view_as_real



def _is_complex(t):
    return isinstance(t, B.C.TensorBase) and B.dtype_of(t).is_complex


def _parts(t):
    r = view_as_real(t)
    return B.door("select.int", r, -1, 0), B.door("select.int", r, -1, 1)


def _store(out, re, im):
    """Writes two real results into a complex output (computed first: the output may alias an input)."""
    o_re, o_im = _parts(out)
    B.door("copy_", o_re, re, False)
    B.door("copy_", o_im, im, False)


_d = B.door


def _mul(a, b, c, d):
    """(a + bi)(c + di) as upstream's product: ac - bd, ad + bc, each product rounded."""
    return _d("sub.Tensor", _d("mul.Tensor", a, c), _d("mul.Tensor", b, d), 1), \
        _d("add.Tensor", _d("mul.Tensor", a, d), _d("mul.Tensor", b, c), 1)


def _div(a, b, c, d):
    """(a + bi) / (c + di) as c10::complex's operator/= (Smith's scaling by the larger part)."""
    where = lambda m, x, y: _d("where.self", m, x, y)  # noqa: E731
    ac, ad = _d("abs", c), _d("abs", d)
    c_big = _d("ge.Tensor", ac, ad)
    # |c| >= |d|: rat = d/c, scl = 1/(c + d*rat); re = (a + b*rat)*scl, im = (b - a*rat)*scl
    rat1 = _d("div.Tensor", d, c)
    scl1 = _d("reciprocal", _d("add.Tensor", c, _d("mul.Tensor", d, rat1), 1))
    re1 = _d("mul.Tensor", _d("add.Tensor", a, _d("mul.Tensor", b, rat1), 1), scl1)
    im1 = _d("mul.Tensor", _d("sub.Tensor", b, _d("mul.Tensor", a, rat1), 1), scl1)
    # otherwise: rat = c/d, scl = 1/(d + c*rat); re = (a*rat + b)*scl, im = (b*rat - a)*scl
    rat2 = _d("div.Tensor", c, d)
    scl2 = _d("reciprocal", _d("add.Tensor", d, _d("mul.Tensor", c, rat2), 1))
    re2 = _d("mul.Tensor", _d("add.Tensor", _d("mul.Tensor", a, rat2), b, 1), scl2)
    im2 = _d("mul.Tensor", _d("sub.Tensor", _d("mul.Tensor", b, rat2), a, 1), scl2)
    # a zero divisor gives a complex infinity or NaN: a/|c|, b/|d|
    zero = _d("logical_and", _d("eq.Scalar", ac, 0), _d("eq.Scalar", ad, 0))
    re = where(zero, _d("div.Tensor", a, ac), where(c_big, re1, re2))
    im = where(zero, _d("div.Tensor", b, ad), where(c_big, im1, im2))
    return re, im


def _exp(a, b):
    e = _d("exp", a)
    return _d("mul.Tensor", e, _d("cos", b)), _d("mul.Tensor", e, _d("sin", b))


def _log(a, b):
    return _d("log", _d("hypot", a, b)), _d("atan2", b, a)


def _sqrt(a, b):
    """The principal root: sqrt((|z| + a)/2) + i copysign(sqrt((|z| - a)/2), b)."""
    r = _d("hypot", a, b)
    re = _d("sqrt", _d("mul.Tensor", _d("add.Tensor", r, a, 1), _num(0.5)))
    im = _d("sqrt", _d("mul.Tensor", _d("sub.Tensor", r, a, 1), _num(0.5)))
    return re, _d("copysign.Tensor", im, b)


def _sin(a, b):
    return _d("mul.Tensor", _d("sin", a), _d("cosh", b)), _d("mul.Tensor", _d("cos", a), _d("sinh", b))


def _cos(a, b):
    return _d("mul.Tensor", _d("cos", a), _d("cosh", b)), _d("neg", _d("mul.Tensor", _d("sin", a), _d("sinh", b)))


def _num(v):
    return B.C._tn_scalar_to_tensor(v)


def _number(v):
    from ..factories.tensors import wrapped_number

    return wrapped_number(v)


def _ones_like(t):
    return B.call("ones_like", t)


def _zeros_like(t):
    return B.call("zeros_like", t)


# --- kernels by overload: (args, outs) -> None, each writing outs[0] --------------------------

RULES: dict = {}


def rule(*ops):
    def deco(fn):
        for op in ops:
            RULES[op] = fn
        return fn

    return deco


def launch(op, args, outs):
    """Runs `op` on complex operands from real kernels; None when there is no rule or no complex operand."""
    fn = RULES.get(op)
    if fn is None or not any(_is_complex(t) for t in (*args, *outs)):
        return None
    fn(op, args, outs)
    return []


@rule("add.Tensor", "sub.Tensor")
def _add(op, args, outs):
    x, y, alpha = args[0], args[1], (args[2] if len(args) > 2 else 1)
    if isinstance(alpha, complex):
        y = B.door("mul.Tensor", y, _number(alpha))
        alpha = 1
    B.launch(op, (view_as_real(x), view_as_real(y), alpha), (view_as_real(outs[0]),))


@rule("neg")
def _neg(op, args, outs):
    B.launch("neg", (view_as_real(args[0]),), (view_as_real(outs[0]),))


@rule("mul.Tensor")
def _mul_rule(op, args, outs):
    _store(outs[0], *_mul(*_parts(args[0]), *_parts(args[1])))


@rule("div.Tensor")
def _div_rule(op, args, outs):
    _store(outs[0], *_div(*_parts(args[0]), *_parts(args[1])))


@rule("reciprocal")
def _reciprocal(op, args, outs):
    a, b = _parts(args[0])
    _store(outs[0], *_div(_ones_like(a), _zeros_like(b), a, b))


_UNARY = {"exp": _exp, "log": _log, "sqrt": _sqrt, "sin": _sin, "cos": _cos}


@rule(*_UNARY)
def _unary(op, args, outs):
    _store(outs[0], *_UNARY[op](*_parts(args[0])))


@rule("rsqrt")
def _rsqrt(op, args, outs):
    re, im = _parts(args[0])
    _store(outs[0], *_div(_ones_like(re), _zeros_like(im), *_sqrt(re, im)))


@rule("pow.Tensor_Tensor")
def _pow(op, args, outs):
    """std::pow for complex: exp(y log x)."""
    (a, b), (c, d) = _parts(args[0]), _parts(args[1])
    _store(outs[0], *_exp(*_mul(*_log(a, b), c, d)))


@rule("tanh")
def _tanh(op, args, outs):
    # tanh z = (e^{2z} - 1) / (e^{2z} + 1)
    a, b = _parts(args[0])
    ea, eb = _exp(_d("mul.Tensor", a, _num(2.0)), _d("mul.Tensor", b, _num(2.0)))
    _store(outs[0], *_div(_d("sub.Tensor", ea, _num(1.0), 1), eb, _d("add.Tensor", ea, _num(1.0), 1), eb))


@rule("sigmoid")
def _sigmoid(op, args, outs):
    # 1 / (1 + e^{-z})
    a, b = _parts(args[0])
    ea, eb = _exp(_d("neg", a), _d("neg", b))
    _store(outs[0], *_div(_ones_like(a), _zeros_like(b), _d("add.Tensor", ea, _num(1.0), 1), eb))


@rule("eq.Tensor", "ne.Tensor")
def _eq(op, args, outs):
    (a, b), (c, d) = _parts(args[0]), _parts(args[1])
    same = _d("logical_and", _d("eq.Tensor", a, c), _d("eq.Tensor", b, d))
    B.door("copy_", outs[0], same if op == "eq.Tensor" else _d("logical_not", same), False)


@rule("where.self")
def _where(op, args, outs):
    cond, x, y = args
    rx = view_as_real(x)
    c = _d("expand", _d("unsqueeze", cond, -1), list(rx._tn_sizes), False)
    B.launch("where.self", (c, rx, view_as_real(y)), (view_as_real(outs[0]),))


@rule("sum.dim_IntList")
def _sum(op, args, outs):
    x, dims, keepdim = args[0], args[1], args[2]
    if not x._tn_sizes:  # a 0-dim sum is a copy; [] on the real view would reduce the parts too
        B.door("copy_", outs[0], x, False)
        return
    B.launch(op, (view_as_real(x), list(dims), keepdim, *args[3:]), (view_as_real(outs[0]),))


@rule("fill_.Scalar")
def _fill(op, args, outs):
    v = complex(args[1])
    a, b = _parts(args[0])
    B.launch("fill_.Scalar", (a, v.real), (a,))
    B.launch("fill_.Scalar", (b, v.imag), (b,))


@rule("copy_")
def _copy(op, args, outs):
    dst, src = args[0], args[1]
    if _is_complex(dst) and _is_complex(src):
        B.launch("copy_", (view_as_real(dst), view_as_real(src), False), (view_as_real(dst),))
    elif _is_complex(dst):  # a real value is the real part; the imaginary part is zero
        a, b = _parts(dst)
        B.launch("copy_", (a, src, False), (a,))
        B.launch("fill_.Scalar", (b, 0), (b,))
    elif B.dtype_of(dst) is B.BOOL:  # a complex number is true when either part is nonzero
        a, b = _parts(src)
        B.launch("copy_", (dst, _d("logical_or", _d("ne.Scalar", a, 0), _d("ne.Scalar", b, 0)), False), (dst,))
    else:  # complex to real keeps the real part, with upstream's copy_ warning
        import warnings

        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
        a, _ = _parts(src)
        B.launch("copy_", (dst, a, False), (dst,))


def _complex_matmul(op, args, outs):
    (a, b), (c, d) = _parts(args[0]), _parts(args[1])
    mm = lambda x, y: _d(op, x, y)  # noqa: E731
    _store(outs[0], _d("sub.Tensor", mm(a, c), mm(b, d), 1), _d("add.Tensor", mm(a, d), mm(b, c), 1))


RULES["mm"] = RULES["bmm"] = _complex_matmul


@rule("addmm")
def _addmm(op, args, outs):
    bias, mat1, mat2, beta, alpha = args
    prod = _d("mm", mat1, mat2)
    if alpha != 1:
        prod = _d("mul.Tensor", prod, _number(alpha))
    if beta != 0:
        scaled = bias if beta == 1 else _d("mul.Tensor", bias, _number(beta))
        prod = _d("add.Tensor", scaled, prod, 1)
    B.door("copy_", outs[0], prod, False)


# --- operator steps that differ for complex inputs ---------------------------------------------

def _wrap(name, fn):
    """Puts `fn` in front of the implementation of `name` for complex inputs."""
    plain = IMPLS[name]

    def step(self, *args, **kwargs):
        if _is_complex(self):
            return fn(self, *args, **kwargs)
        return plain(self, *args, **kwargs)

    step.__name__ = name
    impl(name)(step)


def _abs(self):
    return _d("hypot", *_parts(self))


def _angle(self):
    a, b = _parts(self)
    return _d("atan2", b, a)


def _conj(self):
    a, b = _parts(self)
    out = B.call("empty_like", self)
    _store(out, a, _d("neg", b))
    return out


def _sgn(self):
    """z / |z|, and 0 where z is 0 (upstream's sgn)."""
    a, b = _parts(self)
    r = _d("hypot", a, b)
    zero = _d("eq.Scalar", r, 0)
    out = B.call("empty_like", self)
    _store(out, _d("where.self", zero, _zeros_like(a), _d("div.Tensor", a, r)),
           _d("where.self", zero, _zeros_like(b), _d("div.Tensor", b, r)))
    return out


def _classifier(name):
    join = "logical_and" if name == "isfinite" else "logical_or"
    return lambda self: _d(join, _d(name, _parts(self)[0]), _d(name, _parts(self)[1]))


for _name in ("isnan", "isinf", "isfinite"):  # the real kernels would read the parts as one value
    _wrap(_name, _classifier(_name))


_wrap("abs", _abs)


_wrap("angle", _angle)


_wrap("conj", lambda self: _d("_conj", self))  # upstream's conj is _conj (ConjBackward0) for complex


_wrap("sgn", _sgn)


impl("_conj_physical")(_conj)


impl("_conj")(_conj)
