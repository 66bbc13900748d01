//! Dtype names and classes, as upstream's messages spell them.

use crate::abi::TnDtype;

/// Upstream's name of a dtype in error messages ('Float', 'Long', ...).
pub fn dtype_name(dt: TnDtype) -> &'static str {
    use TnDtype::*;
    match dt {
        UInt8 => "Byte",
        Int8 => "Char",
        Int16 => "Short",
        Int32 => "Int",
        Int64 => "Long",
        Float16 => "Half",
        Float32 => "Float",
        Float64 => "Double",
        ComplexHalf => "ComplexHalf",
        ComplexFloat => "ComplexFloat",
        ComplexDouble => "ComplexDouble",
        Bool => "Bool",
        BFloat16 => "BFloat16",
    }
}

/// A real floating-point dtype.
#[inline]
pub fn is_float(dt: TnDtype) -> bool {
    matches!(
        dt,
        TnDtype::Float16 | TnDtype::BFloat16 | TnDtype::Float32 | TnDtype::Float64
    )
}

/// An integer dtype (bool is not one).
#[inline]
pub fn is_int(dt: TnDtype) -> bool {
    matches!(
        dt,
        TnDtype::UInt8 | TnDtype::Int8 | TnDtype::Int16 | TnDtype::Int32 | TnDtype::Int64
    )
}
