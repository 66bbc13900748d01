//! rustdev: a torchnative backend in Rust, built on torchnative's backend SDK
//! (`torchnative-backend`), which speaks the C ABI for it.
//!
//! What a backend writes, in three parts:
//! 1. an allocator for the device key (`TnAllocator`: alloc, free, copies to and from the host);
//!    rustdev keeps its "device" memory in host RAM;
//! 2. kernels, `fn(&mut Call<Rustdev>) -> KResult`: arguments in schema order (`c.tensor(0)?`,
//!    `c.scalar(2)?`), outputs already allocated by the core (`c.out(0)?`), errors returned as
//!    the Python exception to raise; the SDK's `kernel_table!` makes each an `extern "C"`
//!    function that never unwinds across the boundary;
//! 3. the [`Backend`] impl naming the device key, the tensor view, the allocator and the table.
//!    The SDK's `register(capsule)` checks the core's ABI version and registers both.

use std::alloc::{alloc, dealloc, Layout};
use std::ffi::c_void;

use pyo3::prelude::*;
use torchnative_backend::abi::{TnAllocator, TnDtype, TnTensor};
use torchnative_backend::{
    kernel_table, unsupported_dtype, Backend, HostTensor, KResult, Registry, Scalar,
};

pub struct Rustdev;

type Call<'a> = torchnative_backend::Call<'a, Rustdev>;

// --- 1. memory -------------------------------------------------------------------------------

fn layout(nbytes: usize, align: usize) -> Option<Layout> {
    Layout::from_size_align(nbytes.max(1), align.max(16).next_power_of_two()).ok()
}

unsafe extern "C" fn dev_alloc(_user: *mut c_void, nbytes: usize, align: usize) -> *mut c_void {
    layout(nbytes, align).map_or(std::ptr::null_mut(), |l| alloc(l) as *mut c_void)
}

unsafe extern "C" fn dev_free(_user: *mut c_void, ptr: *mut c_void, nbytes: usize, align: usize) {
    if let (false, Some(l)) = (ptr.is_null(), layout(nbytes, align)) {
        dealloc(ptr as *mut u8, l)
    }
}

unsafe extern "C" fn dev_copy(
    _user: *mut c_void,
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
) -> i32 {
    std::ptr::copy(src as *const u8, dst as *mut u8, n);
    0
}

// --- 2. kernels ------------------------------------------------------------------------------

/// Element offsets of every element of `t` (row-major order over its sizes and strides).
fn offsets(t: &HostTensor) -> Vec<isize> {
    let mut out = vec![0isize];
    for (&n, &s) in t.sizes.iter().zip(t.strides) {
        out = out
            .iter()
            .flat_map(|&base| (0..n as isize).map(move |i| base + i * s as isize))
            .collect();
    }
    out
}

/// rustdev computes in float32 only; anything else is refused by name, in the form that
/// `torchnative conformance` counts as a refusal rather than a failure: the SDK's
/// `unsupported_dtype`, upstream's wording with the device
/// (`"fill_" not implemented for 'Long' on device 'rustdev'`).
fn f32_only<'a>(t: HostTensor<'a>, what: &str) -> KResult<HostTensor<'a>> {
    if t.dtype != TnDtype::Float32 {
        return Err(unsupported_dtype::<Rustdev>(what, t.dtype));
    }
    Ok(t)
}

/// fill_.Scalar(Tensor(a!) self, Scalar value)
fn fill(c: &mut Call) -> KResult {
    f32_only(c.tensor(0)?, "fill_")?;
    let (out, v) = (c.out(0)?, c.scalar(1)?.as_f64() as f32);
    for o in offsets(&out) {
        unsafe { out.write(o, v) };
    }
    Ok(())
}

/// add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1): operands arrive broadcast and cast.
fn add(c: &mut Call) -> KResult {
    let (a, b) = (
        f32_only(c.tensor(0)?, "add")?,
        f32_only(c.tensor(1)?, "add")?,
    );
    let (alpha, out) = (c.scalar(2).map(Scalar::as_f64)? as f32, c.out(0)?);
    for ((oa, ob), oo) in offsets(&a).into_iter().zip(offsets(&b)).zip(offsets(&out)) {
        unsafe { out.write(oo, a.read::<f32>(oa) + alpha * b.read::<f32>(ob)) };
    }
    Ok(())
}

/// copy_(Tensor(a!) self, Tensor src, bool non_blocking): `src` arrives broadcast, not cast.
fn copy(c: &mut Call) -> KResult {
    let src = f32_only(c.tensor(1)?, "copy_")?;
    f32_only(c.tensor(0)?, "copy_")?;
    let out = c.out(0)?;
    for (os, oo) in offsets(&src).into_iter().zip(offsets(&out)) {
        unsafe { out.write(oo, src.read::<f32>(os)) };
    }
    Ok(())
}

mod table {
    use super::*;

    kernel_table! { Rustdev;
        k_fill = "aten::fill_.Scalar" => fill;
        k_add = "aten::add.Tensor" => add;
        k_copy = "aten::copy_" => copy;
    }
}

// --- 3. the backend ----------------------------------------------------------------------------

impl Backend for Rustdev {
    const NAME: &'static str = "rustdev";
    const DEVICE_KEY: &'static str = "rustdev";
    type Tensor<'a> = HostTensor<'a>;
    unsafe fn view<'a>(t: &'a TnTensor) -> KResult<HostTensor<'a>> {
        HostTensor::from_raw(t)
    }
    fn allocator() -> TnAllocator {
        torchnative_backend::allocator(dev_alloc, dev_free, dev_copy, dev_copy)
    }
    fn kernels() -> Registry {
        let mut reg = Registry::new();
        table::register(&mut reg);
        reg
    }
}

/// `rustdev_backend._native`: `register(capsule)`, `kernel_names()`, `refused_kernels()`,
/// `ABI_VERSION`, `DEVICE_KEY` (the SDK's functions for [`Rustdev`]).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    torchnative_backend::python::add_backend_functions::<Rustdev>(m)
}
