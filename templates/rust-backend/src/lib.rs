//! rustdev: a torchnative backend in Rust, written against the C ABI of `torchnative-abi`.
//!
//! Three parts, each what every native backend needs:
//! 1. an allocator for the device key (`TnAllocator`: alloc, free, copies to and from the host);
//!    rustdev keeps its "device" memory in host RAM;
//! 2. kernels, `extern "C"` functions of type `TnKernelFn`: arguments in schema order, outputs
//!    already allocated by the core, errors through the `TnError` slot, never a panic across
//!    the boundary;
//! 3. `register(capsule)`: read the core's `TnRegistrar` from the PyCapsule, check the ABI
//!    version, register the allocator, then the kernels by (operator overload, device key).

use std::alloc::{alloc, dealloc, Layout};
use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyImportError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use torchnative_abi::{
    abi_compatible, TnAllocator, TnArg, TnArgKind, TnDtype, TnError, TnErrorKind, TnKernelCtx,
    TnKernelFn, TnRegistrar, TnTensor, ABI_VERSION, REGISTRAR_CAPSULE_NAME,
};

const DEVICE_KEY: &str = "rustdev";

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

fn allocator() -> TnAllocator {
    TnAllocator {
        struct_size: std::mem::size_of::<TnAllocator>() as u32,
        user: std::ptr::null_mut(),
        alloc: dev_alloc,
        free: dev_free,
        copy_from_host: dev_copy,
        copy_to_host: dev_copy,
    }
}

// --- 2. kernels ------------------------------------------------------------------------------

type KResult = Result<(), (TnErrorKind, String)>;

/// Element offsets of every element of `t` (row-major order over its sizes and strides).
unsafe fn offsets(t: &TnTensor) -> Vec<isize> {
    let (sizes, strides) = (t.sizes(), t.strides());
    let mut out = vec![0isize];
    for (&n, &s) in sizes.iter().zip(strides) {
        out = out
            .iter()
            .flat_map(|&base| (0..n as isize).map(move |i| base + i * s as isize))
            .collect();
    }
    out
}

fn f32_tensor<'a>(a: &'a TnArg, what: &str) -> Result<&'a TnTensor, (TnErrorKind, String)> {
    if a.kind != TnArgKind::Tensor as i32 || a.tensor.dtype != TnDtype::Float32 as i32 {
        return Err((
            TnErrorKind::NotImplemented,
            format!("rustdev: {what} supports float32 tensors only"),
        ));
    }
    Ok(&a.tensor)
}

fn scalar(a: &TnArg) -> f32 {
    if a.kind == TnArgKind::Float as i32 {
        a.f as f32
    } else {
        a.i as f32
    }
}

/// fill_.Scalar(Tensor(a!) self, Scalar value)
unsafe fn fill(args: &[TnArg], outs: &mut [TnTensor]) -> KResult {
    f32_tensor(&args[0], "fill_")?;
    let (out, v) = (&outs[0], scalar(&args[1]));
    for o in offsets(out) {
        *(out.data as *mut f32).offset(o) = v;
    }
    Ok(())
}

/// add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1): operands arrive broadcast and cast.
unsafe fn add(args: &[TnArg], outs: &mut [TnTensor]) -> KResult {
    let (a, b) = (f32_tensor(&args[0], "add")?, f32_tensor(&args[1], "add")?);
    let (alpha, out) = (scalar(&args[2]), &outs[0]);
    let (pa, pb, po) = (
        a.data as *const f32,
        b.data as *const f32,
        out.data as *mut f32,
    );
    for ((oa, ob), oo) in offsets(a).into_iter().zip(offsets(b)).zip(offsets(out)) {
        *po.offset(oo) = *pa.offset(oa) + alpha * *pb.offset(ob);
    }
    Ok(())
}

/// copy_(Tensor(a!) self, Tensor src, bool non_blocking): `src` arrives broadcast, not cast.
unsafe fn copy(args: &[TnArg], outs: &mut [TnTensor]) -> KResult {
    let src = f32_tensor(&args[1], "copy_")?;
    f32_tensor(&args[0], "copy_")?;
    let (ps, out) = (src.data as *const f32, &outs[0]);
    for (os, oo) in offsets(src).into_iter().zip(offsets(out)) {
        *(out.data as *mut f32).offset(oo) = *ps.offset(os);
    }
    Ok(())
}

/// The `TnKernelFn` around a kernel body: slices from raw parts, errors and panics to `err`.
macro_rules! kernel {
    ($name:ident, $body:path) => {
        unsafe extern "C" fn $name(
            _user: *mut c_void,
            _ctx: *const TnKernelCtx,
            args: *const TnArg,
            nargs: usize,
            outs: *mut TnTensor,
            nouts: usize,
            err: *mut TnError,
        ) -> i32 {
            let r = catch_unwind(AssertUnwindSafe(|| {
                $body(
                    std::slice::from_raw_parts(args, nargs),
                    std::slice::from_raw_parts_mut(outs, nouts),
                )
            }));
            let (kind, msg) = match r {
                Ok(Ok(())) => return 0,
                Ok(Err(e)) => e,
                Err(_) => (TnErrorKind::Runtime, "rustdev: kernel panicked".to_string()),
            };
            (*err).set(kind, &msg);
            1
        }
    };
}

kernel!(fill_kernel, fill);
kernel!(add_kernel, add);
kernel!(copy_kernel, copy);

const KERNELS: [(&str, TnKernelFn); 3] = [
    ("aten::fill_.Scalar", fill_kernel),
    ("aten::add.Tensor", add_kernel),
    ("aten::copy_", copy_kernel),
];

// --- 3. registration -------------------------------------------------------------------------

/// Registers the allocator and the kernels with the core's registrar; returns how many kernels.
#[pyfunction]
fn register(capsule: &Bound<'_, PyAny>) -> PyResult<usize> {
    let capsule = capsule
        .downcast::<PyCapsule>()
        .map_err(|_| PyValueError::new_err("register() expects the core's registrar PyCapsule"))?;
    let expected = CString::new(REGISTRAR_CAPSULE_NAME).unwrap();
    if capsule.name()? != Some(expected.as_c_str()) {
        return Err(PyValueError::new_err(format!(
            "expected a PyCapsule named {REGISTRAR_CAPSULE_NAME:?}"
        )));
    }
    let reg = unsafe { &*(capsule.pointer() as *const TnRegistrar) };
    if !abi_compatible(reg.abi_version, ABI_VERSION) {
        return Err(PyImportError::new_err(format!(
            "rustdev was built for ABI {}.{}, the core speaks {}.{}",
            ABI_VERSION >> 16,
            ABI_VERSION & 0xffff,
            reg.abi_version >> 16,
            reg.abi_version & 0xffff
        )));
    }
    if (reg.struct_size as usize) < std::mem::size_of::<TnRegistrar>() {
        return Err(PyImportError::new_err(
            "the core's registrar is older than this backend's ABI",
        ));
    }
    let device = CString::new(DEVICE_KEY).unwrap();
    let rc = unsafe { (reg.register_allocator)(reg.core, device.as_ptr(), &allocator()) };
    if rc != 0 {
        return Err(PyRuntimeError::new_err(format!(
            "the core refused rustdev's allocator ({rc})"
        )));
    }
    for (op, kernel) in KERNELS {
        let op_c = CString::new(op).unwrap();
        let rc = unsafe {
            (reg.register_kernel)(
                reg.core,
                op_c.as_ptr(),
                device.as_ptr(),
                kernel,
                std::ptr::null_mut(),
            )
        };
        if rc != 0 {
            return Err(PyRuntimeError::new_err(format!(
                "the core refused {op} ({rc})"
            )));
        }
    }
    Ok(KERNELS.len())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ABI_VERSION", ABI_VERSION)?;
    m.add_function(wrap_pyfunction!(register, m)?)?;
    Ok(())
}
