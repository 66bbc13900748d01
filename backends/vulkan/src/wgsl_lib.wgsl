// Library functions shared by every generated shader of torchnative-vulkan.
// int64 is a vec2<u32> (x = low word, y = high word, two's complement); bool is `bool` in
// registers and one byte in memory; int8/uint8/int32 compute in i32; float32 in f32.

fn f_nan() -> f32 { return bitcast<f32>(0x7fc00000u); }
fn f_inf() -> f32 { return bitcast<f32>(0x7f800000u); }
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn is_inf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }

fn l_from_i(x: i32) -> vec2<u32> {
    return vec2<u32>(bitcast<u32>(x), select(0u, 0xffffffffu, x < 0));
}
fn l_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
fn l_neg(a: vec2<u32>) -> vec2<u32> { return l_add(~a, vec2<u32>(1u, 0u)); }
fn l_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return l_add(a, l_neg(b)); }
fn mul_wide(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;
    let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0; let p11 = a1 * b1;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    return vec2<u32>((p00 & 0xffffu) | (mid << 16u), p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}
fn l_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let w = mul_wide(a.x, b.x);
    return vec2<u32>(w.x, w.y + a.x * b.y + a.y * b.x);
}
fn l_is_neg(a: vec2<u32>) -> bool { return (a.y >> 31u) == 1u; }
fn l_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    if (a.y != b.y) { return bitcast<i32>(a.y) < bitcast<i32>(b.y); }
    return a.x < b.x;
}
fn l_eq(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x == b.x && a.y == b.y; }
fn l_abs(a: vec2<u32>) -> vec2<u32> { return select(a, l_neg(a), l_is_neg(a)); }
fn l_max(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(a, b, l_lt(a, b)); }
fn l_min(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(a, b, l_lt(b, a)); }
fn l_nz(a: vec2<u32>) -> bool { return (a.x | a.y) != 0u; }
// The index an int64 holds, when it fits in i32 (callers bounds-check it).
fn l_idx(a: vec2<u32>) -> i32 {
    let fits = (a.y == 0u && a.x < 0x80000000u) || (a.y == 0xffffffffu && a.x >= 0x80000000u);
    return select(-2147483647 - 1, bitcast<i32>(a.x), fits);
}

fn bit_of(hi: u32, lo: u32, k: u32) -> u32 {
    if (k >= 32u) { return (hi >> (k - 32u)) & 1u; }
    return (lo >> k) & 1u;
}
// An unsigned 64-bit integer to f32, rounded to nearest even (exact, unlike a two-step convert).
fn u64_to_f(hi: u32, lo: u32) -> f32 {
    if (hi == 0u && lo < 16777216u) { return f32(lo); }
    var p: u32;
    if (hi != 0u) { p = 32u + firstLeadingBit(hi); } else { p = firstLeadingBit(lo); }
    let s = p - 23u;
    var m: u32;
    if (s >= 32u) { m = hi >> (s - 32u); } else { m = (lo >> s) | (hi << (32u - s)); }
    let r = bit_of(hi, lo, s - 1u);
    let k = s - 1u;
    var sticky = false;
    if (k >= 32u) { sticky = lo != 0u || (hi & ((1u << (k - 32u)) - 1u)) != 0u; }
    else { sticky = (lo & ((1u << k) - 1u)) != 0u; }
    if (r == 1u && (sticky || (m & 1u) == 1u)) { m = m + 1u; }
    return ldexp(f32(m), i32(s));
}
fn l_to_f(a: vec2<u32>) -> f32 {
    let m = l_abs(a);
    let r = u64_to_f(m.y, m.x);
    return select(r, -r, l_is_neg(a));
}
fn i_to_f(x: i32) -> f32 {
    if (x > -16777216 && x < 16777216) { return f32(x); }
    return l_to_f(l_from_i(x));
}
fn f_to_l(x: f32) -> vec2<u32> {
    let t = trunc(x);
    if (abs(t) < 2147483648.0) { return l_from_i(i32(t)); }
    let a = abs(t);
    let hi = floor(a / 4294967296.0);
    let m = vec2<u32>(u32(a - hi * 4294967296.0), u32(hi));
    return select(m, l_neg(m), t < 0.0);
}
fn f_to_i(x: f32) -> i32 {
    if (abs(x) < 2147483648.0) { return i32(x); }
    return bitcast<i32>(f_to_l(x).x);
}

fn f_log(x: f32) -> f32 {
    if (x < 0.0 || is_nan(x)) { return f_nan(); }
    if (x == 0.0) { return -f_inf(); }
    if (is_inf(x)) { return x; }
    return log(x);
}
fn f_sqrt(x: f32) -> f32 {
    if (x < 0.0) { return f_nan(); }
    return sqrt(x);
}
fn f_erf(x: f32) -> f32 {
    let a = abs(x);
    if (is_nan(x)) { return x; }
    if (a < 0.5) {
        let z = a * a;
        let s = a * (1.0 + z * (-1.0 / 3.0 + z * (1.0 / 10.0 + z * (-1.0 / 42.0 + z * (1.0 / 216.0 + z * (-1.0 / 1320.0 + z / 9360.0))))));
        return select(1.1283791670955126 * s, -1.1283791670955126 * s, x < 0.0);
    }
    if (a > 4.0) { return select(1.0, -1.0, x < 0.0); }
    let t = 1.0 / (1.0 + 0.3275911 * a);
    let y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-a * a);
    return select(y, -y, x < 0.0);
}
fn f_tanh(x: f32) -> f32 {
    let a = abs(x);
    if (is_nan(x)) { return x; }
    var y: f32;
    if (a < 0.55) {
        let z = a * a;
        y = a * (1.0 + z * (-1.0 / 3.0 + z * (2.0 / 15.0 + z * (-17.0 / 315.0 + z * (62.0 / 2835.0 + z * (-1382.0 / 155925.0 + z * (21844.0 / 6081075.0)))))));
    } else if (a > 15.0) {
        y = 1.0;
    } else {
        let e = exp(-2.0 * a);
        y = (1.0 - e) / (1.0 + e);
    }
    return select(y, -y, x < 0.0);
}
fn f_sigmoid(x: f32) -> f32 { return 1.0 / (1.0 + exp(-x)); }
fn f_log1p(x: f32) -> f32 {
    let u = 1.0 + x;
    if (u == 1.0) { return x; }
    if (is_inf(u)) { return f_log(u); }
    return f_log(u) * x / (u - 1.0);
}
fn f_expm1(x: f32) -> f32 {
    let u = exp(x);
    if (u == 1.0) { return x; }
    let um1 = u - 1.0;
    if (um1 == -1.0) { return -1.0; }
    if (is_inf(u)) { return u; }
    return um1 * x / log(u);
}
// NaN-propagating; on ties (0.0 and -0.0) the first operand, as upstream 2.13 answers.
fn f_max(a: f32, b: f32) -> f32 {
    if (is_nan(a) || is_nan(b)) { return f_nan(); }
    return select(a, b, b > a);
}
fn f_min(a: f32, b: f32) -> f32 {
    if (is_nan(a) || is_nan(b)) { return f_nan(); }
    return select(a, b, b < a);
}
// C's fmod, exactly: the remainder of the mantissas by long division (|a| >= |b| case).
fn f_fmod(a: f32, b: f32) -> f32 {
    if (is_nan(a) || is_nan(b) || is_inf(a) || b == 0.0) { return f_nan(); }
    if (is_inf(b)) { return a; }
    let ua = bitcast<u32>(a) & 0x7fffffffu;
    let ub = bitcast<u32>(b) & 0x7fffffffu;
    let sz = bitcast<f32>(bitcast<u32>(a) & 0x80000000u);
    if (ua < ub) { return a; }
    if (ua == ub) { return sz; }
    var ea = i32(ua >> 23u); var ma = ua & 0x7fffffu;
    var eb = i32(ub >> 23u); var mb = ub & 0x7fffffu;
    if (ea == 0) { ea = 1; loop { if (ma >= 0x800000u) { break; } ma = ma << 1u; ea = ea - 1; } } else { ma = ma | 0x800000u; }
    if (eb == 0) { eb = 1; loop { if (mb >= 0x800000u) { break; } mb = mb << 1u; eb = eb - 1; } } else { mb = mb | 0x800000u; }
    var r = ma % mb;
    for (var d = ea - eb; d > 0; d = d - 1) { r = (r << 1u) % mb; }
    if (r == 0u) { return sz; }
    let res = ldexp(f32(r), eb - 150);
    return select(res, -res, a < 0.0);
}
// Upstream's div_floor_floating (Python's //).
fn f_div_floor(a: f32, b: f32) -> f32 {
    if (b == 0.0) { return a / b; }
    let m = f_fmod(a, b);
    var div = (a - m) / b;
    if (!(m == 0.0) && (b < 0.0) != (m < 0.0)) { div = div - 1.0; }
    if (!(div == 0.0)) {
        var fl = floor(div);
        if (div - fl > 0.5) { fl = fl + 1.0; }
        return fl;
    }
    return bitcast<f32>(bitcast<u32>(a / b) & 0x80000000u);
}
// Upstream's remainder for floats: fmod, moved to the divisor's sign.
fn f_remainder(a: f32, b: f32) -> f32 {
    var m = f_fmod(a, b);
    if (!(m == 0.0) && (b < 0.0) != (m < 0.0)) { m = m + b; }
    return m;
}
fn f_pow(a: f32, b: f32) -> f32 {
    if (b == 0.0) { return 1.0; }
    if (a == 1.0) { return 1.0; }
    if (is_nan(a) || is_nan(b)) { return f_nan(); }
    if (b == 1.0) { return a; }
    if (b == 2.0) { return a * a; }
    if (b == 0.5) { return f_sqrt(a); }
    if (b == -1.0) { return 1.0 / a; }
    let bi = trunc(b);
    let odd = bi == b && abs(b) < 16777216.0 && (i32(bi) & 1) == 1;
    if (a == 0.0) {
        if (b < 0.0) { return select(f_inf(), select(f_inf(), -f_inf(), bitcast<u32>(a) != 0u), odd); }
        return select(0.0, a, odd);
    }
    if (a < 0.0 && bi != b) { return f_nan(); }
    let r = exp2(b * log2(abs(a)));
    return select(r, -r, a < 0.0 && odd);
}
fn f_sign(x: f32) -> f32 {
    if (x > 0.0) { return 1.0; }
    if (x < 0.0) { return -1.0; }
    return x;
}
fn i_sign(x: i32) -> i32 { return select(select(0, -1, x < 0), 1, x > 0); }
fn f_gelu(x: f32) -> f32 { return x * 0.5 * (1.0 + f_erf(x * 0.7071067811865476)); }
fn f_gelu_tanh(x: f32) -> f32 {
    let inner = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + f_tanh(inner));
}

// ---- float64, stored as its IEEE bits in a vec2<u32> (x = low word). Only exact operations:
// casts, negation, absolute value, comparisons and division (a restoring long division).
fn u_shl(a: vec2<u32>, n: u32) -> vec2<u32> {
    if (n == 0u) { return a; }
    if (n >= 64u) { return vec2<u32>(0u, 0u); }
    if (n >= 32u) { return vec2<u32>(0u, a.x << (n - 32u)); }
    return vec2<u32>(a.x << n, (a.y << n) | (a.x >> (32u - n)));
}
fn u_shr(a: vec2<u32>, n: u32) -> vec2<u32> {
    if (n == 0u) { return a; }
    if (n >= 64u) { return vec2<u32>(0u, 0u); }
    if (n >= 32u) { return vec2<u32>(a.y >> (n - 32u), 0u); }
    return vec2<u32>((a.x >> n) | (a.y << (32u - n)), a.y >> n);
}
fn u_lt(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }
// Any of bits [0, k) set.
fn low_nonzero(hi: u32, lo: u32, k: u32) -> bool {
    if (k == 0u) { return false; }
    if (k >= 64u) { return (hi | lo) != 0u; }
    if (k >= 32u) { return lo != 0u || (hi & ((1u << (k - 32u)) - 1u)) != 0u; }
    return (lo & ((1u << k) - 1u)) != 0u;
}
fn lead64(a: vec2<u32>) -> u32 {
    if (a.y != 0u) { return 32u + firstLeadingBit(a.y); }
    return firstLeadingBit(a.x);
}
fn d_is_nan(a: vec2<u32>) -> bool {
    let h = a.y & 0x7fffffffu;
    return h > 0x7ff00000u || (h == 0x7ff00000u && a.x != 0u);
}
fn d_is_inf(a: vec2<u32>) -> bool { return (a.y & 0x7fffffffu) == 0x7ff00000u && a.x == 0u; }
fn d_is_zero(a: vec2<u32>) -> bool { return (a.y & 0x7fffffffu) == 0u && a.x == 0u; }
fn d_nz(a: vec2<u32>) -> bool { return !d_is_zero(a); }
fn d_nan() -> vec2<u32> { return vec2<u32>(0u, 0x7ff80000u); }
fn d_key(a: vec2<u32>) -> vec2<u32> {
    if ((a.y >> 31u) == 1u) { return ~a; }
    return vec2<u32>(a.x, a.y | 0x80000000u);
}
fn d_eq(a: vec2<u32>, b: vec2<u32>) -> bool {
    if (d_is_nan(a) || d_is_nan(b)) { return false; }
    if (d_is_zero(a) && d_is_zero(b)) { return true; }
    return a.x == b.x && a.y == b.y;
}
fn d_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    if (d_is_nan(a) || d_is_nan(b)) { return false; }
    if (d_is_zero(a) && d_is_zero(b)) { return false; }
    return u_lt(d_key(a), d_key(b));
}
fn f_to_d(x: f32) -> vec2<u32> {
    let b = bitcast<u32>(x);
    let sign = b & 0x80000000u;
    let e = (b >> 23u) & 0xffu;
    var m = b & 0x7fffffu;
    if (e == 0xffu) { return vec2<u32>(m << 29u, sign | 0x7ff00000u | (m >> 3u)); }
    if (e == 0u) {
        if (m == 0u) { return vec2<u32>(0u, sign); }
        let p = firstLeadingBit(m);
        m = (m << (23u - p)) & 0x7fffffu;
        return vec2<u32>(m << 29u, sign | ((p + 874u) << 20u) | (m >> 3u));
    }
    return vec2<u32>(m << 29u, sign | ((e + 896u) << 20u) | (m >> 3u));
}
// float64 -> float32, rounded to nearest even (overflow to inf, underflow through subnormals).
fn d_to_f(a: vec2<u32>) -> f32 {
    let sign = a.y & 0x80000000u;
    let e = (a.y >> 20u) & 0x7ffu;
    let mh = a.y & 0xfffffu;
    if (e == 0x7ffu) {
        if ((mh | a.x) != 0u) { return bitcast<f32>(sign | 0x7fc00000u | (mh << 3u) | (a.x >> 29u)); }
        return bitcast<f32>(sign | 0x7f800000u);
    }
    if (e == 0u) { return bitcast<f32>(sign); }
    var fe = i32(e) - 1023 + 127;
    var shift = 29u;
    if (fe <= 0) {
        shift = 29u + u32(1 - fe);
        fe = 0;
        if (shift > 54u) { return bitcast<f32>(sign); }
    }
    let mm = vec2<u32>(a.x, mh | 0x100000u);
    var kept = u_shr(mm, shift).x;
    let r = bit_of(mm.y, mm.x, shift - 1u);
    let sticky = low_nonzero(mm.y, mm.x, shift - 1u);
    if (r == 1u && (sticky || (kept & 1u) == 1u)) { kept = kept + 1u; }
    var bits: u32;
    if (fe == 0) { bits = kept; } else {
        if (fe >= 255) { return bitcast<f32>(sign | 0x7f800000u); }
        bits = (u32(fe - 1) << 23u) + kept;
    }
    if (bits >= 0x7f800000u) { bits = 0x7f800000u; }
    return bitcast<f32>(sign | bits);
}
// An unsigned 64-bit integer to float64, rounded to nearest even.
fn u64_to_d(v: vec2<u32>) -> vec2<u32> {
    if ((v.x | v.y) == 0u) { return vec2<u32>(0u, 0u); }
    var p = lead64(v);
    var m: vec2<u32>;
    if (p <= 52u) { m = u_shl(v, 52u - p); } else {
        let s = p - 52u;
        m = u_shr(v, s);
        let r = bit_of(v.y, v.x, s - 1u);
        let sticky = low_nonzero(v.y, v.x, s - 1u);
        if (r == 1u && (sticky || (m.x & 1u) == 1u)) { m = l_add(m, vec2<u32>(1u, 0u)); }
        if (m.y >= 0x200000u) { m = u_shr(m, 1u); p = p + 1u; }
    }
    return vec2<u32>(m.x, ((p + 1023u) << 20u) | (m.y & 0xfffffu));
}
fn l_to_d(a: vec2<u32>) -> vec2<u32> {
    var r = u64_to_d(l_abs(a));
    if (l_is_neg(a)) { r.y = r.y | 0x80000000u; }
    return r;
}
// float64 -> int64, truncating toward zero.
fn d_to_l(a: vec2<u32>) -> vec2<u32> {
    let e = i32((a.y >> 20u) & 0x7ffu) - 1023;
    if (e < 0) { return vec2<u32>(0u, 0u); }
    let m = vec2<u32>(a.x, (a.y & 0xfffffu) | 0x100000u);
    var r: vec2<u32>;
    if (e >= 52) { r = u_shl(m, u32(min(e - 52, 63))); } else { r = u_shr(m, u32(52 - e)); }
    return select(r, l_neg(r), (a.y >> 31u) == 1u);
}
fn d_div(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let sign = (a.y ^ b.y) & 0x80000000u;
    if (d_is_nan(a) || d_is_nan(b)) { return d_nan(); }
    if (d_is_inf(a)) {
        if (d_is_inf(b)) { return d_nan(); }
        return vec2<u32>(0u, sign | 0x7ff00000u);
    }
    if (d_is_inf(b)) { return vec2<u32>(0u, sign); }
    if (d_is_zero(b)) {
        if (d_is_zero(a)) { return d_nan(); }
        return vec2<u32>(0u, sign | 0x7ff00000u);
    }
    if (d_is_zero(a)) { return vec2<u32>(0u, sign); }
    var ea = i32((a.y >> 20u) & 0x7ffu);
    var eb = i32((b.y >> 20u) & 0x7ffu);
    var ma = vec2<u32>(a.x, a.y & 0xfffffu);
    var mb = vec2<u32>(b.x, b.y & 0xfffffu);
    if (ea == 0) { let p = lead64(ma); ma = u_shl(ma, 52u - p); ea = 1 - i32(52u - p); } else { ma.y = ma.y | 0x100000u; }
    if (eb == 0) { let p = lead64(mb); mb = u_shl(mb, 52u - p); eb = 1 - i32(52u - p); } else { mb.y = mb.y | 0x100000u; }
    var e = ea - eb + 1023;
    if (u_lt(ma, mb)) { ma = u_shl(ma, 1u); e = e - 1; }
    var rem = ma;
    var q = vec2<u32>(0u, 0u);
    for (var it = 0; it < 54; it = it + 1) {
        q = u_shl(q, 1u);
        if (!u_lt(rem, mb)) { rem = l_sub(rem, mb); q.x = q.x | 1u; }
        rem = u_shl(rem, 1u);
    }
    var sticky = (rem.x | rem.y) != 0u;
    if (e <= 0) {
        let sh = u32(1 - e);
        if (sh > 60u) { return vec2<u32>(0u, sign); }
        sticky = sticky || low_nonzero(q.y, q.x, sh);
        q = u_shr(q, sh);
        e = 0;
    }
    var mant = u_shr(q, 1u);
    if ((q.x & 1u) == 1u && (sticky || (mant.x & 1u) == 1u)) { mant = l_add(mant, vec2<u32>(1u, 0u)); }
    var bits = mant;
    if (e > 0) { bits = l_add(vec2<u32>(0u, u32(e - 1) << 20u), mant); }
    if (bits.y >= 0x7ff00000u) { return vec2<u32>(0u, sign | 0x7ff00000u); }
    return vec2<u32>(bits.x, bits.y | sign);
}

fn f_sinh(x: f32) -> f32 {
    let a = abs(x);
    var y: f32;
    if (a < 0.5) { let z = a * a; y = a * (1.0 + z * (1.0 / 6.0 + z * (1.0 / 120.0 + z * (1.0 / 5040.0 + z / 362880.0)))); }
    else if (a > 88.0) { y = exp(a - 0.6931471805599453); }
    else { let e = exp(a); y = 0.5 * (e - 1.0 / e); }
    return select(y, -y, x < 0.0);
}
fn f_cosh(x: f32) -> f32 {
    let a = abs(x);
    if (a > 88.0) { return exp(a - 0.6931471805599453); }
    let e = exp(a);
    return 0.5 * (e + 1.0 / e);
}
fn f_asinh(x: f32) -> f32 {
    let a = abs(x);
    var y: f32;
    if (a > 1e18) { y = f_log(a) + 0.6931471805599453; }
    else { y = f_log1p(a + a * a / (1.0 + sqrt(1.0 + a * a))); }
    return select(y, -y, x < 0.0);
}
fn f_acosh(x: f32) -> f32 {
    if (x < 1.0) { return f_nan(); }
    if (x > 1e18) { return f_log(x) + 0.6931471805599453; }
    let t = x - 1.0;
    return f_log1p(t + sqrt(2.0 * t + t * t));
}
fn f_atanh(x: f32) -> f32 {
    let a = abs(x);
    if (a > 1.0) { return f_nan(); }
    let y = 0.5 * f_log1p(2.0 * a / (1.0 - a));
    return select(y, -y, x < 0.0);
}
// Cephes' atanf (range reduction to |x| <= tan(pi/8), a degree-9 odd polynomial): ~1 ulp,
// where lavapipe's builtin atan is ~12 ulp and its asin/acos ~1e-4.
fn f_atan(v: f32) -> f32 {
    if (is_nan(v)) { return v; }
    var x = abs(v);
    var y = 0.0;
    if (x > 2.414213562373095) { y = 1.5707963267948966; x = -1.0 / x; }
    else if (x > 0.4142135623730950) { y = 0.7853981633974483; x = (x - 1.0) / (x + 1.0); }
    let z = x * x;
    y = y + ((((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * x + x);
    return select(y, -y, v < 0.0);
}
fn sign_bit(x: f32) -> bool { return (bitcast<u32>(x) >> 31u) == 1u; }
fn with_sign_of(m: f32, s: f32) -> f32 { return select(m, -m, sign_bit(s)); }
fn f_atan2(y: f32, x: f32) -> f32 {
    let pi = 3.141592653589793;
    if (is_nan(x) || is_nan(y)) { return f_nan(); }
    if (is_inf(x) || is_inf(y)) {
        if (is_inf(x) && is_inf(y)) { return with_sign_of(select(0.7853981633974483, 2.356194490192345, x < 0.0), y); }
        if (is_inf(y)) { return with_sign_of(1.5707963267948966, y); }
        return with_sign_of(select(0.0, pi, x < 0.0), y);
    }
    if (y == 0.0) { return with_sign_of(select(0.0, pi, sign_bit(x)), y); }
    if (x == 0.0) { return with_sign_of(1.5707963267948966, y); }
    let a = f_atan(y / x);
    if (x > 0.0) { return a; }
    return select(a - pi, a + pi, !sign_bit(y));
}
fn f_asin(x: f32) -> f32 {
    if (abs(x) > 1.0) { return f_nan(); }
    return f_atan2(x, sqrt((1.0 - x) * (1.0 + x)));
}
fn f_acos(x: f32) -> f32 {
    if (abs(x) > 1.0) { return f_nan(); }
    return f_atan2(sqrt((1.0 - x) * (1.0 + x)), x);
}

// Unsigned 64-bit division by restoring long division: (quotient, remainder). `d` != 0 and both
// operands are magnitudes of int64 values (<= 2^63), so the running remainder never overflows.
fn u64_divmod(n: vec2<u32>, d: vec2<u32>) -> array<vec2<u32>, 2> {
    var q = vec2<u32>(0u, 0u);
    var r = vec2<u32>(0u, 0u);
    for (var i = 63; i >= 0; i = i - 1) {
        r = u_shl(r, 1u);
        r.x = r.x | bit_of(n.y, n.x, u32(i));
        if (!u_lt(r, d)) {
            r = l_sub(r, d);
            if (i >= 32) { q.y = q.y | (1u << u32(i - 32)); } else { q.x = q.x | (1u << u32(i)); }
        }
    }
    return array<vec2<u32>, 2>(q, r);
}
// Signed int64 division with torch's rounding modes: mode 0 trunc, 1 floor; `rem` selects the
// remainder (1: Python's %, sign of the divisor; 2: C's fmod, sign of the dividend).
fn l_div(a: vec2<u32>, b: vec2<u32>, mode: i32, rem: i32) -> vec2<u32> {
    let qr = u64_divmod(l_abs(a), l_abs(b));
    let neg = l_is_neg(a) != l_is_neg(b);
    var q = select(qr[0], l_neg(qr[0]), neg);
    var r = select(qr[1], l_neg(qr[1]), l_is_neg(a));
    if (rem == 2) { return r; }
    if (mode == 1 && l_nz(r) && neg) {
        q = l_sub(q, vec2<u32>(1u, 0u));
        r = l_add(r, b);
    }
    if (rem == 1) { return r; }
    return q;
}
fn i_div(a: i32, b: i32, mode: i32, rem: i32) -> i32 {
    return bitcast<i32>(l_div(l_from_i(a), l_from_i(b), mode, rem).x);
}
