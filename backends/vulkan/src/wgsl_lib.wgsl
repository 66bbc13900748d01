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
fn f_max(a: f32, b: f32) -> f32 { if (is_nan(a) || is_nan(b)) { return f_nan(); } return max(a, b); }
fn f_min(a: f32, b: f32) -> f32 { if (is_nan(a) || is_nan(b)) { return f_nan(); } return min(a, b); }
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
