//! The versioned backend ABI of torchnative.
//!
//! Backends are separately compiled native extensions, so the contract between the core
//! (`torch._C`) and a backend is a C ABI made of `repr(C)` types only; `include/torchnative_abi.h`
//! is the same contract for C and C++ authors. Rust types never cross the boundary.
//!
//! The handshake: the core hands a backend a [`TnRegistrar`] (inside a PyCapsule named
//! [`REGISTRAR_CAPSULE_NAME`]). The backend checks [`TnRegistrar::abi_version`] with
//! [`abi_compatible`], then registers an allocator per device key and `extern "C"` kernels per
//! `(operator overload, device key)`.
//!
//! A kernel receives every argument of the operator's schema, in schema order, as a [`TnArg`]
//! (tensors arrive as strided views, [`TnTensor`]), and the outputs the core has already
//! allocated from the operator's meta function. It writes its results in place and returns 0, or
//! fills the [`TnError`] and returns non-zero.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

/// Major version: a backend built for another major is skipped, never loaded.
pub const ABI_VERSION_MAJOR: u32 = 1;
/// Minor version: additive changes only (new trailing struct fields, guarded by `struct_size`).
pub const ABI_VERSION_MINOR: u32 = 1;
/// `abi_version` as carried in structs: `major << 16 | minor`.
pub const ABI_VERSION: u32 = (ABI_VERSION_MAJOR << 16) | ABI_VERSION_MINOR;
/// The name of the PyCapsule that carries a `*const TnRegistrar`.
pub const REGISTRAR_CAPSULE_NAME: &str = "torchnative.registrar";

/// True when a backend built for `backend_version` may load into a core speaking `core_version`.
pub fn abi_compatible(core_version: u32, backend_version: u32) -> bool {
    core_version >> 16 == backend_version >> 16
}

/// Scalar types, numbered exactly as upstream's `c10::ScalarType`, so codes can be compared with
/// upstream without a table.
#[repr(i32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TnDtype {
    UInt8 = 0,
    Int8 = 1,
    Int16 = 2,
    Int32 = 3,
    Int64 = 4,
    Float16 = 5,
    Float32 = 6,
    Float64 = 7,
    ComplexHalf = 8,
    ComplexFloat = 9,
    ComplexDouble = 10,
    Bool = 11,
    BFloat16 = 15,
}

impl TnDtype {
    pub fn from_code(code: i32) -> Option<TnDtype> {
        use TnDtype::*;
        Some(match code {
            0 => UInt8,
            1 => Int8,
            2 => Int16,
            3 => Int32,
            4 => Int64,
            5 => Float16,
            6 => Float32,
            7 => Float64,
            8 => ComplexHalf,
            9 => ComplexFloat,
            10 => ComplexDouble,
            11 => Bool,
            15 => BFloat16,
            _ => return None,
        })
    }

    pub fn itemsize(self) -> usize {
        use TnDtype::*;
        match self {
            UInt8 | Int8 | Bool => 1,
            Int16 | Float16 | BFloat16 => 2,
            Int32 | Float32 | ComplexHalf => 4,
            Int64 | Float64 | ComplexFloat => 8,
            ComplexDouble => 16,
        }
    }
}

/// A strided view of a tensor: `data` already points at element 0 (storage offset applied).
/// Sizes and strides are in elements, as in torch. Borrowed for the duration of one call.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct TnTensor {
    pub data: *mut c_void,
    /// A [`TnDtype`] code.
    pub dtype: i32,
    pub ndim: i32,
    pub sizes: *const i64,
    pub strides: *const i64,
    /// The device index within the kernel's device key (0 for single-device backends).
    pub device_index: i32,
}

impl TnTensor {
    /// # Safety
    /// `sizes` must point at `ndim` valid elements.
    pub unsafe fn sizes(&self) -> &[i64] {
        if self.ndim == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(self.sizes, self.ndim as usize)
        }
    }
    /// # Safety
    /// `strides` must point at `ndim` valid elements.
    pub unsafe fn strides(&self) -> &[i64] {
        if self.ndim == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(self.strides, self.ndim as usize)
        }
    }
    pub fn numel(&self) -> i64 {
        unsafe { self.sizes().iter().product() }
    }
}

/// What a [`TnArg`] holds.
#[repr(i32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TnArgKind {
    None = 0,
    Tensor = 1,
    Int = 2,
    Float = 3,
    Bool = 4,
    /// `ints` / `len`.
    IntList = 5,
    /// `tensors` / `len`. For `Tensor?[]` a None entry has `ndim == -1`.
    TensorList = 6,
    /// `str_` (NUL-terminated UTF-8).
    Str = 7,
    /// A dtype code in `i`.
    Dtype = 8,
    /// A complex scalar: `f` (real) and `f_imag`.
    Complex = 9,
    /// `floats` / `len`.
    FloatList = 10,
}

/// One argument of an operator call, in schema order. Unused fields are zero.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct TnArg {
    pub kind: i32,
    pub tensor: TnTensor,
    pub i: i64,
    pub f: f64,
    pub f_imag: f64,
    pub ints: *const i64,
    pub floats: *const f64,
    pub tensors: *const TnTensor,
    pub len: usize,
    pub str_: *const c_char,
}

/// The Python exception type a failing kernel asks the core to raise.
#[repr(i32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TnErrorKind {
    Runtime = 0,
    Value = 1,
    Type = 2,
    Index = 3,
    NotImplemented = 4,
}

/// Error slot a kernel fills before returning non-zero. `message` is a buffer of `capacity`
/// bytes owned by the core; the kernel writes NUL-terminated UTF-8, truncating if needed.
#[repr(C)]
pub struct TnError {
    pub kind: i32,
    pub message: *mut c_char,
    pub capacity: usize,
}

impl TnError {
    /// Writes `kind` and `msg` (truncated to the buffer) into the slot.
    ///
    /// # Safety
    /// `self.message` must point at `self.capacity` writable bytes.
    pub unsafe fn set(&mut self, kind: TnErrorKind, msg: &str) {
        self.kind = kind as i32;
        if self.capacity == 0 || self.message.is_null() {
            return;
        }
        let bytes = msg.as_bytes();
        let n = bytes.len().min(self.capacity - 1);
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.message as *mut u8, n);
        *self.message.add(n) = 0;
    }
}

/// Services the core offers a running kernel (for outputs whose size depends on the data).
#[repr(C)]
pub struct TnKernelCtx {
    pub struct_size: u32,
    pub core: *mut c_void,
    /// Allocates output `index` with the given dtype and sizes (contiguous) and fills `out` with
    /// its view. Only valid for outputs the meta function left unallocated. Returns 0 on success.
    pub alloc_output: unsafe extern "C" fn(
        core: *mut c_void,
        index: usize,
        dtype: i32,
        ndim: i32,
        sizes: *const i64,
        out: *mut TnTensor,
    ) -> i32,
}

/// A kernel: `args` in schema order, `outs` pre-allocated by the core (or allocated through
/// `ctx.alloc_output`). Returns 0 on success; otherwise fills `err`.
pub type TnKernelFn = unsafe extern "C" fn(
    user: *mut c_void,
    ctx: *const TnKernelCtx,
    args: *const TnArg,
    nargs: usize,
    outs: *mut TnTensor,
    nouts: usize,
    err: *mut TnError,
) -> i32;

/// Memory of one device key: allocation, release, and copies between host and device.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct TnAllocator {
    pub struct_size: u32,
    pub user: *mut c_void,
    /// Returns a pointer to `nbytes` bytes aligned to `align`, or null on failure.
    pub alloc: unsafe extern "C" fn(user: *mut c_void, nbytes: usize, align: usize) -> *mut c_void,
    pub free:
        unsafe extern "C" fn(user: *mut c_void, ptr: *mut c_void, nbytes: usize, align: usize),
    /// Copies `nbytes` from host memory into device memory.
    pub copy_from_host: unsafe extern "C" fn(
        user: *mut c_void,
        dst: *mut c_void,
        src: *const c_void,
        nbytes: usize,
    ) -> i32,
    /// Copies `nbytes` from device memory into host memory.
    pub copy_to_host: unsafe extern "C" fn(
        user: *mut c_void,
        dst: *mut c_void,
        src: *const c_void,
        nbytes: usize,
    ) -> i32,
}

/// Handed to a backend at registration. Function pointers take `core` as their first argument.
#[repr(C)]
pub struct TnRegistrar {
    /// `ABI_VERSION` of the core: check it with [`abi_compatible`] before anything else.
    pub abi_version: u32,
    /// `size_of::<TnRegistrar>()` in the core; fields past a backend's own size are absent.
    pub struct_size: u32,
    pub core: *mut c_void,
    /// The plugin name this registrar was issued to (NUL-terminated), for error messages.
    pub plugin: *const c_char,
    /// Registers `kernel` for operator overload `op` (e.g. `"aten::add.Tensor"`) on device key
    /// `device`. Returns 0, or non-zero if the operator is unknown to the core.
    pub register_kernel: unsafe extern "C" fn(
        core: *mut c_void,
        op: *const c_char,
        device: *const c_char,
        kernel: TnKernelFn,
        user: *mut c_void,
    ) -> i32,
    /// Registers the allocator of device key `device` (copied by the core), device index 0.
    pub register_allocator: unsafe extern "C" fn(
        core: *mut c_void,
        device: *const c_char,
        alloc: *const TnAllocator,
    ) -> i32,
    /// ABI 1.1 (present when `struct_size` covers it): registers the allocator of one device
    /// index, so `mydev:0` and `mydev:1` are separate memories. Returns 4 for a negative index.
    pub register_allocator_at: unsafe extern "C" fn(
        core: *mut c_void,
        device: *const c_char,
        index: i32,
        alloc: *const TnAllocator,
    ) -> i32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn major_mismatch_is_incompatible() {
        assert!(abi_compatible(ABI_VERSION, ABI_VERSION));
        assert!(abi_compatible(ABI_VERSION, ABI_VERSION_MAJOR << 16 | 7));
        assert!(!abi_compatible(ABI_VERSION, (ABI_VERSION_MAJOR + 1) << 16));
    }

    #[test]
    fn dtype_codes_round_trip() {
        for code in 0..20 {
            if let Some(d) = TnDtype::from_code(code) {
                assert_eq!(d as i32, code);
            }
        }
        assert_eq!(TnDtype::from_code(12), None);
    }
}
