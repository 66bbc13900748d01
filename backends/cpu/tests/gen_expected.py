#!/usr/bin/env python
"""Golden cases for the torchnative-cpu kernels, computed by upstream torch 2.13.0.

Run with the reference interpreter (upstream torch, not ours), from the repository root:

    ~/.cache/torchnative/ref-2.13.0/bin/python backends/cpu/tests/gen_expected.py [family ...]

It writes `backends/cpu/tests/golden/<family>.txt`; `cargo test -p torchnative-cpu` replays every
case through the registered `extern "C"` kernel (src/golden.rs) and compares.

Each case calls the upstream ATen overload directly (`torch.ops.aten.<name>.<overload>`) with the
arguments a kernel receives under docs/design/kernel-conventions.md: every schema argument in
order, operands already broadcast (stride-0 views) and cast to the computation dtype, reduction
dims normalised. Tensor arguments are written as their whole storage plus sizes, strides and
storage offset, so non-contiguous and expanded views reach the kernel as views.

Format (one item per line, space separated; `-` is an empty list):
    case <name> <op overload>
    tol exact | tol ulp <n> | tol close <rtol> <atol>
    arg T <dtype code> <sizes> <strides> <offset> <storage hex>
    arg I <int> | arg F <f64 bits hex> | arg B 0|1 | arg N | arg S <str> | arg D <dtype code>
    arg L <ints> | arg FL <f64 bits hex,...> | arg TL <n>  (then n lines `T ...` or `N`)
    out <dtype> <sizes> <contiguous data hex>        an output the core allocates
    dynout <dtype> <sizes> <data hex>               a data-dependent output (ctx.alloc_output)
    alias <out index> <arg index> <storage hex>      an output that is a mutated argument
    error <Runtime|Index|Value|Type|NotImplemented> <message>
    end
`tol exact` is bit equality (any NaN equals any NaN); `ulp n` allows n units in the last place.
"""

import math
import os
import struct
import sys
import zlib

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "golden")

CODES = {
    torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4,
    torch.float16: 5, torch.float32: 6, torch.float64: 7, torch.complex64: 9, torch.complex128: 10, torch.bool: 11,
    torch.bfloat16: 15,
}
# Subclasses first: NotImplementedError is a RuntimeError.
KINDS = {NotImplementedError: "NotImplemented", IndexError: "Index", ValueError: "Value", TypeError: "Type",
         RuntimeError: "Runtime"}

u8, i8, i16, i32, i64 = torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64
f16, bf16, f32, f64, b8 = torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.bool
FLOATS = [f32, f64, f16, bf16]
INTS = [u8, i8, i16, i32, i64]
ALL = INTS + FLOATS + [b8]


class L(list):
    """An `int[]` argument."""


class FL(list):
    """A `float[]` argument."""


SEED_OFFSET = 0


def seed_of(*parts):
    """A seed stable across runs (Python's str hash is salted per process)."""
    return zlib.crc32(repr(parts).encode()) % 1000 + SEED_OFFSET


def csv(xs):
    return ",".join(str(int(x)) for x in xs) if len(xs) else "-"


def fbits(v):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", float(v)))[0]


def storage_hex(t):
    b = bytes(t.untyped_storage())
    return b.hex() if b else "-"


def tensor_line(t):
    return "T %d %s %s %d %s" % (CODES[t.dtype], csv(t.shape), csv(t.stride()), t.storage_offset(), storage_hex(t))


def data_hex(t):
    b = bytes(t.contiguous().clone().untyped_storage())
    return b.hex() if b else "-"


def arg_lines(a):
    if isinstance(a, torch.Tensor):
        return ["arg " + tensor_line(a)]
    if a is None:
        return ["arg N"]
    if isinstance(a, bool):
        return ["arg B %d" % a]
    if isinstance(a, int):
        return ["arg I %d" % a]
    if isinstance(a, float):
        return ["arg F " + fbits(a)]
    if isinstance(a, str):
        return ["arg S " + a]
    if isinstance(a, torch.dtype):
        return ["arg D %d" % CODES[a]]
    if isinstance(a, L):
        return ["arg L " + csv(a)]
    if isinstance(a, FL):
        return ["arg FL " + (",".join(fbits(x) for x in a) if a else "-")]
    if isinstance(a, (list, tuple)):
        return ["arg TL %d" % len(a)] + [("N" if x is None else tensor_line(x)) for x in a]
    raise TypeError(a)


def to_meta(a):
    if isinstance(a, torch.Tensor):
        return torch.empty_strided(a.shape, a.stride(), dtype=a.dtype, device="meta")
    if isinstance(a, (list, tuple)) and not isinstance(a, (L, FL)):
        return [to_meta(x) for x in a]
    return a


class Family:
    def __init__(self, name):
        self.name = name
        self.lines = []
        self.names = set()

    def case(self, name, op, args, tol=("exact",), alias=None, dyn=(), kargs=None):
        """`alias`: {out index: arg index} for outputs that are mutated arguments. `kargs`: the
        arguments as the kernel receives them when they differ from upstream's call (a 0-dim
        operand that the core passes broadcast, say); same values, same order."""
        assert name not in self.names, name
        self.names.add(name)
        alias = alias or {}
        base, _, overload = op.partition(".")
        opp = getattr(getattr(torch.ops.aten, base), overload or "default")
        lines = ["case %s aten::%s" % (name, op), "tol " + " ".join(str(x) for x in tol)]
        for a in (args if kargs is None else kargs):
            lines += arg_lines(a)
        pos, kw = [], {}
        for spec, a in zip(opp._schema.arguments, args):
            if spec.kwarg_only:
                kw[spec.name] = a
            else:
                pos.append(a)
        try:
            res = opp(*pos, **kw)
        except Exception as e:  # noqa: BLE001 - the error is the expected result
            kind = next(v for k, v in KINDS.items() if isinstance(e, k))
            # The core allocates outputs from the meta function before the kernel runs; an error
            # the meta function raises is the core's to raise, and no kernel case.
            try:
                mres = opp(*[to_meta(a) for a in pos], **{k: to_meta(a) for k, a in kw.items()})
            except Exception:  # noqa: BLE001
                print("  %s: skipped, the meta function raises (%s)" % (name, str(e).splitlines()[0]))
                return None
            mouts = list(mres) if isinstance(mres, (tuple, list)) else [mres]
            for i, o in enumerate(mouts):
                if i in alias:
                    lines.append("alias %d %d -" % (i, alias[i]))
                else:
                    lines.append("%s %d %s -" % ("dynout" if i in dyn else "out", CODES[o.dtype], csv(o.shape)))
            lines.append("error %s %s" % (kind, str(e).splitlines()[0]))
            lines.append("end")
            self.lines += lines
            return None
        outs = list(res) if isinstance(res, (tuple, list)) else [res]
        for i, o in enumerate(outs):
            if i in alias:
                lines.append("alias %d %d %s" % (i, alias[i], storage_hex(args[alias[i]])))
            elif i in dyn:
                lines.append("dynout %d %s %s" % (CODES[o.dtype], csv(o.shape), data_hex(o)))
            else:
                lines.append("out %d %s %s" % (CODES[o.dtype], csv(o.shape), data_hex(o)))
        lines.append("end")
        self.lines += lines
        return res

    def write(self):
        os.makedirs(OUT_DIR, exist_ok=True)
        with open(os.path.join(OUT_DIR, self.name + ".txt"), "w") as f:
            f.write("# generated by backends/cpu/tests/gen_expected.py with torch %s; do not edit\n" % torch.__version__)
            f.write("\n".join(self.lines) + "\n")


def nc(t):
    """A non-contiguous view with the same values: every other element of a wider buffer."""
    wide = torch.zeros(t.shape + (2,), dtype=t.dtype)
    wide[..., 0] = t
    return wide[..., 0]


def bcast(t, shape):
    """`t` expanded (stride 0) to `shape`."""
    return t.expand(shape)


def rnd(shape, dtype, lo=-3.0, hi=3.0, seed=0):
    g = torch.Generator().manual_seed(seed + SEED_OFFSET)
    x = torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo
    if dtype == b8:
        return x > (lo + hi) / 2
    if dtype.is_floating_point:
        return x.to(dtype)
    return x.round().to(dtype)


# --------------------------------------------------------------------------------------------
# copy_ / fill_

def gen_copy():
    fam = Family("copy")
    vals = [300.7, -300.7, 1e10, -1e10, float("nan"), float("inf"), -float("inf"), 255.9, -1.5, 128.5,
            -129.5, 3e9, -3e9, 65535.5, 70000.2, -40000.0, 1e19, -1e19, 2147483648.0, -2147483649.0,
            4294967301.0, 0.0, -0.0, 0.5, -0.5, 1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -8 + 2 ** -40, 65520.0]
    ints = [0, 1, -1, 127, 128, 255, 256, -129, 32767, 32768, -32769, 2 ** 31, -(2 ** 31) - 1, 2 ** 24 + 1,
            2 ** 53 + 1, 65519, 65520, 2 ** 63 - 1, -(2 ** 63)]
    for sdt in ALL:
        if sdt.is_floating_point:
            src = torch.tensor(vals, dtype=f64).to(sdt)
        elif sdt == b8:
            src = torch.tensor([True, False, True, True, False])
        else:
            src = torch.tensor(ints, dtype=i64).to(sdt)
        for ddt in ALL:
            dst = torch.zeros(src.shape, dtype=ddt)
            fam.case("copy_%s_to_%s" % (str(sdt)[6:], str(ddt)[6:]), "copy_", [dst, src, False], alias={0: 0})
    # strided: transposed destination, stride-0 source, sliced source with offset.
    base = rnd((4, 6), f32, seed=1)
    dst = torch.zeros(6, 4, dtype=f64).t()
    fam.case("copy_transposed_dst_f32_to_f64", "copy_", [dst, base, False], alias={0: 0})
    row = rnd((1, 6), i32, seed=2)
    fam.case("copy_broadcast_src_i32_to_f16", "copy_", [torch.zeros(4, 6, dtype=f16), bcast(row, (4, 6)), False], alias={0: 0})
    src = rnd((5, 7), bf16, seed=3)[1:4, 2:7:2]
    fam.case("copy_sliced_src_bf16_to_f32", "copy_", [torch.zeros(3, 3), src, False], alias={0: 0})
    dst = torch.zeros(3, 8, dtype=i64)[:, 1::3]
    fam.case("copy_sliced_dst_f64_to_i64", "copy_", [dst, rnd((3, 3), f64, -100, 100, seed=4), False], alias={0: 0})
    fam.case("copy_0dim", "copy_", [torch.zeros((), dtype=u8), torch.tensor(-3.5), False], alias={0: 0})
    fam.case("copy_empty", "copy_", [torch.zeros(0, 3), torch.zeros(0, 3, dtype=f64), False], alias={0: 0})
    fam.case("copy_same_dtype_nc", "copy_", [nc(torch.zeros(3, 4, dtype=i16)), rnd((4, 3), i16, seed=5).t(), False], alias={0: 0})
    # fill_.Scalar, including upstream's overflow checks.
    for dt, v in [(u8, 300), (u8, -1), (u8, -255), (u8, -256), (u8, -1.5), (u8, 255.5), (i8, 1e10), (i8, 3.7),
                  (i8, -128.9), (i16, 40000), (i32, 2 ** 40), (i64, float("nan")), (i64, 9.3e18),
                  (i64, 2 ** 63 - 1), (b8, 2), (b8, float("nan")), (b8, 0.0), (f16, 1e6), (f16, 70000),
                  (f16, 65519.0), (f16, -65504.0), (f16, float("inf")), (bf16, 1e300), (bf16, 1.00390625),
                  (f32, 1e300), (f32, float("nan")), (f32, 0.1), (f64, 0.1), (f64, True), (i32, False), (f32, 7)]:
        name = "fill_%s_%s" % (str(dt)[6:], str(v).replace("-", "m").replace(".", "p").replace("+", ""))
        fam.case(name, "fill_.Scalar", [nc(torch.zeros(2, 3, dtype=dt)), v], alias={0: 0})
    return fam


# --------------------------------------------------------------------------------------------
# elementwise binary

NAN, INF = float("nan"), float("inf")
FSPECIAL = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 1e-3, 7.0]


def vals(dt, shape, seed, kind="any"):
    """Values of `dt`: floats include NaN/inf/±0 (kind "any"), or stay finite ("finite"),
    positive ("pos") or non-zero ("nonzero"); ints span negatives unless unsigned."""
    n = 1
    for d in shape:
        n *= d
    g = torch.Generator().manual_seed(seed + SEED_OFFSET)
    if dt == b8:
        return (torch.rand(n, generator=g) > 0.5).reshape(shape)
    if dt.is_floating_point:
        x = (torch.rand(n, generator=g, dtype=f64) * 8 - 4)
        if kind == "any":
            k = min(n, len(FSPECIAL))
            x[:k] = torch.tensor(FSPECIAL[:k], dtype=f64)[torch.randperm(k, generator=g)]
        elif kind == "pos":
            x = x.abs() + 0.1
        elif kind == "nonzero":
            x = torch.where(x.abs() < 0.1, torch.full_like(x, 0.75), x)
        return x.to(dt).reshape(shape)
    lo, hi = (0, 40) if dt == u8 else (-20, 20)
    if dt == i8:
        lo, hi = -128, 127
    x = torch.randint(lo, hi + 1, (n,), generator=g, dtype=i64)
    if kind in ("nonzero", "pos"):
        x = torch.where(x == 0, torch.full_like(x, 3), x)
        if kind == "pos":
            x = x.abs()
    return x.to(dt).reshape(shape)


def layouts(dt, seed, kind_a="any", kind_b="any"):
    """(tag, a, b) operand pairs of shape (3, 4): contiguous, `b` a broadcast row, and `a`
    non-contiguous with `b` a non-contiguous transposed view."""
    a = vals(dt, (3, 4), seed, kind_a)
    b = vals(dt, (3, 4), seed + 1, kind_b)
    row = vals(dt, (1, 4), seed + 2, kind_b)
    bt = vals(dt, (4, 3), seed + 3, kind_b).t()
    return [("c", a, b), ("bc", a, bcast(row, (3, 4))), ("nc", nc(a), bt)]


def dn(dt):
    return str(dt)[6:]


def gen_binary():
    fam = Family("binary")
    ulp = ("ulp", 2)

    def each(op, dtypes, extra=(), tol=("exact",), kind_a="any", kind_b="any", tag=""):
        for dt in dtypes:
            for lay, a, b in layouts(dt, seed_of(op, dn(dt)), kind_a, kind_b):
                fam.case("%s%s_%s_%s" % (op.replace(".", "_"), tag, dn(dt), lay), op, [a, b, *extra], tol=tol)

    each("add.Tensor", FLOATS + INTS + [b8], [1])
    # Upstream computes `self + alpha * other` with one fused multiply-add in its vectorised
    # loop, but rounds `alpha * other` to the dtype first in its scalar loop (non-contiguous
    # inputs, loop tails); for f16/bf16 the two differ by an ulp of `alpha * other`, which can
    # be a few ulps of the sum. We follow the vectorised loop; the tolerance is 2 eps of the dtype.
    each("add.Tensor", FLOATS[:2], [0.3], tag="_alpha03")
    each("add.Tensor", [f16], [0.3], tag="_alpha03", tol=("close", 2e-3, 2e-3))
    each("add.Tensor", [bf16], [0.3], tag="_alpha03", tol=("close", 1.6e-2, 1.6e-2))
    each("add.Tensor", INTS, [3], tag="_alpha3")
    each("add.Tensor", [b8], [True], tag="_alphaT")
    each("sub.Tensor", FLOATS + INTS, [1])
    each("sub.Tensor", FLOATS[:2], [-2.5], tag="_alpham25")
    each("sub.Tensor", [f16], [-2.5], tag="_alpham25", tol=("close", 2e-3, 2e-3))
    each("sub.Tensor", [bf16], [-2.5], tag="_alpham25", tol=("close", 1.6e-2, 1.6e-2))
    each("sub.Tensor", INTS, [2], tag="_alpha2")
    a = vals(f32, (3, 4), 5)
    fam.case("add_Tensor_int_float_alpha", "add.Tensor", [vals(i32, (2,), 1), vals(i32, (2,), 2), 0.5])
    fam.case("add_Tensor_u8_alpha_overflow", "add.Tensor", [vals(u8, (2,), 1), vals(u8, (2,), 2), 300])
    fam.case("sub_Tensor_bool", "sub.Tensor", [vals(b8, (2,), 1), vals(b8, (2,), 2), 1])
    each("mul.Tensor", FLOATS + INTS + [b8])
    each("div.Tensor", FLOATS)
    each("div.Tensor_mode", FLOATS, ["trunc"], tag="_trunc")
    each("div.Tensor_mode", FLOATS, ["floor"], tag="_floor")
    each("div.Tensor_mode", INTS, ["trunc"], tag="_trunc", kind_b="nonzero")
    each("div.Tensor_mode", INTS, ["floor"], tag="_floor", kind_b="nonzero")
    each("div.Tensor_mode", FLOATS[:1], [None], tag="_none")
    each("remainder.Tensor", FLOATS + INTS, kind_b="nonzero")
    each("remainder.Tensor", FLOATS, tag="_special")
    each("fmod.Tensor", FLOATS + INTS, kind_b="nonzero")
    each("fmod.Tensor", FLOATS, tag="_special")
    for dt in INTS:
        x = vals(dt, (4,), 7)
        z = torch.tensor([1, 0, 2, 3], dtype=dt)
        fam.case("div_trunc_zero_%s" % dn(dt), "div.Tensor_mode", [x, z, "trunc"])
        fam.case("div_floor_zero_%s" % dn(dt), "div.Tensor_mode", [x, z, "floor"])
        fam.case("remainder_zero_%s" % dn(dt), "remainder.Tensor", [x, z])
        fam.case("fmod_zero_%s" % dn(dt), "fmod.Tensor", [x, z])
    bt = torch.tensor([True, False])
    fam.case("div_floor_bool", "div.Tensor_mode", [bt, bt, "floor"])
    fam.case("remainder_bool", "remainder.Tensor", [bt, bt])
    fam.case("pow_bool", "pow.Tensor_Tensor", [bt, bt])
    fam.case("div_bad_mode", "div.Tensor_mode", [a, a, "round"]) if False else None
    # Python floor-division corner cases.
    f = torch.tensor([5., -5., 5., -5., 0., -0., 1., NAN, 3., -3., 3., 7.5, -7.5, 1e30, -1e-30])
    g = torch.tensor([3., 3., -3., -3., -3., 3., 0., 1., INF, INF, -INF, 0.5, 2.5, 1e-30, 7.])
    for dt in FLOATS:
        fam.case("div_floor_corners_%s" % dn(dt), "div.Tensor_mode", [f.to(dt), g.to(dt), "floor"])
        fam.case("remainder_corners_%s" % dn(dt), "remainder.Tensor", [f.to(dt), g.to(dt)])
        fam.case("fmod_corners_%s" % dn(dt), "fmod.Tensor", [f.to(dt), g.to(dt)])
    i8v = torch.tensor([-7, 7, -7, 7, 0, -128], dtype=i8)
    j8v = torch.tensor([2, -2, -2, 2, 3, -1], dtype=i8)
    for op, extra in [("div.Tensor_mode", ["floor"]), ("div.Tensor_mode", ["trunc"]), ("remainder.Tensor", []), ("fmod.Tensor", [])]:
        fam.case("%s%s_i8_signs" % (op.replace(".", "_"), "_" + extra[0] if extra else ""), op, [i8v, j8v, *extra])
    # Reduced floats: a scalar `other` in its original dtype (f64) is read at f32 by mul/div
    # and narrowed by add/sub (upstream's `original_scalar_value<opmath_t>`).
    for dt in [f16, bf16]:
        h = vals(dt, (40,), 11, "finite")
        for op, extra in [("mul.Tensor", []), ("div.Tensor", []), ("add.Tensor", [1]), ("sub.Tensor", [1]),
                          ("div.Tensor_mode", ["floor"]), ("div.Tensor_mode", ["trunc"]), ("add.Tensor", [2.5])]:
            s = torch.tensor(0.1 if op != "div.Tensor_mode" else 0.3, dtype=f64)
            # alpha != 1: upstream's vector loop fuses, its scalar tail rounds alpha*other (see above).
            t = ("close", 2e-3, 2e-3) if dt == f16 else ("close", 1.6e-2, 1.6e-2)
            fam.case("%s_%s_f64scalar_%s" % (op.replace(".", "_"), dn(dt), "_".join(map(str, extra))), op,
                     [h, s, *extra], kargs=[h, s.expand(40), *extra], tol=t if extra and extra[0] != 1 else ("exact",))
    # Integer powers, including negative exponents and wrapping.
    pa = torch.tensor([2, -1, -1, 1, 0, 3, 0, -2, 5, 2], dtype=i64)
    pb = torch.tensor([-1, -3, -2, -5, -1, 40, 0, 63, 3, 10], dtype=i64)
    for dt in [i8, i16, i32, i64]:
        fam.case("pow_int_%s" % dn(dt), "pow.Tensor_Tensor", [pa.to(dt), pb.to(dt)])
    fam.case("pow_int_u8", "pow.Tensor_Tensor", [torch.tensor([2, 3, 0, 7], dtype=u8), torch.tensor([9, 255, 0, 2], dtype=u8)])
    each("pow.Tensor_Tensor", FLOATS, tol=ulp)
    each("pow.Tensor_Tensor", FLOATS, tol=ulp, kind_a="pos", tag="_pos")
    # maximum/minimum: no ±0 ties (upstream's scalar and vector paths disagree on them).
    for op in ["maximum", "minimum"]:
        for dt in FLOATS + INTS + [b8]:
            for lay, a, b in layouts(dt, 21, "any", "any"):
                if dt.is_floating_point:
                    b = torch.where(b == 0, torch.full_like(b, 0.25), b)
                fam.case("%s_%s_%s" % (op, dn(dt), lay), op, [a, b])
    each("atan2", FLOATS, tol=ulp)
    # hypot: upstream's Sleef/std::hypot, ours float64 hypot rounded once; overflow-safe at the extremes
    each("hypot", FLOATS, tol=ulp)
    big = torch.tensor([3e38, -3e38, 1e-45, 0.0, INF, NAN, -INF, 5.0])
    small = torch.tensor([4e38, 3e38, 1e-45, -0.0, NAN, INF, 1.0, -12.0])
    fam.case("hypot_extremes_f32", "hypot", [big, small])
    fam.case("hypot_extremes_f64", "hypot", [big.double() * 1e270, small.double() * 1e270])
    for op in ["bitwise_and.Tensor", "bitwise_or.Tensor", "bitwise_xor.Tensor"]:
        each(op, INTS + [b8])
    fam.case("bitwise_and_float", "bitwise_and.Tensor", [a, a])
    # shifts, gcd, lcm: every integer dtype, with counts out of range (negative, >= the width) and
    # the type's extremes
    g = torch.Generator().manual_seed(61 + SEED_OFFSET)
    for dt in INTS:
        info = torch.iinfo(dt)
        x = torch.randint(info.min, info.max, (6, 8), generator=g, dtype=i64).to(dt)
        x[0, :4] = torch.tensor([info.min, info.max, 0, -1 if info.min < 0 else 1]).to(dt)
        n = torch.randint(-3 if info.min < 0 else 0, 70 if dt != u8 else 255, (6, 8), generator=g, dtype=i64).to(dt)
        small = torch.randint(-40 if info.min < 0 else 0, 40, (6, 8), generator=g, dtype=i64).to(dt)
        for op in ["bitwise_left_shift.Tensor", "bitwise_right_shift.Tensor"]:
            fam.case("%s_%s" % (op.split(".")[0], dn(dt)), op, [x, n])
            fam.case("%s_%s_t" % (op.split(".")[0], dn(dt)), op, [x.t(), n.t()])
        for op in ["gcd", "lcm"]:
            fam.case("%s_%s" % (op, dn(dt)), op, [x, small])
            fam.case("%s_small_%s" % (op, dn(dt)), op, [small, small.flip(0)])
    fam.case("lshift_float", "bitwise_left_shift.Tensor", [a, a])
    fam.case("gcd_float", "gcd", [a, a])
    bl = torch.tensor([True, False, True, False])
    fam.case("clamp_Tensor_bool_min", "clamp.Tensor", [bl, torch.tensor([False, False, True, True]), None])
    fam.case("clamp_Tensor_bool_max", "clamp.Tensor", [bl, None, torch.tensor([False, True, True, False])])
    for op in ["logical_and", "logical_or", "logical_xor"]:
        each(op, FLOATS + INTS + [b8])
    for op in ["eq.Tensor", "ne.Tensor", "lt.Tensor", "le.Tensor", "gt.Tensor", "ge.Tensor"]:
        each(op, FLOATS + INTS + [b8])
    for dt in FLOATS + INTS + [b8]:
        for lay, a, b in layouts(dt, 31):
            cond = vals(b8, (3, 4), 32)
            fam.case("where_self_%s_%s" % (dn(dt), lay), "where.self", [cond, a, b])
    x = vals(f32, (3, 4), 33)
    fam.case("where_self_u8cond", "where.self", [vals(b8, (3, 4), 34).to(u8), x, bcast(vals(f32, (1, 4), 35), (3, 4))])
    fam.case("where_self_cond_bcast", "where.self", [bcast(vals(b8, (3, 1), 36), (3, 4)), x, nc(vals(f32, (3, 4), 37))])
    # clamp with Scalar bounds.
    for dt in FLOATS + INTS:
        x = vals(dt, (3, 4), 41) if dt.is_floating_point else vals(dt, (3, 4), 41)
        for lo, hi, tag in [(-1, 2, "both"), (None, 1, "max"), (0, None, "min"), (2, -1, "inverted")]:
            if dt.is_floating_point:
                lo = None if lo is None else lo + 0.5
            fam.case("clamp_%s_%s" % (dn(dt), tag), "clamp", [nc(x), lo, hi])
    x = vals(f32, (3, 4), 42)
    fam.case("clamp_nan_min", "clamp", [x, NAN, 1.0])
    fam.case("clamp_nan_max", "clamp", [x, None, NAN])
    fam.case("clamp_u8_overflow", "clamp", [vals(u8, (3,), 43), None, 300])
    fam.case("clamp_u8_wrap", "clamp", [vals(u8, (3,), 43), -1, None])
    fam.case("clamp_f16_overflow", "clamp", [vals(f16, (3,), 43), -1e6, None])
    for dt in FLOATS + INTS:
        x = vals(dt, (3, 4), 44)
        lo = vals(dt, (3, 4), 45)
        hi = lo + (1 if not dt.is_floating_point else 0.5) if dt != u8 else lo + 1
        if dt.is_floating_point:
            lo = torch.where(lo == 0, torch.full_like(lo, 0.25), lo)
            hi = torch.where(hi == 0, torch.full_like(hi, 0.25), hi)
            x = torch.where(x == 0, torch.full_like(x, 0.125), x)
        fam.case("clamp_Tensor_%s_both" % dn(dt), "clamp.Tensor", [x, lo, nc(hi)])
        fam.case("clamp_Tensor_%s_min" % dn(dt), "clamp.Tensor", [nc(x), bcast(lo[:1], (3, 4)), None])
        fam.case("clamp_Tensor_%s_max" % dn(dt), "clamp.Tensor", [x, None, hi])
    # In-place variants: same kernels, `self` is the output.
    for op in ["add_.Tensor", "sub_.Tensor", "mul_.Tensor", "div_.Tensor", "div_.Tensor_mode"]:
        for dt in [f32, bf16]:
            a = nc(vals(dt, (3, 4), 51))
            b = bcast(vals(dt, (1, 4), 52, "nonzero"), (3, 4))
            extra = {"add_.Tensor": [2], "sub_.Tensor": [1], "div_.Tensor_mode": ["floor"]}.get(op, [])
            fam.case("%s_%s" % (op.replace(".", "_"), dn(dt)), op, [a, b, *extra], alias={0: 0})
    return fam


# --------------------------------------------------------------------------------------------
# elementwise unary

def unary_layouts(dt, seed, kind="any", shape=(3, 4)):
    """(tag, x): contiguous, non-contiguous, and a stride-0 expansion of a row."""
    x = vals(dt, shape, seed, kind)
    row = vals(dt, (1, shape[1]), seed + 1, kind)
    return [("c", x), ("nc", nc(x)), ("bc", bcast(row, shape))]


def gen_unary():
    fam = Family("unary")

    def each(op, dtypes, extra=(), tol=("exact",), kind="any", tag="", inplace=False):
        for dt in dtypes:
            for lay, x in unary_layouts(dt, seed_of(op, dn(dt), tag), kind):
                if inplace:
                    if lay == "bc":
                        continue
                    x = x.clone() if lay == "c" else nc(x.clone())
                fam.case("%s%s_%s_%s" % (op.replace(".", "_"), tag, dn(dt), lay), op, [x, *extra], tol=tol,
                         alias={0: 0} if inplace else None)

    exact_float = ["abs", "neg", "floor", "ceil", "trunc", "round", "frac", "sqrt", "reciprocal"]
    for op in exact_float:
        each(op, FLOATS)
    # Upstream's f16/bf16 rsqrt is off the correctly rounded 1/sqrt in about 2 of 10^4 inputs.
    each("rsqrt", FLOATS[:2])
    each("rsqrt", FLOATS[2:], tol=("ulp", 1))
    for op in ["abs", "neg", "floor", "ceil", "trunc", "round"]:
        each(op, INTS)
    fam.case("abs_bool", "abs", [torch.tensor([True, False])])
    fam.case("floor_bool", "floor", [torch.tensor([True, False])])
    each("sign", FLOATS + INTS + [b8])
    ulp2 = ("ulp", 2)
    for op in ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
               "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc", "silu"]:
        each(op, FLOATS, tol=ulp2)
    # Domain-specific values: inside (-1, 1) for atanh/asin/acos/erfinv, >= 1 for acosh, > 0 for logs.
    for op in ["asin", "acos", "atanh", "erfinv"]:
        for dt in FLOATS:
            x = vals(dt, (3, 4), 61, "finite") / 4.5
            fam.case("%s_domain_%s" % (op, dn(dt)), op, [nc(x)], tol=("ulp", 4))
    each("erfinv", FLOATS, tol=("ulp", 4))
    for op in ["log", "log2", "log10", "log1p", "acosh"]:
        for dt in FLOATS:
            x = vals(dt, (3, 4), 62, "pos") + 1.0
            fam.case("%s_domain_%s" % (op, dn(dt)), op, [x], tol=ulp2)
    for d in [0, 1, 2, 3, -1, -2]:
        for dt in FLOATS:
            x = vals(dt, (3, 4), 63, "finite") * 123.456
            fam.case(("round_decimals_%d_%s" % (d, dn(dt))).replace("-", "m"), "round.decimals", [nc(x), d])
    x = torch.tensor([1.2345, -1.2355, 1234.5, 0.125, 2.5, -0.5, 1250.0, 1350.0])
    for d in [2, -2, 0]:
        fam.case("round_decimals_ties_%d" % d if d >= 0 else "round_decimals_ties_m%d" % -d, "round.decimals", [x, d])
    fam.case("round_ties_even", "round", [torch.tensor([-0.5, 0.5, 1.5, 2.5, -2.5, 2.4999, -0.0, 1e30])])
    each("relu", FLOATS + INTS)
    fam.case("relu_bool", "relu", [torch.tensor([True])])
    # gelu: upstream's vectorised erf (contiguous inputs) gives NaN at +inf, its scalar path
    # (std::erf) gives +inf; we follow the scalar path, so infinities are only tested there.
    # Upstream's vectorised f32 gelu uses a polynomial erf (Abramowitz-Stegun 7.1.26, absolute
    # error ~1e-7), so where 1 + erf(x) cancels (x < -2) it is off by hundreds of ulps; we use
    # libm's erf. The tolerance for f32 is therefore absolute.
    each("gelu", [f32], ["none"], tol=("close", 1e-5, 1e-6), tag="_none", kind="finite")
    each("gelu", [f64, f16, bf16], ["none"], tol=("ulp", 4), tag="_none", kind="finite")
    each("gelu", FLOATS, ["tanh"], tol=("ulp", 4), tag="_tanh", kind="finite")
    for approx in ["none", "tanh"]:
        for dt in FLOATS:
            fam.case("gelu_%s_special_%s_nc" % (approx, dn(dt)), "gelu",
                     [nc(torch.tensor([NAN, INF, -INF, 0.0, -0.0, 1e-30, 5.0, -5.0], dtype=dt)), approx], tol=("ulp", 4))
    each("softplus", FLOATS, [1, 20], tol=("ulp", 4))
    each("softplus", FLOATS[:2], [2.0, 1.5], tol=("ulp", 4), tag="_b2t15")
    each("leaky_relu", FLOATS, [0.01])
    each("leaky_relu", FLOATS, [-1.5], tag="_neg")
    each("elu", FLOATS, [1, 1, 1], tol=("ulp", 4))
    each("elu", FLOATS, [0.5, 1.0507, 2.0], tol=("ulp", 4), tag="_scaled")
    each("hardtanh", FLOATS + INTS, [-1, 1])
    each("hardtanh", FLOATS, [-0.5, 2.5], tag="_wide")
    each("logical_not", FLOATS + INTS + [b8])
    each("bitwise_not", INTS + [b8])
    for op in ["isnan", "isinf", "isfinite"]:
        each(op, FLOATS + INTS + [b8])
    each("nan_to_num", FLOATS, [None, None, None])
    each("nan_to_num", FLOATS, [1.5, 1e10, -2.0], tag="_given")
    each("nan_to_num", INTS, [3.0, None, None])
    # In-place forms: the same kernels, `self` is the output.
    for op, extra, tol in [("abs_", [], ("exact",)), ("neg_", [], ("exact",)), ("exp_", [], ulp2), ("tanh_", [], ulp2),
                           ("sigmoid_", [], ulp2), ("silu_", [], ulp2), ("relu_", [], ("exact",)),
                           ("gelu_", ["tanh"], ("ulp", 4)), ("hardtanh_", [0.0, 6.0], ("exact",)),
                           ("leaky_relu_", [0.2], ("exact",)), ("elu_", [1.0, 1.0, 1.0], ("ulp", 4))]:
        each(op, [f32, bf16], extra, tol=tol, inplace=True)
    return fam


# --------------------------------------------------------------------------------------------
# reductions

def red_inputs(dt, seed, kind="finite"):
    """(tag, x) 3-d inputs: contiguous (2,3,4), a transposed view, and a stride-0 expansion."""
    x = vals(dt, (2, 3, 4), seed, kind)
    t = vals(dt, (4, 3, 2), seed + 1, kind).permute(2, 1, 0)
    e = bcast(vals(dt, (2, 1, 4), seed + 2, kind), (2, 3, 4))
    return [("c", x), ("t", t), ("e", e)]


def gen_reduce():
    fam = Family("reduce")
    dimsets = [[2], [0], [0, 2], [0, 1, 2], [1]]

    def sum_tol(dt):
        # We accumulate f32 in f64 (the correctly rounded sum); upstream's vectorised cascade in
        # f32 is off by its own rounding error, a few ulps of the inputs' scale when terms cancel.
        if dt == f32:
            return ("close", 1e-5, 1e-5)
        if dt == f64:
            return ("close", 1e-13, 1e-13)
        return ("exact",) if not dt.is_floating_point else ("ulp", 1)

    for dt in FLOATS + INTS + [b8]:
        for lay, x in red_inputs(dt, 71):
            for dims in dimsets:
                for keep in [False, True]:
                    tag = "%s_%s_%s_%s" % (dn(dt), lay, "".join(map(str, dims)), "k" if keep else "n")
                    fam.case("sum_" + tag, "sum.dim_IntList", [x, L(dims), keep, None], tol=sum_tol(dt))
                    if dims in ([1], [2], [0]):
                        ptol = ("exact",) if not dt.is_floating_point else ("ulp", 4)
                        fam.case("prod_" + tag, "prod.dim_int", [x, dims[0], keep, None], tol=ptol)
                        for op in ["max.dim", "min.dim"]:
                            fam.case("%s_%s" % (op.replace(".", "_"), tag), op, [x, dims[0], keep])
                        if dt != b8:
                            for op in ["argmax", "argmin"]:
                                fam.case("%s_%s" % (op, tag), op, [x, dims[0], keep])
                    for op in ["amax", "amin"]:
                        fam.case("%s_%s" % (op, tag), op, [x, L(dims), keep])
                    for op in ["all.dims", "any.dims"]:
                        fam.case("%s_%s" % (op.replace(".", "_"), tag), op, [x, L(dims), keep])
    # NaN, ties and first occurrences.
    x = torch.tensor([[1., NAN, 3., NAN], [2., 2., -1., 0.], [-0.0, 0.0, 5., 5.]])
    for dt in FLOATS:
        for op in ["max.dim", "min.dim"]:
            for d in [0, 1]:
                fam.case("%s_nan_%s_%d" % (op.replace(".", "_"), dn(dt), d), op, [x.to(dt), d, False])
        for op in ["argmax", "argmin"]:
            fam.case("%s_nan_%s" % (op, dn(dt)), op, [x.to(dt), 1, False])
            fam.case("%s_nan_flat_%s" % (op, dn(dt)), op, [x.to(dt), None, False])
            fam.case("%s_nan_flat_t_%s" % (op, dn(dt)), op, [x.to(dt).t(), None, False])
            fam.case("%s_nan_flat_keep_%s" % (op, dn(dt)), op, [x.to(dt), None, True])
        for op in ["amax", "amin"]:
            fam.case("%s_nan_%s" % (op, dn(dt)), op, [x.to(dt), L([1]), False])
        fam.case("max_all_nan_%s" % dn(dt), "max", [x.to(dt)])
        fam.case("min_all_%s" % dn(dt), "min", [x[1:].to(dt)])
    for op in ["amax", "amin"]:  # an empty dim that is not reduced: an empty result, no error
        fam.case("%s_empty_kept" % op, op, [torch.ones(5, 0, 5), L([0]), False])
        fam.case("%s_empty_kept_keepdim" % op, op, [torch.ones(5, 0, 5), L([2]), True])
    ties = torch.tensor([[3, 1, 3, 1], [2, 2, 2, 2]], dtype=i64)
    for dt in [i64, i32, u8, i8]:
        for op in ["max.dim", "min.dim"]:
            fam.case("%s_ties_%s" % (op.replace(".", "_"), dn(dt)), op, [ties.to(dt), 1, True])
        fam.case("argmax_ties_%s" % dn(dt), "argmax", [ties.to(dt).t(), None, False])
        fam.case("argmin_ties_%s" % dn(dt), "argmin", [ties.to(dt), 0, False])
    big = torch.tensor([2 ** 62 + 1, 2 ** 62 + 3, 2 ** 62 + 2], dtype=i64)
    fam.case("argmax_int64_exact", "argmax", [big, 0, False])
    fam.case("max_dim_int64_exact", "max.dim", [big, 0, False])
    fam.case("sum_int64_wrap", "sum.dim_IntList", [torch.tensor([2 ** 62, 2 ** 62, 2 ** 62], dtype=i64), L([0]), False, None])
    # dtype= arguments: the input converted to the output dtype first.
    x = vals(i32, (3, 4), 73)
    fam.case("sum_i32_to_f64", "sum.dim_IntList", [x, L([1]), False, f64])
    fam.case("sum_i8_to_i8", "sum.dim_IntList", [torch.tensor([[100, 100, 100]], dtype=i8), L([1]), False, i8])
    fam.case("sum_f32_to_f16", "sum.dim_IntList", [vals(f32, (3, 4), 74) * 1000, L([1]), False, f16], tol=("ulp", 1))
    fam.case("sum_f16_to_f32", "sum.dim_IntList", [vals(f16, (3, 4), 75), L([0]), True, f32], tol=("ulp", 1))
    fam.case("sum_f32_to_i64", "sum.dim_IntList", [vals(f32, (3, 4), 76), L([1]), False, i64])
    fam.case("sum_bool", "sum.dim_IntList", [vals(b8, (3, 4), 77), L([0, 1]), False, None])
    fam.case("sum_empty", "sum.dim_IntList", [torch.zeros(0, 3), L([0]), False, None])
    fam.case("sum_full_f32", "sum", [vals(f32, (5, 7), 78), None], tol=("ulp", 1))
    fam.case("sum_full_i32_to_f32", "sum", [vals(i32, (5, 7), 78), f32], tol=("ulp", 1))
    fam.case("prod_full_i64", "prod", [torch.tensor([2 ** 40, 2 ** 30, 3], dtype=i64), None])
    fam.case("prod_full_f32", "prod", [vals(f32, (2, 3), 79), None], tol=("ulp", 2))
    fam.case("prod_dim_bool", "prod.dim_int", [vals(b8, (3, 4), 80), 1, False, None])
    fam.case("prod_dim_i32_f64", "prod.dim_int", [vals(i32, (3, 4), 81), 1, False, f64])
    # Larger sums (the accumulation order matters): rows of 1000.
    for dt in FLOATS:
        xl = vals(dt, (3, 1000), 82, "finite")
        fam.case("sum_long_rows_%s" % dn(dt), "sum.dim_IntList", [xl, L([1]), False, None], tol=sum_tol(dt))
        fam.case("sum_long_cols_%s" % dn(dt), "sum.dim_IntList", [xl.t(), L([0]), False, None], tol=sum_tol(dt))
    # var / std (correction), including the single-output two-pass path and degenerate divisors.
    def vtol(dt, single):
        # f64: Welford (several outputs) is bit-exact; the single-output two-pass path depends on
        # upstream's cascade-sum mean, which we do not replicate: last ulp. f32 is computed in f64
        # and rounded once (rarely a flip); f16/bf16 likewise.
        if dt == f64:
            return ("ulp", 2) if single else ("exact",)
        return ("ulp", 1)

    for dt in FLOATS:
        for lay, x in red_inputs(dt, 83):
            for dims in [[2], [0, 2], [0, 1, 2], [1]]:
                for corr in [None, 0, 2.5]:
                    for op in ["var.correction", "std.correction"]:
                        tag = "%s_%s_%s_%s_%s" % (op.split(".")[0], dn(dt), lay, "".join(map(str, dims)), str(corr).replace(".", "p"))
                        fam.case(tag, op, [x, L(dims), corr, False], tol=vtol(dt, dims == [0, 1, 2]))
        for op in ["var.correction", "std.correction"]:
            fam.case("%s_keep_%s" % (op.split(".")[0], dn(dt)), op, [vals(dt, (3, 5), 84), L([1]), 1, True], tol=vtol(dt, False))
            fam.case("%s_single_row_%s" % (op.split(".")[0], dn(dt)), op, [vals(dt, (1, 50), 85), L([1]), 1, False], tol=vtol(dt, True))
            fam.case("%s_corr_gt_n_%s" % (op.split(".")[0], dn(dt)), op, [vals(dt, (2, 3), 86), L([1]), 5, False], tol=vtol(dt, False))
            fam.case("%s_one_elem_%s" % (op.split(".")[0], dn(dt)), op, [vals(dt, (1,), 87), L([0]), None, False], tol=vtol(dt, True))
            fam.case("%s_long_%s" % (op.split(".")[0], dn(dt)), op, [vals(dt, (2000,), 88) + 100, L([0]), None, False], tol=vtol(dt, True))
        # var_mean / std_mean: one Welford pass for every shape (upstream's std_var_mean_out)
        for op in ["var_mean.correction", "std_mean.correction"]:
            for lay, x in red_inputs(dt, 83):
                for dims, corr in [([2], None), ([0, 1, 2], 0)]:
                    tag = "%s_%s_%s_%s" % (op.split(".")[0], dn(dt), lay, "".join(map(str, dims)))
                    fam.case(tag, op, [x, L(dims), corr, False], tol=vtol(dt, False))
    # all / any: every dtype; uint8 gives uint8.
    for dt in FLOATS + INTS + [b8]:
        x = vals(dt, (3, 4), 89)
        if dt.is_floating_point:
            x[0, 0] = NAN
        x[1] = 0
        for op in ["all.dim", "any.dim"]:
            fam.case("%s_%s" % (op.replace(".", "_"), dn(dt)), op, [nc(x), 1, False])
        fam.case("all_full_%s" % dn(dt), "all", [x])
        fam.case("any_full_%s" % dn(dt), "any", [x[1:2]])
    # cumsum / cumprod.
    for dt in FLOATS + INTS + [b8]:
        for lay, x in red_inputs(dt, 90):
            for d in [0, 1, 2]:
                ctol = ("exact",)
                fam.case("cumsum_%s_%s_%d" % (dn(dt), lay, d), "cumsum", [x, d, None], tol=ctol)
                fam.case("cumprod_%s_%s_%d" % (dn(dt), lay, d), "cumprod", [x, d, None], tol=ctol)
    fam.case("cumsum_i8_wrap", "cumsum", [torch.tensor([100, 100, 100], dtype=i8), 0, i8])
    fam.case("cumsum_i32_to_f32", "cumsum", [vals(i32, (7,), 91), 0, f32])
    fam.case("cumsum_f32_long", "cumsum", [vals(f32, (3000,), 92), 0, None])
    fam.case("cumsum_0dim", "cumsum", [torch.tensor(2.5), 0, None])
    fam.case("cumprod_f16_long", "cumprod", [vals(f16, (50,), 93, "pos") / 2 + 0.5, 0, None])
    # logsumexp: the sum of exponentials in f64 against upstream's f32 cascade.
    def ltol(dt):
        return {f32: ("close", 1e-5, 1e-6), f64: ("close", 1e-13, 1e-14)}.get(dt, ("ulp", 2))

    for dt in FLOATS:
        for lay, x in red_inputs(dt, 94):
            for dims in [[2], [0, 2], [1]]:
                fam.case("logsumexp_%s_%s_%s" % (dn(dt), lay, "".join(map(str, dims))), "logsumexp", [x, L(dims), False], tol=ltol(dt))
        fam.case("logsumexp_inf_%s" % dn(dt), "logsumexp", [torch.tensor([[-INF, -INF], [INF, 1.], [NAN, 1.], [1e4, 1e4]]).to(dt), L([1]), True], tol=ltol(dt))
    return fam


# --------------------------------------------------------------------------------------------
# mm / bmm / addmm

def gen_linalg():
    fam = Family("linalg")

    def tol(dt, k):
        # Different summation orders (MKL vs gemm): a few ulps of the k-term dot product's scale.
        if dt == f32:
            return ("close", 1e-5, 2e-6 * k)
        if dt == f64:
            return ("close", 1e-12, 4e-15 * k)
        if dt in (f16, bf16):
            return ("ulp", 1)
        return ("exact",)

    for dt in FLOATS + INTS:
        lo = dict(kind="finite")
        for m, k, n in [(3, 4, 5), (1, 7, 1), (5, 1, 3), (17, 33, 9)]:
            a = vals(dt, (m, k), 101 + m, **lo)
            b = vals(dt, (k, n), 102 + n, **lo)
            fam.case("mm_%s_%dx%dx%d" % (dn(dt), m, k, n), "mm", [a, b], tol=tol(dt, k))
            fam.case("mm_%s_%dx%dx%d_tt" % (dn(dt), m, k, n), "mm", [vals(dt, (k, m), 103, **lo).t(), vals(dt, (n, k), 104, **lo).t()], tol=tol(dt, k))
            fam.case("mm_%s_%dx%dx%d_nc" % (dn(dt), m, k, n), "mm", [nc(a), bcast(vals(dt, (1, n), 105, **lo), (k, n))], tol=tol(dt, k))
        x = vals(dt, (4, 6), 106, **lo)
        fam.case("bmm_%s" % dn(dt), "bmm", [vals(dt, (2, 3, 4), 107, **lo), vals(dt, (2, 4, 5), 108, **lo)], tol=tol(dt, 4))
        fam.case("bmm_%s_bcast_t" % dn(dt), "bmm", [bcast(vals(dt, (1, 3, 4), 109, **lo), (2, 3, 4)), vals(dt, (2, 5, 4), 110, **lo).transpose(1, 2)], tol=tol(dt, 4))
        bias = vals(dt, (1, 5), 111, **lo)
        a, b = vals(dt, (3, 4), 112, **lo), vals(dt, (4, 5), 113, **lo)
        for beta, alpha in [(1, 1), (0, 1), (2, 3)] + ([(0.5, -1.5)] if dt.is_floating_point else []):
            tag = ("%s_%s" % (beta, alpha)).replace(".", "p").replace("-", "m")
            fam.case("addmm_%s_%s" % (dn(dt), tag), "addmm", [bcast(bias, (3, 5)), a, b, beta, alpha], tol=tol(dt, 4))
        fam.case("addmm_%s_full_self" % dn(dt), "addmm", [vals(dt, (3, 5), 114, **lo), a.t().contiguous().t(), b, 1, 1], tol=tol(dt, 4))
    for dt in FLOATS:
        s = torch.full((3, 5), NAN, dtype=dt)
        a, b = vals(dt, (3, 4), 115, "finite"), vals(dt, (4, 5), 116, "finite")
        fam.case("addmm_beta0_nan_self_%s" % dn(dt), "addmm", [s, a, b, 0, 1], tol=tol(dt, 4))
        fam.case("addmm_beta1_nan_self_%s" % dn(dt), "addmm", [s, a, b, 1, 1], tol=tol(dt, 4))
        fam.case("mm_k0_%s" % dn(dt), "mm", [torch.zeros(3, 0, dtype=dt), torch.zeros(0, 2, dtype=dt)])
        fam.case("mm_m0_%s" % dn(dt), "mm", [torch.zeros(0, 4, dtype=dt), vals(dt, (4, 2), 117)])
        fam.case("addmm_k0_%s" % dn(dt), "addmm", [vals(dt, (3, 2), 118, "finite"), torch.zeros(3, 0, dtype=dt), torch.zeros(0, 2, dtype=dt), 0.5, 1])
        x = torch.tensor([[INF, 1.0], [0.0, NAN]], dtype=dt)
        fam.case("mm_special_%s" % dn(dt), "mm", [x, torch.tensor([[1.0, 0.0], [2.0, 1.0]], dtype=dt)])
    big = vals(f32, (70, 80), 119, "finite"), vals(f32, (80, 90), 120, "finite")
    fam.case("mm_f32_parallel", "mm", list(big), tol=tol(f32, 80))
    fam.case("mm_bool", "mm", [torch.tensor([[True]]), torch.tensor([[True]])])
    return fam


# --------------------------------------------------------------------------------------------
# nn: softmax, layer norm, batch norm, attention

def gen_nn():
    fam = Family("nn")
    u4 = ("ulp", 4)

    def stol(dt):
        # exp and the row sum in another order: a few ulps relative (tiny probabilities too).
        return {f32: ("close", 2e-6, 1e-30), f64: ("close", 1e-13, 1e-300)}.get(dt, u4)

    def ntol(dt):
        # mean/var in f64 (two-pass) against upstream's Welford in the compute type.
        # f16/bf16: a couple of ulps of the dtype (an f32 mean/rstd output of a mixed call is
        # well inside that), and an absolute floor for outputs that cancel to ~0.
        return {f32: ("close", 1e-5, 1e-6), f64: ("close", 1e-12, 1e-14), f16: ("close", 2e-3, 1e-5)}.get(dt, ("close", 1.6e-2, 1e-4))

    for dt in FLOATS:
        for lay, x in red_inputs(dt, 121):
            for d in [0, 1, 2]:
                fam.case("softmax_%s_%s_%d" % (dn(dt), lay, d), "_softmax", [x, d, False], tol=stol(dt))
                fam.case("log_softmax_%s_%s_%d" % (dn(dt), lay, d), "_log_softmax", [x, d, False], tol=stol(dt))
        sp = torch.tensor([[INF, 1.0], [-INF, -INF], [NAN, 1.0], [1e4, -1e4], [-INF, 0.0]], dtype=dt)
        fam.case("softmax_special_%s" % dn(dt), "_softmax", [sp, 1, False], tol=u4)
        fam.case("log_softmax_special_%s" % dn(dt), "_log_softmax", [sp, 1, False], tol=u4)
        fam.case("softmax_0dim_%s" % dn(dt), "_softmax", [torch.tensor(3.0, dtype=dt), 0, False])
        fam.case("softmax_long_%s" % dn(dt), "_softmax", [vals(dt, (2, 300), 122, "finite") * 3, 1, False], tol=stol(dt))
        fam.case("log_softmax_long_%s" % dn(dt), "_log_softmax", [vals(dt, (2, 300), 122, "finite") * 3, 1, False], tol=stol(dt))
    fam.case("softmax_half_to_float", "_softmax", [vals(f16, (2, 3), 123), 1, True])
    # layer norm: weights of the input dtype or f32 (mixed), None weight/bias.
    for dt in FLOATS:
        x = vals(dt, (2, 3, 8), 124, "finite") * 2 + 1
        w, b = vals(dt, (8,), 125, "finite"), vals(dt, (8,), 126, "finite")
        fam.case("layer_norm_%s" % dn(dt), "native_layer_norm", [x, L([8]), w, b, 1e-5], tol=ntol(dt))
        fam.case("layer_norm_noaffine_%s" % dn(dt), "native_layer_norm", [x.transpose(0, 1), L([8]), None, None, 1e-5], tol=ntol(dt))
        fam.case("layer_norm_2d_%s" % dn(dt), "native_layer_norm", [x, L([3, 8]), vals(dt, (3, 8), 127, "finite"), None, 0.1], tol=ntol(dt))
        if dt in (f16, bf16):
            fam.case("layer_norm_mixed_%s" % dn(dt), "native_layer_norm", [x, L([8]), w.float(), b.float(), 1e-5], tol=ntol(dt))
        fam.case("layer_norm_long_%s" % dn(dt), "native_layer_norm", [vals(dt, (2, 500), 128, "finite"), L([500]), None, None, 1e-5], tol=ntol(dt))
    # batch norm, inference.
    for dt in FLOATS:
        x = vals(dt, (2, 3, 4, 5), 129, "finite")
        rm, rv = vals(dt, (3,), 130, "finite"), vals(dt, (3,), 131, "pos")
        w, b = vals(dt, (3,), 132, "finite"), vals(dt, (3,), 133, "finite")
        fam.case("batch_norm_eval_%s" % dn(dt), "_native_batch_norm_legit_no_training", [x, w, b, rm, rv, 0.1, 1e-5], tol=ntol(dt))
        fam.case("batch_norm_eval_noaffine_%s" % dn(dt), "_native_batch_norm_legit_no_training", [x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2), None, None, rm, rv, 0.1, 1e-3], tol=ntol(dt))
        fam.case("batch_norm_eval_2d_%s" % dn(dt), "_native_batch_norm_legit_no_training", [vals(dt, (4, 3), 134, "finite"), w, None, rm, rv, 0.1, 1e-5], tol=ntol(dt))
        if dt in (f16, bf16):
            fam.case("batch_norm_eval_mixed_%s" % dn(dt), "_native_batch_norm_legit_no_training", [x, w.float(), b.float(), rm.float(), rv.float(), 0.1, 1e-5], tol=ntol(dt))
    # attention: (B, H, L, E) x (B, H, S, E).
    for dt in [f32, f64, bf16]:
        close = ("close", 1e-5, 1e-5) if dt != bf16 else ("close", 2e-2, 2e-2)
        if dt == f64:
            close = ("close", 1e-12, 1e-12)
        q, k, v = vals(dt, (2, 3, 5, 8), 135, "finite"), vals(dt, (2, 3, 6, 8), 136, "finite"), vals(dt, (2, 3, 6, 8), 137, "finite")
        fam.case("sdpa_%s" % dn(dt), "_scaled_dot_product_flash_attention_for_cpu", [q, k, v, 0.0, False, None, None], tol=close)
        fam.case("sdpa_causal_%s" % dn(dt), "_scaled_dot_product_flash_attention_for_cpu", [q, k, v, 0.0, True, None, None], tol=close)
        fam.case("sdpa_scale_%s" % dn(dt), "_scaled_dot_product_flash_attention_for_cpu", [q.transpose(1, 2).contiguous().transpose(1, 2), k, v, 0.0, False, None, 0.3], tol=close)
        bm = vals(b8, (5, 6), 138)
        bm[:, 0] = True
        # Upstream's flash kernel takes only masks of the query's dtype (SDPA converts bool masks).
        fam.case("sdpa_boolmask_%s" % dn(dt), "_scaled_dot_product_flash_attention_for_cpu", [q, k, v, 0.0, False, bm, None], tol=close)
        fm = vals(dt, (2, 1, 5, 6), 139, "finite")
        fam.case("sdpa_floatmask_%s" % dn(dt), "_scaled_dot_product_flash_attention_for_cpu", [q, k, v, 0.0, False, fm, None], tol=close)
        # grouped-query attention: 3 query heads per key/value head, read in place
        qg = vals(dt, (2, 6, 5, 8), 186, "finite")
        fam.case("sdpa_gqa_%s" % dn(dt), "_scaled_dot_product_flash_attention_for_cpu", [qg, k[:, :2], v[:, 1:], 0.0, False, None, None], tol=close)
        fam.case("sdpa_gqa_causal_%s" % dn(dt), "_scaled_dot_product_flash_attention_for_cpu", [qg, k[:, :2], v[:, :2], 0.0, True, None, None], tol=close)
    # attention backward, float32 (the cpu kernel's dtype): the forward's out and logsumexp as
    # upstream's forward gives them
    q, k, v = vals(f32, (2, 3, 5, 8), 135, "finite"), vals(f32, (2, 3, 6, 8), 136, "finite"), vals(f32, (2, 3, 6, 8), 137, "finite")
    qg = vals(f32, (2, 6, 5, 8), 186, "finite")
    for tag, qq, kk, vv, causal, mask in [("", q, k, v, False, None), ("_causal", q, k, v, True, None),
                                          ("_floatmask", q, k, v, False, vals(f32, (2, 1, 5, 6), 139, "finite")),
                                          ("_gqa_causal", qg, k[:, :2], v[:, :2], True, None)]:
        o, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(qq, kk, vv, 0.0, causal, attn_mask=mask)[:2]
        go = vals(f32, tuple(qq.shape), 187, "finite")
        fam.case("sdpa_backward%s_f32" % tag, "_scaled_dot_product_flash_attention_for_cpu_backward",
                 [go, qq, kk, vv, o, lse, 0.0, causal, mask, None], tol=("close", 1e-5, 1e-5))
    return fam


# --------------------------------------------------------------------------------------------
# indexing

def gen_index():
    fam = Family("index")
    for dt in [f32, bf16, i64, b8, u8]:
        x = vals(dt, (4, 5), 141)
        i64v = torch.tensor([3, 0, 3, 1])
        fam.case("index_select_%s_d0" % dn(dt), "index_select", [x, 0, i64v])
        fam.case("index_select_%s_d1_i32" % dn(dt), "index_select", [nc(x), 1, torch.tensor([4, 2], dtype=i32)])
        fam.case("index_select_%s_t" % dn(dt), "index_select", [x.t(), 1, torch.tensor(2)])
        fam.case("gather_%s_d0" % dn(dt), "gather", [x, 0, torch.tensor([[3, 0, 1], [2, 2, 0]]), False])
        fam.case("gather_%s_d1" % dn(dt), "gather", [x.t(), 1, torch.tensor([[0, 3], [1, 1], [3, 2]]), False])
        fam.case("masked_fill__%s" % dn(dt), "masked_fill_.Scalar", [x.clone(), bcast(vals(b8, (1, 5), 142), (4, 5)), True if dt == b8 else 3],
                 alias={0: 0})
        fam.case("masked_fill_%s" % dn(dt), "masked_fill.Scalar", [nc(x), vals(b8, (4, 5), 143), 0])
    x = vals(f32, (4, 5), 144)
    fam.case("index_select_oob", "index_select", [x, 0, torch.tensor([0, 4])])
    fam.case("index_select_neg", "index_select", [x, 0, torch.tensor([-1])])
    fam.case("gather_oob", "gather", [x, 1, torch.tensor([[0, 5]]), False])
    fam.case("gather_neg", "gather", [x, 0, torch.tensor([[-1, 0]]), False])
    fam.case("masked_fill_overflow", "masked_fill_.Scalar", [vals(u8, (3,), 145), torch.tensor([True, False, True]), 300], alias={0: 0})
    # embedding
    for dt in [f32, f16, f64]:
        w = vals(dt, (6, 3), 146)
        fam.case("embedding_%s" % dn(dt), "embedding", [w, torch.tensor([[5, 0, 2], [2, 2, 1]]), -1, False, False])
        fam.case("embedding_%s_i32_nc" % dn(dt), "embedding", [w.t().contiguous().t(), torch.tensor([4, 1], dtype=i32), 1, False, False])
        fam.case("embedding_%s_0dim" % dn(dt), "embedding", [nc(w), torch.tensor(3), -1, False, False])
    fam.case("embedding_oob", "embedding", [vals(f32, (6, 3), 147), torch.tensor([6]), -1, False, False])
    fam.case("embedding_neg", "embedding", [vals(f32, (6, 3), 147), torch.tensor([-1]), -1, False, False])
    # cat
    a, b = vals(f32, (2, 3), 148), vals(f32, (4, 3), 149)
    fam.case("cat_d0", "cat", [[a, b], 0])
    fam.case("cat_d1_nc", "cat", [[a.t(), nc(vals(f32, (3, 1), 150)), bcast(vals(f32, (3, 1), 151), (3, 2))], 1])
    fam.case("cat_mixed_dtypes", "cat", [[vals(i64, (2,), 152), vals(f32, (3,), 153), vals(b8, (1,), 154)], 0])
    fam.case("cat_legacy_empty", "cat", [[a, torch.zeros(0), b], 0])
    fam.case("cat_bf16_i32", "cat", [[vals(bf16, (2, 2), 155), vals(i32, (2, 1), 156)], 1])
    fam.case("cat_single", "cat", [[vals(i16, (2, 2, 2), 157).transpose(0, 2)], 2])
    # arange.start_out: the core sizes `out`.
    for dt, (st, en, sp) in [(i64, (0, 10, 3)), (i32, (5, -7, -2)), (f32, (0, 1, 0.1)), (f64, (0, 1, 0.1)), (f64, (-3, 3.5, 0.25)),
                             (f16, (0, 2, 0.125)), (bf16, (0, 100, 7)), (f32, (1e6, 1e6 + 10, 1.5)), (u8, (0, 250, 50)), (f32, (0, 20, 1))]:
        n = int(math.ceil((en - st) / sp))
        fam.case(("arange_%s_%s_%s_%s" % (dn(dt), st, en, sp)).replace(".", "p").replace("-", "m").replace("+", ""),
                 "arange.start_out", [st, en, sp, torch.zeros(n, dtype=dt)], alias={0: 3}, tol=("ulp", 1))
    # advanced indexing
    x = vals(f32, (3, 4, 5), 158)
    i0 = torch.tensor([2, 0, -1])
    i1 = torch.tensor([[1], [2]])
    cases = [
        ("first", [i0]),
        ("middle", [None, torch.tensor([3, 3, 0])]),
        ("two_bcast", [i1, torch.tensor([0, 2, 1])]),
        ("nonadjacent", [torch.tensor([0, 2]), None, torch.tensor([4, 1])]),
        ("adjacent_last", [None, i1, torch.tensor([0, 4])]),
        ("mask", [vals(b8, (3, 4), 159)]),
        ("mask_mid", [None, vals(b8, (4,), 160)]),
        ("u8mask", [vals(b8, (3,), 161).to(u8)]),
        ("i32", [torch.tensor([1, 1], dtype=i32), None, torch.tensor([0, 2], dtype=i32)]),
    ]
    for tag, ind in cases:
        fam.case("index_%s" % tag, "index.Tensor", [x, ind])
        fam.case("index_nc_%s" % tag, "index.Tensor", [x.permute(2, 1, 0).contiguous().permute(2, 1, 0), ind])
    fam.case("index_bf16", "index.Tensor", [vals(bf16, (3, 4), 162), [torch.tensor([2, 2])]])
    fam.case("index_oob", "index.Tensor", [x, [torch.tensor([3])]])
    fam.case("index_oob_neg", "index.Tensor", [x, [None, torch.tensor([-5])]])
    for tag, ind in cases:
        res = x[tuple(slice(None) if i is None else i for i in ind)]
        v = vals(f32, tuple(res.shape), 163)
        fam.case("index_put__%s" % tag, "index_put_", [x.clone(), ind, v, False], alias={0: 0})
        fam.case("index_put__bcast_%s" % tag, "index_put_", [x.clone(), ind, vals(f32, tuple(res.shape[-1:]), 164), True], alias={0: 0})
        fam.case("index_put_fn_%s" % tag, "index_put", [x, ind, torch.tensor(2.5), False])
    dup = [torch.tensor([0, 2, 0, 0])]
    for dt in [f32, i64, f16, bf16, b8]:
        y = vals(dt, (3, 2), 165)
        fam.case("index_put__dup_acc_%s" % dn(dt), "index_put_", [y.clone(), dup, vals(dt, (4, 2), 166), True], alias={0: 0})
        fam.case("index_put__dup_%s" % dn(dt), "index_put_", [y.clone(), dup, vals(dt, (4, 2), 166), False], alias={0: 0})
    fam.case("index_put__oob", "index_put_", [x.clone(), [torch.tensor([5])], torch.tensor(1.0), False], alias={0: 0})
    # nonzero (data-dependent output)
    for dt in [f32, i64, b8, u8, bf16]:
        y = vals(dt, (3, 4), 167)
        if dt.is_floating_point:
            y[0, 0] = NAN
            y[1] = -0.0
        fam.case("nonzero_%s" % dn(dt), "nonzero", [y], dyn={0})
        fam.case("nonzero_nc_%s" % dn(dt), "nonzero", [y.t()], dyn={0})
    fam.case("nonzero_0dim", "nonzero", [torch.tensor(3.0)], dyn={0})
    fam.case("nonzero_0dim_zero", "nonzero", [torch.tensor(0)], dyn={0})
    fam.case("nonzero_none", "nonzero", [torch.zeros(2, 3)], dyn={0})
    fam.case("nonzero_3d_bcast", "nonzero", [bcast(vals(b8, (2, 1, 3), 168), (2, 2, 3))], dyn={0})
    return fam


# --------------------------------------------------------------------------------------------
# sort / topk

def distinct(dt, shape, seed):
    """Values without ties (upstream's unstable sort and topk order ties freely)."""
    n = 1
    for d in shape:
        n *= d
    g = torch.Generator().manual_seed(seed + SEED_OFFSET)
    perm = torch.randperm(n, generator=g).to(f64)
    if dt.is_floating_point:
        x = (perm - n / 2) * 0.25
    else:
        x = perm - (0 if dt == u8 else n // 2)
    return x.to(dt).reshape(shape)


def gen_sort():
    fam = Family("sort")
    for dt in [f32, f64, bf16, i64, i32, u8]:
        for lay, x in [("c", distinct(dt, (3, 4, 5), 171)), ("t", distinct(dt, (5, 4, 3), 172).permute(2, 1, 0))]:
            for d in [0, 1, 2]:
                for desc in [False, True]:
                    tag = "%s_%s_%d_%s" % (dn(dt), lay, d, "desc" if desc else "asc")
                    fam.case("sort_" + tag, "sort", [x, d, desc])
                    fam.case("sort_stable_" + tag, "sort.stable", [x, None, d, desc])
                for largest in [True, False]:
                    fam.case("topk_%s_%s_%d_%s" % (dn(dt), lay, d, "l" if largest else "s"), "topk", [x, 2, d, largest, True])
    nanv = torch.tensor([3., NAN, 1., -INF, NAN, 1., -0.0, 0.0, INF])
    for dt in [f32, f16]:
        for desc in [False, True]:
            fam.case("sort_stable_nan_%s_%s" % (dn(dt), desc), "sort.stable", [nanv.to(dt), True, 0, desc])
        fam.case("topk_nan_%s" % dn(dt), "topk", [torch.tensor([3., NAN, 1., -INF, 5.]).to(dt), 2, 0, True, True])
        fam.case("topk_nan_small_%s" % dn(dt), "topk", [torch.tensor([3., NAN, 1., -INF, 5.]).to(dt), 2, 0, False, True])
    ties = torch.tensor([1, 2, 1, 2, 1, 0, 2])
    fam.case("sort_stable_ties_desc", "sort.stable", [ties, True, 0, True])
    fam.case("sort_stable_ties_asc", "sort.stable", [ties, True, 0, False])
    fam.case("sort_bool", "sort.stable", [torch.tensor([True, False, True, False]), True, 0, False])
    fam.case("sort_0dim", "sort", [torch.tensor(2.0), 0, False])
    fam.case("topk_k0", "topk", [distinct(f32, (4,), 173), 0, 0, True, True])
    fam.case("topk_all", "topk", [distinct(f32, (2, 4), 174), 4, 1, False, True])
    # mode: many ties, so the index is the one libstdc++'s introsort leaves last in the longest run
    g = torch.Generator().manual_seed(175 + SEED_OFFSET)
    for n in [1, 7, 16, 17, 40, 300, 3000]:
        x = torch.randint(0, 6, (n,), generator=g)
        for dt in [i64, f32, u8]:
            fam.case("mode_%s_%d" % (dn(dt), n), "mode", [x.to(dt), 0, False])
    grid = torch.randint(-3, 3, (5, 33, 4), generator=g)
    for dt in [f64, i32, bf16, f16]:
        for d in [0, 1, 2, -1]:
            for keep in [False, True]:
                fam.case("mode_%s_%d_%s" % (dn(dt), d, "k" if keep else "r"), "mode", [grid.to(dt), d, keep])
        fam.case("mode_%s_t" % dn(dt), "mode", [grid.to(dt).permute(2, 0, 1), 1, False])
    fam.case("mode_bool", "mode", [torch.tensor([True, False, True, False, False, True, True]), 0, False])
    fam.case("mode_nan", "mode", [torch.tensor([NAN, 1., NAN, 2., 1., NAN, 2., 2.]), 0, False])
    fam.case("mode_0dim", "mode", [torch.tensor(4.0), 0, False])
    # kthvalue: ties and NaNs, so the index is the one upstream's quick_select leaves at k - 1
    g = torch.Generator().manual_seed(176 + SEED_OFFSET)
    tied = torch.randint(0, 5, (6, 41), generator=g)
    for dt in [f32, f64, f16, bf16, i64, i32, u8]:
        for k in [1, 7, 21, 41]:
            fam.case("kthvalue_%s_k%d" % (dn(dt), k), "kthvalue", [tied.to(dt), k, 1, False])
        fam.case("kthvalue_%s_t_keep" % dn(dt), "kthvalue", [tied.to(dt).t(), 3, 0, True])
    for n in [1, 2, 3, 17, 200]:
        x = torch.randn(n, generator=g)
        fam.case("kthvalue_distinct_%d" % n, "kthvalue", [x, (n + 1) // 2, 0, False])
    fam.case("kthvalue_nan", "kthvalue", [torch.tensor([NAN, 1., NAN, 2., 1., -INF, 2., INF]), 7, 0, False])
    fam.case("kthvalue_nan_last", "kthvalue", [torch.tensor([NAN, 1., NAN, 2.]), 4, 0, True])
    fam.case("kthvalue_0dim", "kthvalue", [torch.tensor(4.0), 1, 0, False])
    fam.case("kthvalue_bool", "kthvalue", [torch.tensor([True, False]), 1, 0, False])
    # median.dim / nanmedian.dim: nth_element over (value, index); NaN lines; all-NaN lines
    g = torch.Generator().manual_seed(177 + SEED_OFFSET)
    tied = torch.randint(0, 4, (5, 23), generator=g)
    nanny = torch.tensor([[NAN, 1., 2., NAN, 0.], [3., 1., 2., 0., -0.0], [NAN] * 5, [0.0, -0.0, 0.0, 1., NAN]])
    for op in ["median.dim", "nanmedian.dim"]:
        tag = op.split(".")[0]
        for dt in [f32, f64, f16, bf16, i64, i32, u8]:
            fam.case("%s_%s" % (tag, dn(dt)), op, [tied.to(dt), 1, False])
            fam.case("%s_%s_t_keep" % (tag, dn(dt)), op, [tied.to(dt).t(), 0, True])
        for n in [1, 2, 6, 101]:
            fam.case("%s_distinct_%d" % (tag, n), op, [torch.randn(3, n, generator=g), 1, False])
        fam.case("%s_nan" % tag, op, [nanny, 1, False])
        fam.case("%s_nan_half" % tag, op, [nanny.half(), 1, True])
        fam.case("%s_all_nan_7" % tag, op, [torch.full((2, 7), NAN), 1, False])
        fam.case("%s_0dim" % tag, op, [torch.tensor(4.0), 0, False])
        fam.case("%s_bool" % tag, op, [torch.tensor([True, False]), 0, False])
    return fam


# --------------------------------------------------------------------------------------------
# convolution / pooling

def gen_conv():
    fam = Family("conv")

    def ctol(dt, k):
        return {f32: ("close", 1e-5, 2e-6 * k), f64: ("close", 1e-12, 4e-15 * k)}.get(dt, ("ulp", 2))

    for dt in [f32, f64, bf16]:
        fin = "finite"
        # 2-d: (N, C, H, W), weight (O, C/g, kh, kw).
        for tag, (n, cin, h, w), (cout, kh, kw), st, pd, dl, g in [
            ("basic", (2, 3, 7, 6), (4, 3, 3), [1, 1], [0, 0], [1, 1], 1),
            ("stride_pad", (1, 2, 8, 9), (3, 3, 2), [2, 3], [1, 2], [1, 1], 1),
            ("dilation", (1, 2, 9, 9), (2, 3, 3), [1, 1], [2, 2], [2, 3], 1),
            ("groups", (2, 4, 5, 5), (6, 3, 3), [1, 1], [1, 1], [1, 1], 2),
            ("depthwise", (1, 3, 6, 6), (3, 3, 3), [2, 2], [1, 1], [1, 1], 3),
            ("1x1", (2, 5, 4, 4), (7, 1, 1), [1, 1], [0, 0], [1, 1], 1),
        ]:
            x = vals(dt, (n, cin, h, w), 181, fin)
            wt = vals(dt, (cout, cin // g, kh, kw), 182, fin)
            b = vals(dt, (cout,), 183, fin)
            k = cin // g * kh * kw
            fam.case("conv2d_%s_%s" % (tag, dn(dt)), "convolution", [x, wt, b, L(st), L(pd), L(dl), False, L([0, 0]), g], tol=ctol(dt, k))
            fam.case("conv2d_%s_nobias_nc_%s" % (tag, dn(dt)), "convolution", [nc(x), wt, None, L(st), L(pd), L(dl), False, L([0, 0]), g], tol=ctol(dt, k))
        x = vals(dt, (2, 3, 10), 184, fin)
        fam.case("conv1d_%s" % dn(dt), "convolution", [x, vals(dt, (4, 3, 3), 185, fin), vals(dt, (4,), 186, fin), L([2]), L([1]), L([1]), False, L([0]), 1], tol=ctol(dt, 9))
        x3 = vals(dt, (1, 2, 4, 5, 4), 187, fin)
        fam.case("conv3d_%s" % dn(dt), "convolution", [x3, vals(dt, (3, 2, 2, 3, 2), 188, fin), vals(dt, (3,), 189, fin), L([1, 2, 1]), L([1, 0, 1]), L([1, 1, 1]), False, L([0, 0, 0]), 1], tol=ctol(dt, 24))
        # transposed
        xt = vals(dt, (2, 4, 3, 4), 190, fin)
        fam.case("conv_transpose2d_%s" % dn(dt), "convolution", [xt, vals(dt, (4, 3, 3, 3), 191, fin), vals(dt, (3,), 192, fin), L([2, 2]), L([1, 0]), L([1, 1]), True, L([1, 0]), 1], tol=ctol(dt, 36))
        fam.case("conv_transpose2d_groups_%s" % dn(dt), "convolution", [xt, vals(dt, (4, 1, 2, 3), 193, fin), None, L([1, 2]), L([0, 1]), L([2, 1]), True, L([0, 1]), 2], tol=ctol(dt, 12))
        fam.case("conv_transpose1d_%s" % dn(dt), "convolution", [vals(dt, (1, 2, 5), 194, fin), vals(dt, (2, 3, 4), 195, fin), vals(dt, (3,), 196, fin), L([3]), L([1]), L([1]), True, L([2]), 1], tol=ctol(dt, 8))
    # max_pool2d_with_indices
    for dt in [f32, f64, bf16, f16]:
        x = vals(dt, (2, 3, 7, 8), 197, "finite")
        for tag, k, st, pd, dl, ceil in [("k2", [2, 2], [], [0], [1], False), ("k3s2p1", [3, 3], [2, 2], [1, 1], [1, 1], False),
                                         ("ceil", [3, 2], [2, 2], [0, 1], [1, 1], True), ("dil", [2, 3], [1, 2], [1, 1], [2, 1], False),
                                         ("k1", [1], [1], [0], [1], False)]:
            fam.case("max_pool2d_%s_%s" % (tag, dn(dt)), "max_pool2d_with_indices", [x, L(k), L(st), L(pd), L(dl), ceil])
        fam.case("max_pool2d_3d_nc_%s" % dn(dt), "max_pool2d_with_indices", [nc(x[0]), L([2, 2]), L([2, 1]), L([1, 0]), L([1, 1]), False])
    y = torch.tensor([[[[1., NAN, 2.], [NAN, 0., INF], [-INF, 3., 3.]]]])
    fam.case("max_pool2d_nan", "max_pool2d_with_indices", [y, L([2, 2]), L([1, 1]), L([0, 0]), L([1, 1]), False])
    gi = torch.Generator().manual_seed(1021 + SEED_OFFSET)
    xi = torch.randint(-100, 100, (2, 3, 7, 6), generator=gi)
    for dt in INTS:  # integer windows start at the type's lowest value
        fam.case("max_pool2d_int_%s" % dn(dt), "max_pool2d_with_indices",
                 [xi.to(dt), L([3, 2]), L([2, 1]), L([1, 1]), L([1, 2]), True])
        fam.case("max_pool2d_int_neg_%s" % dn(dt), "max_pool2d_with_indices",
                 [(-torch.arange(1, 17).reshape(1, 1, 4, 4)).to(dt), L([2, 2]), L([2, 2]), L([1, 1]), L([1, 1]), False])
    # max_pool3d_with_indices: padding, dilation, ceil_mode, an unbatched strided input, integers
    for dt in [f32, f64, bf16, f16]:
        x = vals(dt, (2, 2, 5, 6, 4), 198, "finite")
        for tag, k, st, pd, dl, ceil in [("k2", [2], [], [0], [1], False),
                                         ("pad_dil_ceil", [3, 2, 3], [2, 1, 2], [1, 1, 1], [1, 2, 1], True)]:
            fam.case("max_pool3d_%s_%s" % (tag, dn(dt)), "max_pool3d_with_indices", [x, L(k), L(st), L(pd), L(dl), ceil])
        fam.case("max_pool3d_4d_nc_%s" % dn(dt), "max_pool3d_with_indices",
                 [nc(x[0]), L([2, 2, 1]), L([1, 2, 1]), L([1, 0, 0]), L([1, 1, 1]), False])
    z = torch.tensor([[[[[1., NAN, 2.], [NAN, 0., INF]], [[-INF, 3., 3.], [3., NAN, 1.]]]]])
    fam.case("max_pool3d_nan", "max_pool3d_with_indices", [z, L([2, 2, 2]), L([1, 1, 1]), L([0]), L([1]), False])
    for dt in INTS:
        fam.case("max_pool3d_int_%s" % dn(dt), "max_pool3d_with_indices",
                 [xi.reshape(2, 3, 7, 2, 3).to(dt), L([2, 2, 2]), L([2, 1, 1]), L([1, 1, 1]), L([1]), True])
    # fractional_max_pool2d/3d: each plane's windows from its samples (computed in the dtype)
    for dt in [f32, f64, bf16, f16]:
        gs = torch.Generator().manual_seed(1022 + SEED_OFFSET)
        for nd, shape, k, o in [(2, (2, 3, 9, 8), [2, 3], [4, 5]), (3, (2, 2, 7, 6, 5), [2, 2, 3], [3, 4, 2])]:
            x = vals(dt, shape, 199 + nd, "finite")
            samples = torch.rand(shape[0], shape[1], nd, generator=gs).to(dt)
            fam.case("fractional_max_pool%dd_%s" % (nd, dn(dt)), "fractional_max_pool%dd" % nd, [x, L(k), L(o), samples])
        fam.case("fractional_max_pool2d_unbatched_%s" % dn(dt), "fractional_max_pool2d",
                 [nc(vals(dt, (3, 7, 6), 202, "finite")), L([3, 2]), L([5, 1]), torch.rand(1, 3, 2, generator=gs).to(dt)])
    return fam

# --------------------------------------------------------------------------------------------
# training: loss and activation derivatives, the optimizers' pointwise steps, linspace

def gen_training():
    fam = Family("training")
    for dt in FLOATS:
        # nll_loss: 2-D and 1-D inputs, weights, ignore_index, every reduction.
        x = vals(dt, (5, 4), 170, "finite")
        t = torch.tensor([3, 0, 1, 3, 2])
        w = vals(dt, (4,), 171, "pos")
        for red in (0, 1, 2):
            for tag, wt, ign in [("plain", None, -100), ("weight", w, -100), ("ignore", w, 3)]:
                name = "nll_%s_%s_r%d" % (dn(dt), tag, red)
                res = fam.case(name, "nll_loss_forward", [x, t, wt, red, ign])
                go = (torch.ones(()) * 0.75 if red else vals(dt, (5,), 172, "finite")).to(dt)
                fam.case(name + "_bw", "nll_loss_backward", [go, x, t, wt, red, ign, res[1]])
        x1 = vals(dt, (6,), 173, "finite")
        res = fam.case("nll_%s_1d" % dn(dt), "nll_loss_forward", [x1, torch.tensor(4), None, 1, -100])
        fam.case("nll_%s_1d_bw" % dn(dt), "nll_loss_backward",
                 [torch.tensor(0.5, dtype=dt), x1, torch.tensor(4), None, 1, -100, res[1]])
        fam.case("nll_%s_nc" % dn(dt), "nll_loss_forward", [x.t().contiguous().t(), t, None, 1, -100])
        # long batches: upstream's cascade sum of eight partial sums
        xl, tl = vals(dt, (300, 3), 174, "finite"), (torch.arange(300) * 7) % 3
        fam.case("nll_%s_long" % dn(dt), "nll_loss_forward", [xl, tl, None, 2, -100])
        fam.case("nll_%s_long_mean_w" % dn(dt), "nll_loss_forward", [xl, tl, vals(dt, (3,), 175, "pos"), 1, 1])
    x = vals(f32, (5, 4), 176, "finite")
    fam.case("nll_target_oob", "nll_loss_forward", [x, torch.tensor([0, 4, 1, 1, 1]), None, 1, -100])
    fam.case("nll_target_neg", "nll_loss_forward", [x, torch.tensor([0, -2, 1, 1, 1]), None, 1, -100])
    # threshold_backward (ReLU's derivative): every dtype, non-contiguous and broadcast operands.
    for dt in INTS + FLOATS:
        g, x = vals(dt, (3, 4), 177), vals(dt, (3, 4), 178)
        x[0, 0] = 0
        fam.case("threshold_backward_%s" % dn(dt), "threshold_backward", [g, x, 0])
        fam.case("threshold_backward_nc_%s" % dn(dt), "threshold_backward", [nc(g), x.t().contiguous().t(), 1])
        fam.case("threshold_backward_bcast_%s" % dn(dt), "threshold_backward", [bcast(vals(dt, (1, 4), 179), (3, 4)), x, 0])
    # silu_backward (float32, the kernel's domain): contiguous (vector lanes and tail, as upstream's
    # capability splits them: 2 ulp across capabilities), non-contiguous and broadcast operands.
    for n in (5, 37, 100):
        g, x = vals(f32, (n,), 190, "finite"), vals(f32, (n,), 191, "finite") * 4
        fam.case("silu_backward_%d" % n, "silu_backward", [g, x], tol=("ulp", 2))
    g, x = vals(f32, (3, 4), 192, "finite"), vals(f32, (3, 4), 193, "finite")
    fam.case("silu_backward_nc", "silu_backward", [nc(g), x.t().contiguous().t()], tol=("ulp", 2))
    fam.case("silu_backward_bcast", "silu_backward", [bcast(vals(f32, (1, 4), 194, "finite"), (3, 4)), x], tol=("ulp", 2))
    fam.case("silu_backward_edge", "silu_backward",
             [torch.ones(10), torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, 1e30, -1e30, 88.7, -88.7, 1e-40])],
             tol=("ulp", 2))
    # index_add (the embedding's backward): slices added in index order, repeated indices, alpha,
    # int32 indices, a non-leading dim; out-of-range indices as upstream refuses them.
    for dt in (f32, f64):
        x, src = vals(dt, (6, 5), 195, "finite"), vals(dt, (9, 5), 196, "finite") * 100
        idx = torch.tensor([3, 0, 3, 5, 3, 1, 0, 0, 2])
        fam.case("index_add_%s" % dn(dt), "index_add", [x, 0, idx, src, 1])
        fam.case("index_add_alpha_%s" % dn(dt), "index_add", [x, 0, idx.to(i32), src, 0.37])
        x3, s3 = vals(dt, (2, 4, 3), 197, "finite"), vals(dt, (2, 7, 3), 198, "finite")
        fam.case("index_add_d1_%s" % dn(dt), "index_add", [x3, 1, torch.tensor([3, 0, 3, 1, 2, 0, 0]), s3, -2.5])
        fam.case("index_add_nc_%s" % dn(dt), "index_add", [nc(x), 1, torch.tensor([4, 4, 0]), vals(dt, (6, 3), 199, "finite"), 1])
    x = vals(f32, (3, 2), 200, "finite")
    fam.case("index_add_oob", "index_add", [x, 0, torch.tensor([0, 4, -9]), vals(f32, (3, 2), 201, "finite"), 1])
    fam.case("index_add_neg", "index_add", [x, 1, torch.tensor([-1]), vals(f32, (3, 1), 202, "finite"), 1])
    fam.case("index_add_1d_oob", "index_add", [vals(f32, (3,), 203, "finite"), 0, torch.tensor([0, -1]), vals(f32, (2,), 204, "finite"), 1])
    # _log_softmax_backward_data on contiguous float32 rows (the kernel's domain; the core composes
    # the rest). The row sum follows the machine's vector width, as upstream's does: a close tolerance.
    for shape in [(3, 5), (2, 40), (4, 1), (2, 3, 33)]:
        y = torch.log_softmax(vals(f32, shape, 180, "finite"), -1)
        fam.case("log_softmax_backward_%s" % "x".join(map(str, shape)), "_log_softmax_backward_data",
                 [vals(f32, shape, 181, "finite"), y, len(shape) - 1, f32], tol=("close", 2e-6, 1e-6))
    # addcmul/addcdiv/lerp: float32 and float64, broadcast operands, the in-place forms.
    for dt in [f32, f64]:
        s, a, b = vals(dt, (4, 5), 182, "finite"), vals(dt, (4, 5), 183, "finite"), vals(dt, (4, 5), 184, "pos")
        for v in (1, 0.5, -2.25):
            tag = str(v).replace(".", "p").replace("-", "m")
            fam.case("addcmul_%s_%s" % (dn(dt), tag), "addcmul", [s, a, b, v])
            fam.case("addcdiv_%s_%s" % (dn(dt), tag), "addcdiv", [nc(s), a, b, v])
        fam.case("addcmul_bcast_%s" % dn(dt), "addcmul", [bcast(vals(dt, (1, 5), 185, "finite"), (4, 5)), a.t().contiguous().t(), b, 0.3])
        fam.case("addcmul__%s" % dn(dt), "addcmul_", [s.clone(), a, b, 1e-3], alias={0: 0})
        fam.case("addcdiv__%s" % dn(dt), "addcdiv_", [s.clone(), a, b, -1e-3], alias={0: 0})
        for wv in (0.1, 0.5, 0.9, -0.25):
            tag = str(wv).replace(".", "p").replace("-", "m")
            fam.case("lerp_%s_%s" % (dn(dt), tag), "lerp.Scalar", [s, a, wv])
            fam.case("lerp__%s_%s" % (dn(dt), tag), "lerp_.Scalar", [s.clone(), nc(a), wv], alias={0: 0})
        # a weight tensor around the |w| < 0.5 switch, broadcast and transposed operands
        w = torch.tensor([-0.75, -0.5, -0.25, 0.0, 0.1, 0.3, 0.49, 0.5, 0.51, 0.7, 0.9, 1.0, 1.3, 0.25, 0.6,
                          0.45, 0.55, 0.05, 0.95, -0.1], dtype=dt).reshape(4, 5)
        fam.case("lerp_tensor_%s" % dn(dt), "lerp.Tensor", [s, a, w])
        fam.case("lerp_tensor_bcast_%s" % dn(dt), "lerp.Tensor",
                 [bcast(vals(dt, (1, 5), 185, "finite"), (4, 5)), a.t().contiguous().t(), bcast(w[:1], (4, 5))])
    # max_pool2d_with_indices_backward: overlapping windows (an input position gathers several
    # gradients, summed in output order), padding, dilation, 3-d input, ties in the forward.
    for dt in FLOATS:
        for tag, shape, (k, st, pd, dl, ceil) in [("overlap", (2, 3, 7, 7), ([3, 3], [1, 1], [1, 1], [1, 1], False)),
                                                  ("plain", (2, 2, 8, 8), ([2, 2], [2, 2], [0, 0], [1, 1], False)),
                                                  ("dilated_ceil", (3, 9, 10), ([2, 3], [2, 1], [1, 0], [2, 1], True))]:
            x = vals(dt, shape, 187, "finite")
            if tag == "plain":
                x = x.round()  # ties: the first maximum wins
            out, idx = torch.ops.aten.max_pool2d_with_indices(x, k, st, pd, dl, ceil)
            g = vals(dt, tuple(out.shape), 188, "finite")
            fam.case("max_pool2d_backward_%s_%s" % (tag, dn(dt)), "max_pool2d_with_indices_backward",
                     [g, x, L(k), L(st), L(pd), L(dl), ceil, idx])
    x = vals(f32, (2, 3, 6, 6), 189, "finite")
    out, idx = torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    fam.case("max_pool2d_backward_nc", "max_pool2d_with_indices_backward",
             [nc(vals(f32, tuple(out.shape), 190, "finite")), x.transpose(2, 3), L([2, 2]), L([2, 2]), L([0, 0]), L([1, 1]), False,
              idx.transpose(2, 3).contiguous().transpose(2, 3)])
    # max_pool3d_with_indices_backward and fractional_max_pool2d/3d_backward: overlapping windows
    # (gradients summed in output order, in the dtype's own arithmetic)
    for dt in FLOATS:
        x = vals(dt, (2, 2, 5, 6, 4), 203, "finite")
        k, st, pd, dl = [3, 3, 2], [1, 2, 1], [1, 1, 0], [1, 1, 2]
        out, idx = torch.ops.aten.max_pool3d_with_indices(x, k, st, pd, dl, True)
        fam.case("max_pool3d_backward_%s" % dn(dt), "max_pool3d_with_indices_backward",
                 [vals(dt, tuple(out.shape), 204, "finite"), x, L(k), L(st), L(pd), L(dl), True, idx])
        gs = torch.Generator().manual_seed(1023 + SEED_OFFSET)
        for nd, shape, kk, o in [(2, (2, 3, 9, 8), [4, 3], [6, 5]), (3, (2, 2, 7, 6, 5), [3, 2, 3], [4, 4, 2])]:
            x = vals(dt, shape, 205 + nd, "finite")
            samples = torch.rand(shape[0], shape[1], nd, generator=gs).to(dt)
            out, idx = getattr(torch.ops.aten, "fractional_max_pool%dd" % nd)(x, kk, o, samples)
            fam.case("fractional_max_pool%dd_backward_%s" % (nd, dn(dt)), "fractional_max_pool%dd_backward" % nd,
                     [vals(dt, tuple(out.shape), 208, "finite"), x, L(kk), L(o), idx])
    # native_batch_norm in training mode: contiguous float32/float64, with and without affine
    # parameters and running statistics (updated in place; the outputs are compared here)
    for dt in [f32, f64]:
        tol = ("close", 1e-5, 1e-6) if dt == f32 else ("close", 1e-12, 1e-14)
        for shape in [(4, 3, 5, 5), (6, 4), (3, 2, 7)]:
            x = vals(dt, shape, 191, "finite") * 2 + 1
            c = shape[1]
            w, b = vals(dt, (c,), 192, "finite"), vals(dt, (c,), 193, "finite")
            rm, rv = vals(dt, (c,), 194, "finite"), vals(dt, (c,), 195, "pos")
            tag = "x".join(map(str, shape))
            fam.case("batch_norm_train_%s_%s" % (tag, dn(dt)), "native_batch_norm", [x, w, b, rm.clone(), rv.clone(), True, 0.1, 1e-5], tol=tol)
            fam.case("batch_norm_train_noaffine_%s_%s" % (tag, dn(dt)), "native_batch_norm", [x, None, None, None, None, True, 0.3, 1e-3], tol=tol)
    # native_batch_norm_backward: contiguous float32 of three or more dims (the kernel's domain),
    # bit for bit; planes of 25 and 27 elements exercise the 8-lane loop's fused tail. The core
    # passes output_mask (bool[3]) as an int list.
    for shape in [(4, 3, 5, 5), (2, 3, 9), (2, 4, 3, 9)]:
        tag = "x".join(map(str, shape))
        c = shape[1]
        x = vals(f32, shape, 196, "finite") * 2 + 1
        go = vals(f32, shape, 197, "finite")
        w = vals(f32, (c,), 198, "finite")
        rm, rv = vals(f32, (c,), 199, "finite"), vals(f32, (c,), 200, "pos")
        _, sm, si = torch.ops.aten.native_batch_norm(x, w, None, rm.clone(), rv.clone(), True, 0.1, 1e-5)
        mask = [True, True, True]
        for wt, wtag in [(w, ""), (None, "_noaffine")]:
            fam.case("batch_norm_backward_train%s_%s" % (wtag, tag), "native_batch_norm_backward",
                     [go, x, wt, rm, rv, sm, si, True, 1e-5, mask], kargs=[go, x, wt, rm, rv, sm, si, True, 1e-5, L([1, 1, 1])])
            fam.case("batch_norm_backward_eval%s_%s" % (wtag, tag), "native_batch_norm_backward",
                     [go, x, wt, rm, rv, None, None, False, 1e-3, mask], kargs=[go, x, wt, rm, rv, None, None, False, 1e-3, L([1, 1, 1])])
    # linspace.out (the core sizes `out`): upstream's loop, filled from both ends.
    for dt, (st, en, n) in [(f32, (0, 1, 50)), (f32, (-3.5, 7.25, 101)), (f64, (0, 1, 50)), (f64, (1e6, -1e-3, 33)),
                            (f32, (2, 2, 5)), (f32, (4, 9, 1)), (f64, (-1, 1, 2)), (f32, (0.1, 1e4, 1000))]:
        name = ("linspace_%s_%s_%s_%d" % (dn(dt), st, en, n)).replace(".", "p").replace("-", "m").replace("+", "")
        fam.case(name, "linspace.out", [st, en, n, torch.zeros(n, dtype=dt)], alias={0: 3})
    return fam


def gen_decomp():
    """decomp.rs (faer): results unique up to rounding. Eigen and singular vectors are left free up
    to sign by LAPACK, so eigh and svd are checked here for their values only (tests/
    test_linalg_kernels.py compares the vectors up to sign)."""
    fam = Family("decomp")

    def tol(dt, n):
        return ("close", 1e-4, 1e-5 * n) if dt == f32 else ("close", 1e-10, 1e-12 * n)

    for dt in (f32, f64):
        for n in (1, 4, 9):
            g = torch.Generator().manual_seed(300 + n)
            a64 = torch.randn(2, n, n, generator=g, dtype=torch.float64)
            spd = (a64 @ a64.mT + n * torch.eye(n, dtype=torch.float64)).to(dt)
            a = a64.to(dt)
            t = "%s_%d" % (dn(dt), n)
            fam.case("cholesky_" + t, "linalg_cholesky_ex", [spd, False, False], tol=tol(dt, n))
            fam.case("cholesky_upper_" + t, "linalg_cholesky_ex", [spd, True, False], tol=tol(dt, n))
            fam.case("lu_factor_" + t, "linalg_lu_factor_ex", [a, True, False], tol=tol(dt, 10 * n))
            LU, piv = torch.linalg.lu_factor(a)
            rhs = torch.randn(2, n, 3, generator=g, dtype=torch.float64).to(dt)
            fam.case("lu_solve_" + t, "linalg_lu_solve", [LU, piv, rhs, True, False], tol=tol(dt, 100 * n))
            low = torch.linalg.cholesky(spd)
            fam.case("solve_tri_lower_" + t, "linalg_solve_triangular", [low, rhs, False, True, False], tol=tol(dt, 10 * n))
            fam.case("solve_tri_upper_unit_" + t, "linalg_solve_triangular", [low.mT, rhs, True, True, True], tol=tol(dt, 10 * n))
            fam.case("eigvalsh_" + t, "_linalg_eigh", [spd, "L", False], tol=tol(dt, 10 * n))
            fam.case("eigvalsh_upper_" + t, "_linalg_eigh", [spd, "U", False], tol=tol(dt, 10 * n))
            fam.case("svdvals_" + t, "_linalg_svd", [a, False, False, None], tol=tol(dt, 10 * n))
            for mode in ("reduced", "complete", "r"):
                fam.case("qr_%s_%s" % (mode, t), "linalg_qr", [a[..., :, : max(n - 1, 1)], mode], tol=tol(dt, 10 * n))
            tall = a64[..., :, : max(n - 1, 1)].to(dt) if n > 1 else a
            fam.case("geqrf_" + t, "geqrf", [tall], tol=tol(dt, 10 * n))
            h, tau = torch.geqrf(tall)
            fam.case("householder_product_" + t, "linalg_householder_product", [h, tau], tol=tol(dt, 10 * n))
        fam.case("lu_factor_singular_" + dn(dt), "linalg_lu_factor_ex", [torch.ones(3, 3, dtype=dt), True, False])
        fam.case("geqrf_wide_" + dn(dt), "geqrf", [torch.arange(12.0, dtype=dt).reshape(3, 4) - 5], tol=tol(dt, 40))
        fam.case("geqrf_zero_column_" + dn(dt), "geqrf", [torch.tensor([[1.0, 2.0], [0.0, 3.0], [0.0, 4.0]], dtype=dt)], tol=tol(dt, 20))
        # (close: MKL leaves -0.0 in some zero entries of the float32 factor, faer +0.0)
        fam.case("cholesky_nc_" + dn(dt), "linalg_cholesky_ex", [nc(torch.eye(3, dtype=dt) * 4), False, False], tol=tol(dt, 3))
    # eig.rs: geev's eigenvalue order and eigenvector normalisation (float32 in float64 and rounded:
    # its vectors' signs can differ from sgeev's, so float32 is checked for its values only)
    for dt in (torch.float64, torch.complex128):
        for n in (1, 3, 5):
            g = torch.Generator().manual_seed(400 + n)
            a = torch.randn(2, n, n, generator=g, dtype=dt)
            t = "%s_%d" % (str(dt).split(".")[1], n)
            fam.case("eig_" + t, "linalg_eig", [a], tol=("close", 1e-10, 1e-12 * 10 * n))
            fam.case("eigvals_" + t, "_linalg_eigvals", [a], tol=("close", 1e-10, 1e-12 * 10 * n))
    fam.case("eig_triangular", "linalg_eig", [torch.tensor([[1.0, 0, 0], [4, 2, 0], [5, 6, 3]], dtype=torch.float64)],
             tol=("close", 1e-10, 1e-11))
    fam.case("eigvals_f32", "_linalg_eigvals", [torch.randn(4, 4, generator=torch.Generator().manual_seed(7))],
             tol=("close", 1e-4, 1e-5))
    return fam


def gen_special():
    """special.rs: digamma, polygamma and zeta run upstream's scalar algorithms (Math.h) in
    upstream's types, so float64 agrees to the last bit and float32 to an ulp or two (upstream's
    float zeta rounds a few steps differently); lgamma is the C library's where upstream calls
    MKL's vdLGamma, a few ulps apart."""
    fam = Family("special")
    for dt in (f32, f64):
        t = dn(dt)
        x = torch.cat([vals(dt, (40,), 400, "any"), (torch.arange(-12, 13, dtype=f64) * 0.5).to(dt),
                       torch.tensor([1e-30, 1e17, 1e20, -7.25, 10.0, 171.5], dtype=dt)])
        big = ("close", 1e-5, 1e-6) if dt == f32 else ("close", 1e-14, 1e-300)
        fam.case("lgamma_" + t, "lgamma", [x], tol=big)
        fam.case("lgamma_nc_" + t, "lgamma", [nc(x)], tol=big)
        fam.case("digamma_" + t, "digamma", [x], tol=("ulp", 1))
        fam.case("digamma_nc_" + t, "digamma", [nc(x)], tol=("ulp", 1))
        for n in (0, 1, 2, 3, 6):
            fam.case("polygamma_%d_%s" % (n, t), "polygamma", [n, x], tol=("ulp", 1 if dt == f64 else 8))
        q = vals(dt, (60,), 401, "pos") * 3
        s = vals(dt, (60,), 402, "pos") * 4 + 1.0
        fam.case("zeta_" + t, "special_zeta", [s, q], tol=("ulp", 1) if dt == f64 else ("close", 1e-6, 1e-38))
        fam.case("zeta_special_" + t, "special_zeta",
                 [torch.tensor([1.0, 0.5, 2.0, 2.0, 3.0, 2.5, float("nan"), 2.0], dtype=dt),
                  torch.tensor([1.0, 1.0, -1.0, -1.5, -2.5, -0.5, 1.0, float("inf")], dtype=dt)],
                 tol=("ulp", 1) if dt == f64 else ("close", 1e-6, 1e-38))
    # igamma/igammac (igamma.rs): every branch of upstream's calc_igamma/calc_igammac: the series
    # of P and of Q, the continued fraction, both asymptotic regimes (20 < a < 200 with x near a,
    # a > 200 within 4.5 sqrt(a)), the boundary values, NaN; plus stride-0 and transposed operands
    grid_a = [0.0, 1e-3, 0.1, 0.5, 1.0, 1.5, 3.0, 7.5, 25.0, 30.0, 150.0, 250.0, 1000.0, 1e5, -1.0,
              float("inf"), float("nan")]
    grid_x = [0.0, 1e-4, 0.3, 0.5, 0.7, 1.0, 1.05, 2.0, 6.0, 24.0, 31.0, 140.0, 260.0, 1010.0, 1e5 + 300,
              -0.5, float("inf"), float("nan")]
    ga = torch.tensor(grid_a, dtype=f64).repeat_interleave(len(grid_x))
    gx = torch.tensor(grid_x, dtype=f64).repeat(len(grid_a))
    ra = vals(f64, (64,), 403, "pos") * 6
    rx = vals(f64, (64,), 404, "pos") * 8
    for dt in (f32, f64, f16, bf16):
        t = dn(dt)
        tol = ("ulp", 1) if dt == f64 else ("close", 2e-6, 1e-30) if dt == f32 else ("ulp", 1)
        for op in ("igamma", "igammac"):
            fam.case("%s_grid_%s" % (op, t), op, [ga.to(dt), gx.to(dt)], tol=tol)
            fam.case("%s_rand_%s" % (op, t), op, [ra.to(dt), rx.to(dt)], tol=tol)
            if dt in (f32, f64):
                col = torch.tensor([[0.5], [4.0], [60.0]], dtype=dt).expand(3, 5)
                row = torch.tensor([[0.2, 1.0, 3.5, 55.0, 70.0]], dtype=dt).expand(3, 5)
                fam.case("%s_expanded_%s" % (op, t), op, [col, row], tol=tol)
                fam.case("%s_nc_%s" % (op, t), op, [nc(ra.to(dt)), nc(rx.to(dt))], tol=tol)
    return fam


def gen_bessel():
    """bessel.rs: the modified Bessel family, J0/J1/Y0/Y1, the spherical J0 and Airy Ai, upstream's Cephes
    series in its types with its capability build's fused multiply-adds, so exact; every branch
    (|x| <= 8 and beyond, x <= 2 and beyond for K, 5 for J/Y, +-2.09 for Ai), zero, negatives, infinities, NaN,
    a strided view. Float16 and
    bfloat16 (i0, i0e, i1, i1e) in a whole number of upstream's 32-element vector steps: its scalar
    tail of i0e computes in the 16-bit type itself."""
    fam = Family("bessel")
    ops = ("i0", "special_i0e", "special_i1", "special_i1e", "special_modified_bessel_i0",
           "special_modified_bessel_i1", "special_modified_bessel_k0", "special_modified_bessel_k1",
           "special_scaled_modified_bessel_k0", "special_scaled_modified_bessel_k1", "special_spherical_bessel_j0",
           "special_bessel_j0", "special_bessel_j1", "special_bessel_y0", "special_bessel_y1", "special_airy_ai")
    for dt in (f32, f64):
        t = dn(dt)
        x = torch.cat([vals(dt, (40,), 410, "any") * 6, (torch.arange(-24, 25, dtype=f64) * 0.75).to(dt),
                       torch.tensor([2.0, 8.0, 0.4999, 0.5, 1e-30, 90.0, 720.0], dtype=dt)])
        for op in ops:
            fam.case("%s_%s" % (op, t), op, [x])
            fam.case("%s_nc_%s" % (op, t), op, [nc(x)])
    for dt in (f16, bf16):
        x = (vals(f64, (64,), 411, "finite") * 3).to(dt)
        for op in ops[:4]:
            fam.case("%s_%s" % (op, dn(dt)), op, [x])
    return fam


def gen_scan():
    """scan.rs: cummax/cummin (ties take the later index, NaN wins and stays) and logcumsumexp
    (accumulated in double for float32), each one pass per line as upstream's."""
    fam = Family("scan")
    for dt in FLOATS + INTS + [b8]:
        x = vals(dt, (5, 9), 500)
        for d in (0, 1):
            for op in ("cummax", "cummin"):
                fam.case("%s_%s_d%d" % (op, dn(dt), d), op, [x, d])
                fam.case("%s_%s_d%d_t" % (op, dn(dt), d), op, [vals(dt, (9, 5), 501).t(), d])
        if dt in FLOATS:
            for d in (0, -1):
                fam.case("logcumsumexp_%s_d%d" % (dn(dt), d), "logcumsumexp", [x, d])
                fam.case("logcumsumexp_%s_d%d_nc" % (dn(dt), d), "logcumsumexp", [nc(vals(dt, (5, 9), 502) * 20), d])
    fam.case("cummax_0dim", "cummax", [torch.tensor(2.5), 0])
    fam.case("logcumsumexp_0dim", "logcumsumexp", [torch.tensor(-1.5), -1])
    return fam


def gen_scatter():
    """scatter.rs: scatter_reduce.two in upstream's order and arithmetic, exact: floats in their
    own type (float16/bfloat16 accumulated in float32), integers wrapping in theirs (an integer
    mean floor-divides the wrapped sum by the wrapped count); a 3-d index along its middle dim
    walks rows of another dim."""
    fam = Family("scatter")
    for dt in [f32, f64, f16, bf16, i64, i32, i8, u8, b8]:
        self_ = vals(dt, (4, 5), 600, "finite")
        src = vals(dt, (6, 5), 601, "finite")
        index = torch.randint(0, 4, (6, 5), generator=torch.Generator().manual_seed(602))
        tol = ("exact",)
        for reduce in ("sum", "prod", "mean", "amax", "amin"):
            if dt == b8 and reduce == "mean":
                continue
            for include_self in (True, False):
                fam.case("scatter_reduce_%s_%s_%s" % (dn(dt), reduce, "self" if include_self else "noself"),
                         "scatter_reduce.two", [self_, 0, index, src, reduce, include_self], tol=tol)
        fam.case("scatter_reduce_%s_dim1_t" % dn(dt), "scatter_reduce.two",
                 [vals(dt, (5, 4), 603, "finite").t(), 1, index[:4, :3], src.t()[:4, :3], "amax", True], tol=tol)
    g = torch.Generator().manual_seed(604)
    for reduce in ("sum", "mean"):
        fam.case("scatter_reduce_3d_dim1_" + reduce, "scatter_reduce.two",
                 [vals(f32, (3, 4, 5), 605, "finite"), 1, torch.randint(0, 4, (2, 7, 5), generator=g),
                  vals(f32, (3, 7, 6), 606, "finite"), reduce, False])
    fam.case("scatter_reduce_int8_mean_wraps", "scatter_reduce.two",
             [torch.tensor([5, -3], dtype=i8), 0, torch.zeros(300, dtype=torch.long), torch.full((300,), 3, dtype=i8),
              "mean", True])
    fam.case("scatter_reduce_nan_amax", "scatter_reduce.two",
             [torch.zeros(3), 0, torch.tensor([0, 0, 2]), torch.tensor([1.0, float("nan"), 2.0]), "amax", True])
    fam.case("scatter_reduce_negative_index", "scatter_reduce.two",
             [torch.zeros(3), 0, torch.tensor([-1, 0, -3]), torch.tensor([1.0, 2.0, 4.0]), "sum", True])
    fam.case("scatter_reduce_out_of_bounds", "scatter_reduce.two",
             [torch.zeros(3), 0, torch.tensor([0, 3]), torch.tensor([1.0, 2.0]), "sum", True])
    return fam


def gen_fft():
    """fft.rs (rustfft/realfft): upstream transforms with MKL or pocketfft, so the cases agree to a
    transform's rounding (relative to the signal's size), not bit for bit. No empty case: MKL
    refuses an empty batch ("Inconsistent configuration parameters"), and the core never launches
    a kernel for an empty result (it returns the empty tensor, as upstream's pocketfft builds do)."""
    fam = Family("fft")
    c64, c128 = torch.complex64, torch.complex128

    def tol(dt, n):
        return ("close", 1e-4, 1e-5 * n) if dt in (f32, c64) else ("close", 1e-10, 1e-12 * n)

    def crnd(shape, dt, seed):
        real = f32 if dt == c64 else f64
        return torch.complex(rnd(shape, real, seed=seed), rnd(shape, real, seed=seed + 1))

    for cdt, rdt in ((c64, f32), (c128, f64)):
        t = dn(rdt)
        for shape, dims in (((8,), [0]), ((3, 5), [1]), ((4, 6), [0, 1]), ((2, 3, 7), [0, 2]), ((13,), [0])):
            n = 1
            for d in dims:
                n *= shape[d]
            x = crnd(shape, cdt, seed_of("c2c", shape))
            tag = "%s_%s_%s" % ("x".join(map(str, shape)), "".join(map(str, dims)), t)
            for norm in (0, 1, 2):
                fam.case("c2c_fwd_n%d_%s" % (norm, tag), "_fft_c2c", [x, L(dims), norm, True], tol=tol(rdt, n))
            fam.case("c2c_inv_%s" % tag, "_fft_c2c", [x, L(dims), 2, False], tol=tol(rdt, n))
            fam.case("c2c_nc_%s" % tag, "_fft_c2c", [nc(x), L(dims), 0, True], tol=tol(rdt, n))
            r = rnd(shape, rdt, seed=seed_of("r2c", shape))
            for onesided in (True, False):
                fam.case("r2c_%s_%s" % ("half" if onesided else "full", tag), "_fft_r2c", [r, L(dims), 0, onesided],
                         tol=tol(rdt, n))
            fam.case("r2c_ortho_nc_%s" % tag, "_fft_r2c", [nc(r), L(dims), 1, True], tol=tol(rdt, n))
            last = shape[dims[-1]]
            for size in (2 * (last - 1), 2 * (last - 1) + 1):
                if size < 1:
                    continue
                half = list(shape)
                half[dims[-1]] = size // 2 + 1
                h = crnd(tuple(half), cdt, seed_of("c2r", shape, size))
                fam.case("c2r_%d_%s" % (size, tag), "_fft_c2r", [h, L(dims), 2, size], tol=tol(rdt, n + size))
    return fam


def gen_complex():
    """complex.rs: complex64/complex128 add, sub, mul, div and neg. Sums are upstream's to the bit.
    Upstream's products are `ac - bd, ad + bc` in its vector loop but fused (FMA) in the scalar
    loop that takes each row's last n mod 2V elements and non-contiguous operands, so they agree
    to rounding (an overflowing product, inf in the scalar loop and NaN in the vector one, is left
    out); its vectorised quotient scales by an approximate reciprocal: within 1e-6 (complex64)
    and 1e-14 (complex128) relative."""
    fam = Family("complex")
    for cdt, rdt in ((torch.complex64, f32), (torch.complex128, f64)):
        t = dn(rdt)
        # cancellation in ac - bd makes fused and unfused results differ by more ulp than the
        # operands' scale suggests: tolerances relative to the operands (|x|, |y| <= 3 here)
        qtol = ("close", 1e-6, 1e-5) if rdt == f32 else ("close", 1e-14, 1e-13)
        x = torch.complex(rnd((3, 17), rdt, seed=seed_of("cx", t)), rnd((3, 17), rdt, seed=seed_of("cxi", t)))
        y = torch.complex(rnd((3, 17), rdt, seed=seed_of("cy", t)), rnd((3, 17), rdt, seed=seed_of("cyi", t)))
        row = y[1:2].expand(3, 17)
        for lay, a, b in (("c", x, y), ("bc", x, row), ("nc", nc(x), nc(y))):
            fam.case("add_%s_%s" % (t, lay), "add.Tensor", [a, b, 1])
            fam.case("add_alpha_%s_%s" % (t, lay), "add.Tensor", [a, b, 2.5])
            fam.case("sub_%s_%s" % (t, lay), "sub.Tensor", [a, b, 1])
            fam.case("sub_alpha_%s_%s" % (t, lay), "sub.Tensor", [a, b, 3])
            fam.case("mul_%s_%s" % (t, lay), "mul.Tensor", [a, b], tol=qtol)
            fam.case("div_%s_%s" % (t, lay), "div.Tensor", [a, b], tol=qtol)
            fam.case("neg_%s_%s" % (t, lay), "neg", [a])
        special = torch.tensor([1 + 1j, 0j, 1 + 0j, 1e30 + 1e30j, 3 + 4j, complex("nan"), 2j], dtype=cdt)
        divisor = torch.tensor([0j, 0j, 1e-30 + 0j, 1e30 - 1e29j, 1e-20 + 2e-20j, 1 + 1j, complex("inf")], dtype=cdt)
        fam.case("div_special_%s" % t, "div.Tensor", [special, divisor], tol=qtol)
        keep = [0, 1, 2, 4, 5]  # not the overflowing product (see above) nor NaN times inf
        fam.case("mul_special_%s" % t, "mul.Tensor", [special[keep], divisor[keep]], tol=qtol)
    return fam


FAMILIES = {
    "scatter": gen_scatter,
    "scan": gen_scan,
    "special": gen_special,
    "bessel": gen_bessel,
    "decomp": gen_decomp,
    "copy": gen_copy,
    "binary": gen_binary,
    "unary": gen_unary,
    "reduce": gen_reduce,
    "linalg": gen_linalg,
    "nn": gen_nn,
    "index": gen_index,
    "sort": gen_sort,
    "conv": gen_conv,
    "training": gen_training,
    "fft": gen_fft,
    "complex": gen_complex,
}


def main(argv):
    """`[--seed-offset N] [--out DIR] [family ...]`: another seed offset draws other values (for
    stress runs replayed with `TN_GOLDEN_DIR=DIR cargo test -p torchnative-cpu golden`)."""
    global SEED_OFFSET, OUT_DIR
    argv = list(argv)
    while argv and argv[0].startswith("--"):
        flag, val = argv.pop(0), argv.pop(0)
        if flag == "--seed-offset":
            SEED_OFFSET = int(val)
        elif flag == "--out":
            OUT_DIR = val
        else:
            raise SystemExit("unknown flag " + flag)
    names = argv or list(FAMILIES)
    for n in names:
        fam = FAMILIES[n]()
        fam.write()
        print("%s: %d cases" % (n, sum(1 for ln in fam.lines if ln.startswith("case "))))


if __name__ == "__main__":
    main(sys.argv[1:])
