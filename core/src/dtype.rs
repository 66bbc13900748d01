//! Scalar types: upstream's `c10::ScalarType` codes and the promotion lattice.

use torchnative_abi::TnDtype;

pub type ScalarType = TnDtype;

pub fn is_floating(t: ScalarType) -> bool {
    matches!(
        t,
        TnDtype::Float16 | TnDtype::BFloat16 | TnDtype::Float32 | TnDtype::Float64
    )
}

pub fn is_complex(t: ScalarType) -> bool {
    matches!(
        t,
        TnDtype::ComplexHalf | TnDtype::ComplexFloat | TnDtype::ComplexDouble
    )
}

pub fn is_integral(t: ScalarType, include_bool: bool) -> bool {
    use TnDtype::*;
    matches!(t, UInt8 | Int8 | Int16 | Int32 | Int64) || (include_bool && t == Bool)
}

/// `c10::promoteTypes` for the real types (complex promotion is refused by the callers for now).
pub fn promote_types(a: ScalarType, b: ScalarType) -> ScalarType {
    use TnDtype::*;
    if a == b {
        return a;
    }
    if a == Bool {
        return b;
    }
    if b == Bool {
        return a;
    }
    if is_complex(a) || is_complex(b) {
        let wide = |t: ScalarType| match t {
            ComplexHalf | Float16 => 1,
            ComplexFloat | Float32 | BFloat16 => 2,
            _ => 3,
        };
        let w = if is_floating(a) || is_complex(a) {
            wide(a)
        } else {
            0
        };
        let w = w.max(if is_floating(b) || is_complex(b) {
            wide(b)
        } else {
            0
        });
        return match w {
            0 | 1 => {
                if matches!((a, b), (BFloat16, _) | (_, BFloat16)) {
                    ComplexFloat
                } else {
                    ComplexHalf
                }
            }
            2 => ComplexFloat,
            _ => ComplexDouble,
        };
    }
    let fa = is_floating(a);
    let fb = is_floating(b);
    if fa && fb {
        return match (a, b) {
            (Float16, BFloat16) | (BFloat16, Float16) => Float32,
            _ => {
                let rank = |t| match t {
                    Float16 | BFloat16 => 0,
                    Float32 => 1,
                    _ => 2,
                };
                if rank(a) >= rank(b) {
                    a
                } else {
                    b
                }
            }
        };
    }
    if fa {
        return a;
    }
    if fb {
        return b;
    }
    // Both integral.
    let signed_rank = |t| match t {
        Int8 => 1,
        Int16 => 2,
        Int32 => 3,
        Int64 => 4,
        _ => 0,
    };
    match (a, b) {
        (UInt8, x) | (x, UInt8) => match x {
            Int8 => Int16,
            _ => x,
        },
        _ => {
            if signed_rank(a) >= signed_rank(b) {
                a
            } else {
                b
            }
        }
    }
}

pub fn name(t: ScalarType) -> &'static str {
    use TnDtype::*;
    match t {
        UInt8 => "uint8",
        Int8 => "int8",
        Int16 => "int16",
        Int32 => "int32",
        Int64 => "int64",
        Float16 => "float16",
        Float32 => "float32",
        Float64 => "float64",
        ComplexHalf => "complex32",
        ComplexFloat => "complex64",
        ComplexDouble => "complex128",
        Bool => "bool",
        BFloat16 => "bfloat16",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TnDtype::*;

    #[test]
    fn promotion_matches_upstream_table_samples() {
        assert_eq!(promote_types(UInt8, Int8), Int16);
        assert_eq!(promote_types(Int32, Int64), Int64);
        assert_eq!(promote_types(Float16, BFloat16), Float32);
        assert_eq!(promote_types(Int64, Float16), Float16);
        assert_eq!(promote_types(Bool, UInt8), UInt8);
        assert_eq!(promote_types(BFloat16, Float64), Float64);
        assert_eq!(promote_types(UInt8, Int64), Int64);
    }
}
