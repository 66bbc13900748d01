//! Element types and upstream's C++ conversion semantics (`static_cast<T>`).
//!
//! Reduced-precision types follow c10: a `double -> Half/BFloat16` cast goes
//! through `float` first (two roundings), `float -> Half` and `float -> BFloat16`
//! round to nearest-even; c10's BFloat16 turns every NaN into 0x7fc0.

use half::{bf16, f16};

mod private {
    pub trait Sealed {}
}

/// c10 `BFloat16(float)`: round-to-nearest-even, NaN -> 0x7fc0.
#[inline]
pub fn bf16_from_f32(v: f32) -> bf16 {
    if v.is_nan() {
        return bf16::from_bits(0x7fc0);
    }
    let u = v.to_bits();
    let bias = ((u >> 16) & 1) + 0x7fff;
    bf16::from_bits((u.wrapping_add(bias) >> 16) as u16)
}

/// `float -> Half` (vcvtps2ph, round-to-nearest-even).
#[inline]
pub fn f16_from_f32(v: f32) -> f16 {
    f16::from_f32(v)
}

/// The four floating dtypes the distribution kernels support.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatKind {
    F64,
    F32,
    F16,
    BF16,
}

/// Floating element types: f64, f32, half::f16, half::bf16.
/// Upstream computes f16/bf16 in `float` (`opmath_type`).
pub trait Float: Copy + PartialEq + private::Sealed + 'static {
    const KIND: FloatKind;
    /// `std::numeric_limits<T>::digits`
    const DIGITS: u32;
    const NAME: &'static str;
    /// `static_cast<T>(float)`
    fn from_f32(v: f32) -> Self;
    /// `static_cast<T>(double)` (through float for f16/bf16)
    fn from_f64(v: f64) -> Self;
    fn to_f32(self) -> f32;
    fn to_f64(self) -> f64;
    /// `numeric_limits<T>::lowest()` / `max()` as double
    fn lowest() -> f64;
    fn max_value() -> f64;
}

impl private::Sealed for f64 {}
impl Float for f64 {
    const KIND: FloatKind = FloatKind::F64;
    const DIGITS: u32 = 53;
    const NAME: &'static str = "Double";
    fn from_f32(v: f32) -> Self {
        v as f64
    }
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f32(self) -> f32 {
        self as f32
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn lowest() -> f64 {
        f64::MIN
    }
    fn max_value() -> f64 {
        f64::MAX
    }
}
impl private::Sealed for f32 {}
impl Float for f32 {
    const KIND: FloatKind = FloatKind::F32;
    const DIGITS: u32 = 24;
    const NAME: &'static str = "Float";
    fn from_f32(v: f32) -> Self {
        v
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f32(self) -> f32 {
        self
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn lowest() -> f64 {
        f32::MIN as f64
    }
    fn max_value() -> f64 {
        f32::MAX as f64
    }
}
impl private::Sealed for f16 {}
impl Float for f16 {
    const KIND: FloatKind = FloatKind::F16;
    const DIGITS: u32 = 11;
    const NAME: &'static str = "Half";
    fn from_f32(v: f32) -> Self {
        f16_from_f32(v)
    }
    fn from_f64(v: f64) -> Self {
        f16_from_f32(v as f32)
    }
    fn to_f32(self) -> f32 {
        self.to_f32()
    }
    fn to_f64(self) -> f64 {
        self.to_f32() as f64
    }
    fn lowest() -> f64 {
        f16::MIN.to_f64()
    }
    fn max_value() -> f64 {
        f16::MAX.to_f64()
    }
}
impl private::Sealed for bf16 {}
impl Float for bf16 {
    const KIND: FloatKind = FloatKind::BF16;
    const DIGITS: u32 = 8;
    const NAME: &'static str = "BFloat16";
    fn from_f32(v: f32) -> Self {
        bf16_from_f32(v)
    }
    fn from_f64(v: f64) -> Self {
        bf16_from_f32(v as f32)
    }
    fn to_f32(self) -> f32 {
        self.to_f32()
    }
    fn to_f64(self) -> f64 {
        self.to_f32() as f64
    }
    fn lowest() -> f64 {
        bf16::MIN.to_f64()
    }
    fn max_value() -> f64 {
        bf16::MAX.to_f64()
    }
}

/// How `random_` sees a dtype's value range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RangeKind {
    /// floating type with `digits` mantissa digits
    Floating { digits: u32, lowest: f64, max: f64 },
    /// integral type (and bool) with its limits as int64
    Integral { min: i64, max: i64 },
    /// uint64 (bounds checked against [0, INT64_MAX])
    UInt64,
}

/// Every dtype `random_` / `randint` / `bernoulli_` can write.
pub trait Element: Copy + PartialEq + private::Sealed + 'static {
    const NAME: &'static str;
    fn range_kind() -> RangeKind;
    /// `static_cast<T>(int64_t)`
    fn from_i64(v: i64) -> Self;
    /// `static_cast<T>(double)` as x86-64 compiles it: floats round; integers truncate with
    /// `cvttsd2si` (32-bit for the types an int holds, 64-bit for the wider ones), whose
    /// out-of-range result is the "integer indefinite" (the minimum), then narrow.
    fn from_f64_cast(v: f64) -> Self;
    /// value as f64 (used for float round trips in `update_from/update_to`)
    fn to_f64(self) -> f64;
    /// one draw of `uniform_int_distribution<T>` (`random_()` without bounds);
    /// `None` when upstream has no `random_` kernel for this dtype.
    fn uniform_int(gen: &mut crate::CpuGenerator) -> Option<Self>;
    /// whether `random_from_to` with from = INT64_MIN, to = None is supported
    const FULL64: bool;
}

macro_rules! float_element {
    ($t:ty, $from_i64:expr, $uniform_int:expr) => {
        impl Element for $t {
            const NAME: &'static str = <$t as Float>::NAME;
            fn range_kind() -> RangeKind {
                RangeKind::Floating {
                    digits: <$t as Float>::DIGITS,
                    lowest: <$t as Float>::lowest(),
                    max: <$t as Float>::max_value(),
                }
            }
            fn from_i64(v: i64) -> Self {
                ($from_i64)(v)
            }
            fn from_f64_cast(v: f64) -> Self {
                <$t as Float>::from_f64(v)
            }
            fn to_f64(self) -> f64 {
                <$t as Float>::to_f64(self)
            }
            fn uniform_int(gen: &mut crate::CpuGenerator) -> Option<Self> {
                Some(($uniform_int)(gen))
            }
            const FULL64: bool = !matches!(<$t as Float>::KIND, FloatKind::F16);
        }
    };
}

float_element!(f64, |v: i64| v as f64, |g: &mut crate::CpuGenerator| {
    (g.random64() % ((1u64 << 53) + 1)) as f64
});
float_element!(f32, |v: i64| v as f32, |g: &mut crate::CpuGenerator| {
    (g.random() as u64 % ((1u64 << 24) + 1)) as f32
});
float_element!(
    f16,
    |v: i64| f16_from_f32(v as f32),
    |g: &mut crate::CpuGenerator| { f16_from_f32((g.random() as u64 % ((1u64 << 11) + 1)) as f32) }
);
float_element!(
    bf16,
    |v: i64| bf16_from_f32(v as f32),
    |g: &mut crate::CpuGenerator| { bf16_from_f32((g.random() as u64 % ((1u64 << 8) + 1)) as f32) }
);

/// `cvttsd2si` with a 32-bit or a 64-bit destination.
fn cvttsd2si(v: f64, wide: bool) -> i64 {
    if wide {
        if (-9223372036854775808.0..9223372036854775808.0).contains(&v) {
            v as i64
        } else {
            i64::MIN
        }
    } else if (-2147483648.0..2147483648.0).contains(&v) {
        v as i32 as i64
    } else {
        i32::MIN as i64
    }
}

macro_rules! int_element {
    ($t:ty, $name:expr, $uniform_int:expr, $full64:expr) => {
        int_element!($t, $name, $uniform_int, $full64, false);
    };
    ($t:ty, $name:expr, $uniform_int:expr, $full64:expr, $wide:expr) => {
        impl private::Sealed for $t {}
        impl Element for $t {
            const NAME: &'static str = $name;
            fn range_kind() -> RangeKind {
                RangeKind::Integral {
                    min: <$t>::MIN as i64,
                    max: <$t>::MAX as i64,
                }
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            fn from_f64_cast(v: f64) -> Self {
                cvttsd2si(v, $wide) as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn uniform_int(gen: &mut crate::CpuGenerator) -> Option<Self> {
                ($uniform_int)(gen)
            }
            const FULL64: bool = $full64;
        }
    };
}

int_element!(
    i64,
    "Long",
    |g: &mut crate::CpuGenerator| { Some((g.random64() % (i64::MAX as u64 + 1)) as i64) },
    true,
    true
);
int_element!(
    i32,
    "Int",
    |g: &mut crate::CpuGenerator| { Some((g.random() as u64 % (i32::MAX as u64 + 1)) as i32) },
    false
);
int_element!(
    i16,
    "Short",
    |g: &mut crate::CpuGenerator| { Some((g.random() as u64 % (i16::MAX as u64 + 1)) as i16) },
    false
);
int_element!(
    i8,
    "Char",
    |g: &mut crate::CpuGenerator| { Some((g.random() as u64 % (i8::MAX as u64 + 1)) as i8) },
    false
);
int_element!(
    u8,
    "Byte",
    |g: &mut crate::CpuGenerator| { Some((g.random() as u64 % (u8::MAX as u64 + 1)) as u8) },
    false
);
int_element!(u16, "UInt16", |_g: &mut crate::CpuGenerator| None, false);
int_element!(u32, "UInt32", |_g: &mut crate::CpuGenerator| None, false, true);

impl private::Sealed for u64 {}
impl Element for u64 {
    const NAME: &'static str = "UInt64";
    fn range_kind() -> RangeKind {
        RangeKind::UInt64
    }
    fn from_i64(v: i64) -> Self {
        v as u64
    }
    fn from_f64_cast(v: f64) -> Self {
        cvttsd2si(v, true) as u64
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn uniform_int(_g: &mut crate::CpuGenerator) -> Option<Self> {
        None
    }
    const FULL64: bool = false;
}

impl private::Sealed for bool {}
impl Element for bool {
    const NAME: &'static str = "Bool";
    fn range_kind() -> RangeKind {
        RangeKind::Integral { min: 0, max: 1 }
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn from_f64_cast(v: f64) -> Self {
        v != 0.0
    }
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn uniform_int(g: &mut crate::CpuGenerator) -> Option<Self> {
        Some(g.random() & 1 != 0)
    }
    const FULL64: bool = false;
}
