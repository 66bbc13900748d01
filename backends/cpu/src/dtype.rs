//! Element types and torch's conversion rules between them, plus the `dispatch_*!` macros that
//! turn a runtime [`TnDtype`] into a concrete Rust type.
//!
//! Conversions follow upstream's x86-64 build (checked against torch 2.13.0, see
//! `tests/gen_expected.py`):
//! * float → int truncates toward zero. Out-of-range values and NaN behave as the x86 `cvtt*`
//!   instructions do: → int8/int16/int32 go through a 32-bit conversion (out of range gives
//!   `i32::MIN`) and keep the low bits; → uint8 and → int64 go through a 64-bit conversion
//!   (out of range gives `i64::MIN`; c10 converts to uint8 through int64) and keep the low bits.
//! * → bool is `!= 0` (NaN is true); bool → x is 0/1.
//! * int → int wraps (keeps the low bits).
//! * → f16/bf16 goes through f32 (c10::Half and c10::BFloat16 are constructed from float), then
//!   rounds to nearest even; a double is therefore rounded twice, as upstream does.

use half::{bf16, f16};
use torchnative_backend::abi::TnDtype;

/// A storable element type.
pub trait Elem: Copy + Send + Sync + PartialEq + Default + std::fmt::Debug + 'static {
    const DTYPE: TnDtype;
    /// The C++ type name upstream's overflow messages use.
    const CNAME: &'static str;
    /// `numeric_limits<T>::lowest()` and `max()` as doubles (unused for bool).
    const LOWEST: f64;
    const MAX: f64;
    fn from_i64(v: i64) -> Self;
    fn from_f64(v: f64) -> Self;
    fn from_bool(v: bool) -> Self;
    fn to_f64(self) -> f64;
    fn to_bool(self) -> bool;
    /// Converts `self` to `D` with torch's rules (the rules of `Tensor.to`).
    fn cast<D: Elem>(self) -> D;
}

/// x86 `cvttsd2si` (32-bit): truncation, `i32::MIN` when out of range or NaN.
#[inline(always)]
pub fn cvtt_i32(v: f64) -> i32 {
    if v > -2147483649.0 && v < 2147483648.0 {
        v as i32
    } else {
        i32::MIN
    }
}

/// x86 `cvttsd2si` (64-bit): truncation, `i64::MIN` when out of range or NaN.
#[inline(always)]
pub fn cvtt_i64(v: f64) -> i64 {
    if (-9223372036854775808.0..9223372036854775808.0).contains(&v) {
        v as i64
    } else {
        i64::MIN
    }
}

macro_rules! int_elem {
    ($t:ty, $dt:ident, $cname:literal, |$v:ident| $from_f:expr) => {
        impl Elem for $t {
            const DTYPE: TnDtype = TnDtype::$dt;
            const CNAME: &'static str = $cname;
            const LOWEST: f64 = <$t>::MIN as f64;
            const MAX: f64 = <$t>::MAX as f64;
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_f64($v: f64) -> Self {
                $from_f
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn to_bool(self) -> bool {
                self != 0
            }
            #[inline(always)]
            fn cast<D: Elem>(self) -> D {
                D::from_i64(self as i64)
            }
        }
    };
}

int_elem!(u8, UInt8, "uint8_t", |v| cvtt_i64(v) as u8);
int_elem!(i8, Int8, "int8_t", |v| cvtt_i32(v) as i8);
int_elem!(i16, Int16, "int16_t", |v| cvtt_i32(v) as i16);
int_elem!(i32, Int32, "int", |v| cvtt_i32(v));
int_elem!(i64, Int64, "int64_t", |v| cvtt_i64(v));

/// A bool element as stored: one byte, read as upstream reads it (any nonzero byte is true) and
/// written as 0 or 1. A byte other than 0/1 reaches a bool tensor through `view(torch.bool)` or an
/// untyped storage; reading it as Rust's `bool` would be undefined behaviour, and upstream's
/// kernels normalise it (`x.float()` is 1.0, `x.clone()` stores 1).
#[repr(transparent)]
#[derive(Clone, Copy, Default, Debug)]
pub struct Bool(u8);

impl Bool {
    pub const FALSE: Bool = Bool(0);
    pub const TRUE: Bool = Bool(1);
    #[inline(always)]
    pub fn new(v: bool) -> Self {
        Bool(v as u8)
    }
    #[inline(always)]
    pub fn get(self) -> bool {
        self.0 != 0
    }
}

impl PartialEq for Bool {
    #[inline(always)]
    fn eq(&self, o: &Self) -> bool {
        self.get() == o.get()
    }
}
impl Eq for Bool {}
impl PartialOrd for Bool {
    #[inline(always)]
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Bool {
    #[inline(always)]
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.get().cmp(&o.get())
    }
}
impl std::ops::Not for Bool {
    type Output = Bool;
    #[inline(always)]
    fn not(self) -> Bool {
        Bool::new(!self.get())
    }
}
macro_rules! bool_bitop {
    ($tr:ident, $f:ident, $op:tt) => {
        impl std::ops::$tr for Bool {
            type Output = Bool;
            #[inline(always)]
            fn $f(self, o: Bool) -> Bool {
                Bool::new(self.get() $op o.get())
            }
        }
    };
}
bool_bitop!(BitAnd, bitand, &);
bool_bitop!(BitOr, bitor, |);
bool_bitop!(BitXor, bitxor, ^);

impl Elem for Bool {
    const DTYPE: TnDtype = TnDtype::Bool;
    const CNAME: &'static str = "bool";
    const LOWEST: f64 = 0.0;
    const MAX: f64 = 1.0;
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        Bool::new(v != 0)
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        Bool::new(v != 0.0)
    }
    #[inline(always)]
    fn from_bool(v: bool) -> Self {
        Bool::new(v)
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self.get() as u8 as f64
    }
    #[inline(always)]
    fn to_bool(self) -> bool {
        self.get()
    }
    #[inline(always)]
    fn cast<D: Elem>(self) -> D {
        D::from_bool(self.get())
    }
}

impl Elem for f32 {
    const DTYPE: TnDtype = TnDtype::Float32;
    const CNAME: &'static str = "float";
    const LOWEST: f64 = f32::MIN as f64;
    const MAX: f64 = f32::MAX as f64;
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn from_bool(v: bool) -> Self {
        v as u8 as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn to_bool(self) -> bool {
        self != 0.0
    }
    #[inline(always)]
    fn cast<D: Elem>(self) -> D {
        D::from_f64(self as f64)
    }
}

impl Elem for f64 {
    const DTYPE: TnDtype = TnDtype::Float64;
    const CNAME: &'static str = "double";
    const LOWEST: f64 = f64::MIN;
    const MAX: f64 = f64::MAX;
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v as f64
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn from_bool(v: bool) -> Self {
        v as u8 as f64
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn to_bool(self) -> bool {
        self != 0.0
    }
    #[inline(always)]
    fn cast<D: Elem>(self) -> D {
        D::from_f64(self)
    }
}

macro_rules! half_elem {
    ($t:ty, $dt:ident, $cname:literal) => {
        impl Elem for $t {
            const DTYPE: TnDtype = TnDtype::$dt;
            const CNAME: &'static str = $cname;
            const LOWEST: f64 = <$t>::MIN.to_f64_const();
            const MAX: f64 = <$t>::MAX.to_f64_const();
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                <$t>::from_f32(v as f32)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                // Through f32, as c10 does (double rounding is upstream's behaviour).
                <$t>::from_f32(v as f32)
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                <$t>::from_f32(v as u8 as f32)
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.to_f32() as f64
            }
            #[inline(always)]
            fn to_bool(self) -> bool {
                self.to_f32() != 0.0
            }
            #[inline(always)]
            fn cast<D: Elem>(self) -> D {
                D::from_f64(self.to_f32() as f64)
            }
        }
    };
}
half_elem!(f16, Float16, "c10::Half");
half_elem!(bf16, BFloat16, "c10::BFloat16");

/// A floating element type and the type it computes in (f16/bf16 compute in f32).
pub trait FloatElem: Elem {
    type Acc: Real;
    fn to_acc(self) -> Self::Acc;
    fn from_acc(a: Self::Acc) -> Self;
}

impl FloatElem for f32 {
    type Acc = f32;
    #[inline(always)]
    fn to_acc(self) -> f32 {
        self
    }
    #[inline(always)]
    fn from_acc(a: f32) -> f32 {
        a
    }
}
impl FloatElem for f64 {
    type Acc = f64;
    #[inline(always)]
    fn to_acc(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_acc(a: f64) -> f64 {
        a
    }
}
impl FloatElem for f16 {
    type Acc = f32;
    #[inline(always)]
    fn to_acc(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn from_acc(a: f32) -> f16 {
        f16::from_f32(a)
    }
}
impl FloatElem for bf16 {
    type Acc = f32;
    #[inline(always)]
    fn to_acc(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn from_acc(a: f32) -> bf16 {
        bf16::from_f32(a)
    }
}

pub use torchnative_backend::dtype::{dtype_name, is_float, is_int};

/// `dispatch_all!(dtype, T => body)`: runs `body` with `T` the element type of `dtype`, for the
/// ten real dtypes; other dtypes make the enclosing function return a NotImplemented error.
#[macro_export]
macro_rules! dispatch_all {
    ($dt:expr, $op:expr, $T:ident => $body:expr) => {{
        use ::torchnative_backend::abi::TnDtype as __D;
        match $dt {
            __D::UInt8 => {
                #[allow(dead_code)]
                type $T = u8;
                $body
            }
            __D::Int8 => {
                #[allow(dead_code)]
                type $T = i8;
                $body
            }
            __D::Int16 => {
                #[allow(dead_code)]
                type $T = i16;
                $body
            }
            __D::Int32 => {
                #[allow(dead_code)]
                type $T = i32;
                $body
            }
            __D::Int64 => {
                #[allow(dead_code)]
                type $T = i64;
                $body
            }
            __D::Float16 => {
                #[allow(dead_code)]
                type $T = ::half::f16;
                $body
            }
            __D::BFloat16 => {
                #[allow(dead_code)]
                type $T = ::half::bf16;
                $body
            }
            __D::Float32 => {
                #[allow(dead_code)]
                type $T = f32;
                $body
            }
            __D::Float64 => {
                #[allow(dead_code)]
                type $T = f64;
                $body
            }
            __D::Bool => {
                #[allow(dead_code)]
                type $T = $crate::dtype::Bool;
                $body
            }
            other => return Err($crate::kernel::unsupported_dtype($op, other)),
        }
    }};
}

/// `dispatch_float!(dtype, op, T, A => body)`: `T` the element type, `A` its compute type.
#[macro_export]
macro_rules! dispatch_float {
    ($dt:expr, $op:expr, $T:ident, $A:ident => $body:expr) => {{
        use ::torchnative_backend::abi::TnDtype as __D;
        match $dt {
            __D::Float16 => {
                #[allow(dead_code)]
                type $T = ::half::f16;
                #[allow(dead_code)]
                type $A = f32;
                $body
            }
            __D::BFloat16 => {
                #[allow(dead_code)]
                type $T = ::half::bf16;
                #[allow(dead_code)]
                type $A = f32;
                $body
            }
            __D::Float32 => {
                #[allow(dead_code)]
                type $T = f32;
                #[allow(dead_code)]
                type $A = f32;
                $body
            }
            __D::Float64 => {
                #[allow(dead_code)]
                type $T = f64;
                #[allow(dead_code)]
                type $A = f64;
                $body
            }
            other => return Err($crate::kernel::unsupported_dtype($op, other)),
        }
    }};
}

/// `dispatch_int!(dtype, op, T => body)`: the five integer types (not bool).
#[macro_export]
macro_rules! dispatch_int {
    ($dt:expr, $op:expr, $T:ident => $body:expr) => {{
        use ::torchnative_backend::abi::TnDtype as __D;
        match $dt {
            __D::UInt8 => {
                #[allow(dead_code)]
                type $T = u8;
                $body
            }
            __D::Int8 => {
                #[allow(dead_code)]
                type $T = i8;
                $body
            }
            __D::Int16 => {
                #[allow(dead_code)]
                type $T = i16;
                $body
            }
            __D::Int32 => {
                #[allow(dead_code)]
                type $T = i32;
                $body
            }
            __D::Int64 => {
                #[allow(dead_code)]
                type $T = i64;
                $body
            }
            other => return Err($crate::kernel::unsupported_dtype($op, other)),
        }
    }};
}

/// The float compute types (f32, f64): what generic kernels need beyond operators.
pub trait Real:
    Copy
    + PartialOrd
    + Elem
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Rem<Output = Self>
    + std::ops::Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const HALF: Self;
    const INF: Self;
    const NAN: Self;
    /// The largest finite value.
    const MAXV: Self;
    fn c(v: f64) -> Self;
    fn abs(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn trunc(self) -> Self;
    fn round_even(self) -> Self;
    fn sqrt(self) -> Self;
    fn exp(self) -> Self;
    fn exp2(self) -> Self;
    fn expm1(self) -> Self;
    fn ln(self) -> Self;
    fn log2(self) -> Self;
    fn log10(self) -> Self;
    fn ln1p(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    fn atan(self) -> Self;
    fn sinh(self) -> Self;
    fn cosh(self) -> Self;
    fn tanh(self) -> Self;
    fn asinh(self) -> Self;
    fn acosh(self) -> Self;
    fn atanh(self) -> Self;
    fn erf(self) -> Self;
    fn erfc(self) -> Self;
    /// log |Gamma(x)|: the platform C library's `lgamma`/`lgammaf`, the function upstream's
    /// `std::lgamma` calls, so the bits are those of upstream on the same machine.
    fn lgamma(self) -> Self;
    fn powf(self, e: Self) -> Self;
    fn atan2(self, o: Self) -> Self;
    fn mul_add(self, a: Self, b: Self) -> Self;
    fn fmod(self, b: Self) -> Self;
    fn copysign(self, s: Self) -> Self;
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn is_finite(self) -> bool;
    fn is_sign_negative(self) -> bool;
}

macro_rules! real {
    ($t:ident, $erf:path, $erfc:path, $lgamma:path) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const HALF: Self = 0.5;
            const INF: Self = $t::INFINITY;
            const NAN: Self = $t::NAN;
            const MAXV: Self = $t::MAX;
            #[inline(always)]
            fn c(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn abs(self) -> Self {
                $t::abs(self)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                $t::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                $t::ceil(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                $t::trunc(self)
            }
            #[inline(always)]
            fn round_even(self) -> Self {
                $t::round_ties_even(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            #[inline(always)]
            fn exp(self) -> Self {
                $t::exp(self)
            }
            #[inline(always)]
            fn exp2(self) -> Self {
                $t::exp2(self)
            }
            #[inline(always)]
            fn expm1(self) -> Self {
                $t::exp_m1(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                $t::ln(self)
            }
            #[inline(always)]
            fn log2(self) -> Self {
                $t::log2(self)
            }
            #[inline(always)]
            fn log10(self) -> Self {
                $t::log10(self)
            }
            #[inline(always)]
            fn ln1p(self) -> Self {
                $t::ln_1p(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                $t::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                $t::cos(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                $t::tan(self)
            }
            #[inline(always)]
            fn asin(self) -> Self {
                $t::asin(self)
            }
            #[inline(always)]
            fn acos(self) -> Self {
                $t::acos(self)
            }
            #[inline(always)]
            fn atan(self) -> Self {
                $t::atan(self)
            }
            #[inline(always)]
            fn sinh(self) -> Self {
                $t::sinh(self)
            }
            #[inline(always)]
            fn cosh(self) -> Self {
                $t::cosh(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                $t::tanh(self)
            }
            #[inline(always)]
            fn asinh(self) -> Self {
                $t::asinh(self)
            }
            #[inline(always)]
            fn acosh(self) -> Self {
                $t::acosh(self)
            }
            #[inline(always)]
            fn atanh(self) -> Self {
                $t::atanh(self)
            }
            #[inline(always)]
            fn erf(self) -> Self {
                $erf(self)
            }
            #[inline(always)]
            fn erfc(self) -> Self {
                $erfc(self)
            }
            #[inline(always)]
            fn lgamma(self) -> Self {
                $lgamma(self)
            }
            #[inline(always)]
            fn powf(self, e: Self) -> Self {
                $t::powf(self, e)
            }
            #[inline(always)]
            fn atan2(self, o: Self) -> Self {
                $t::atan2(self, o)
            }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                $t::mul_add(self, a, b)
            }
            #[inline(always)]
            fn fmod(self, b: Self) -> Self {
                self % b
            }
            #[inline(always)]
            fn copysign(self, s: Self) -> Self {
                $t::copysign(self, s)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            #[inline(always)]
            fn is_infinite(self) -> bool {
                $t::is_infinite(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                $t::is_finite(self)
            }
            #[inline(always)]
            fn is_sign_negative(self) -> bool {
                $t::is_sign_negative(self)
            }
        }
    };
}
mod clib {
    extern "C" {
        fn lgamma(x: f64) -> f64;
        fn lgammaf(x: f32) -> f32;
    }
    // SAFETY: pure functions of their argument (they also store the sign in the global
    // `signgam`, which nothing here reads).
    pub fn lgamma64(x: f64) -> f64 {
        unsafe { lgamma(x) }
    }
    pub fn lgamma32(x: f32) -> f32 {
        unsafe { lgammaf(x) }
    }
}
real!(f32, libm::erff, libm::erfcf, clib::lgamma32);
real!(f64, libm::erf, libm::erfc, clib::lgamma64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_to_int_follows_x86() {
        // Values from torch 2.13.0 (x86-64): tensor(vals, float64).to(dtype).
        assert_eq!(u8::from_f64(300.7), 44);
        assert_eq!(u8::from_f64(-300.7), 212);
        assert_eq!(u8::from_f64(4294967301.0), 5);
        assert_eq!(u8::from_f64(-2147483649.0), 255);
        assert_eq!(i8::from_f64(-2147483649.0), 0);
        assert_eq!(i8::from_f64(128.5), -128);
        assert_eq!(i16::from_f64(70000.2), 4464);
        assert_eq!(i32::from_f64(f64::NAN), i32::MIN);
        assert_eq!(i64::from_f64(-1e19), i64::MIN);
        assert_eq!(i64::from_f64(-2147483649.0), -2147483649);
        assert!(Bool::from_f64(f64::NAN).get());
        assert!(!Bool::from_f64(-0.0).get());
    }

    #[test]
    fn reduced_float_rounds_through_f32() {
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f16::from_f64(x).to_f32(), 1.0);
        let y = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(bf16::from_f64(y).to_f32(), 1.0);
        assert_eq!(f16::from_i64(65520).to_f32(), f32::INFINITY);
        assert_eq!(bf16::from_i64(65519).to_f32(), 65536.0);
    }
}
