//! Calling a backend kernel: Python values -> ABI arguments -> the kernel of the device key.
//!
//! The meta step (shapes, dtypes, allocation) has already run when `_tn_launch` is called; this
//! only marshals arguments and turns a kernel's error slot into the Python exception it names.

use std::ffi::{c_char, c_void, CString};

use pyo3::exceptions::{
    PyIndexError, PyNotImplementedError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyString, PyTuple};
use torchnative_abi::{TnArg, TnArgKind, TnError, TnErrorKind, TnKernelCtx, TnTensor};

use crate::registry::{self, DeviceKey, Kernel};
use crate::tensor::TensorBase;

/// Storage for everything the `TnArg`s point into, alive for the duration of the call.
#[derive(Default)]
struct Arena {
    ints: Vec<Vec<i64>>,
    floats: Vec<Vec<f64>>,
    tensor_lists: Vec<Vec<TnTensor>>,
    strings: Vec<CString>,
}

impl Arena {
    fn tensor(&mut self, t: &TensorBase) -> TnTensor {
        // The view points into the tensor's own sizes/strides: the caller's argument tuples
        // keep every tensor alive for the call, and nothing changes a tensor's geometry while a
        // native kernel runs (it reaches Python only to allocate new outputs).
        t.abi_view()
    }
}

/// A vmap logical tensor never reaches a kernel (tensor.rs `batched_kernel_error`).
fn not_batched(t: &TensorBase) -> PyResult<()> {
    if t.batched {
        return Err(crate::tensor::batched_kernel_error());
    }
    Ok(())
}

fn zero_arg() -> TnArg {
    TnArg {
        kind: TnArgKind::None as i32,
        tensor: TnTensor {
            data: std::ptr::null_mut(),
            dtype: 0,
            ndim: 0,
            sizes: std::ptr::null(),
            strides: std::ptr::null(),
            device_index: 0,
        },
        i: 0,
        f: 0.0,
        f_imag: 0.0,
        ints: std::ptr::null(),
        floats: std::ptr::null(),
        tensors: std::ptr::null(),
        len: 0,
        str_: std::ptr::null(),
    }
}

fn to_arg(
    v: &Bound<'_, PyAny>,
    arena: &mut Arena,
    device: &mut Option<DeviceKey>,
) -> PyResult<TnArg> {
    let mut a = zero_arg();
    if v.is_none() {
        return Ok(a);
    }
    if let Ok(t) = v.downcast::<TensorBase>() {
        let t = t.borrow();
        not_batched(&t)?;
        device.get_or_insert(t.device());
        a.kind = TnArgKind::Tensor as i32;
        a.tensor = arena.tensor(&t);
        return Ok(a);
    }
    if v.is_instance_of::<PyBool>() {
        a.kind = TnArgKind::Bool as i32;
        a.i = v.extract::<bool>()? as i64;
        return Ok(a);
    }
    if v.is_instance_of::<PyInt>() {
        a.kind = TnArgKind::Int as i32;
        a.i = v.extract::<i64>()?;
        return Ok(a);
    }
    if v.is_instance_of::<PyFloat>() {
        a.kind = TnArgKind::Float as i32;
        a.f = v.extract::<f64>()?;
        return Ok(a);
    }
    if v.is_instance_of::<PyString>() {
        let s = CString::new(v.extract::<String>()?)?;
        a.kind = TnArgKind::Str as i32;
        a.str_ = s.as_ptr();
        arena.strings.push(s);
        return Ok(a);
    }
    if let Ok(c) = v.extract::<num_complex_like::C>() {
        a.kind = TnArgKind::Complex as i32;
        a.f = c.0;
        a.f_imag = c.1;
        return Ok(a);
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> = v.try_iter()?.collect::<PyResult<_>>()?;
        let any_tensor = items.iter().any(|x| x.is_instance_of::<TensorBase>());
        if any_tensor
            && items
                .iter()
                .all(|x| x.is_instance_of::<TensorBase>() || x.is_none())
        {
            // `Tensor[]` and `Tensor?[]`: a None entry is a view with ndim == -1.
            let mut ts = Vec::with_capacity(items.len());
            for x in &items {
                if x.is_none() {
                    let mut none = zero_arg().tensor;
                    none.ndim = -1;
                    ts.push(none);
                    continue;
                }
                let t = x.downcast::<TensorBase>()?.borrow();
                not_batched(&t)?;
                device.get_or_insert(t.device());
                ts.push(arena.tensor(&t));
            }
            a.kind = TnArgKind::TensorList as i32;
            a.tensors = ts.as_ptr();
            a.len = ts.len();
            arena.tensor_lists.push(ts);
            return Ok(a);
        }
        if items.iter().any(|x| x.is_instance_of::<PyFloat>()) {
            let fs: Vec<f64> = items
                .iter()
                .map(|x| x.extract::<f64>())
                .collect::<PyResult<_>>()?;
            a.kind = TnArgKind::FloatList as i32;
            a.floats = fs.as_ptr();
            a.len = fs.len();
            arena.floats.push(fs);
            return Ok(a);
        }
        let is: Vec<i64> = items
            .iter()
            .map(|x| x.extract::<i64>())
            .collect::<PyResult<_>>()?;
        a.kind = TnArgKind::IntList as i32;
        a.ints = is.as_ptr();
        a.len = is.len();
        arena.ints.push(is);
        return Ok(a);
    }
    // torch.dtype objects carry their ScalarType code.
    if let Ok(code) = v.getattr("_tn_code") {
        a.kind = TnArgKind::Dtype as i32;
        a.i = code.extract::<i64>()?;
        return Ok(a);
    }
    Err(PyTypeError::new_err(format!(
        "torchnative: cannot pass a {} to a kernel",
        v.get_type().name()?
    )))
}

mod num_complex_like {
    use pyo3::prelude::*;
    use pyo3::types::PyComplex;
    pub struct C(pub f64, pub f64);
    impl<'py> FromPyObject<'py> for C {
        fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
            let c = ob.downcast::<PyComplex>()?;
            Ok(C(c.real(), c.imag()))
        }
    }
}

pub fn refuse(op: &str, device: &str) -> PyErr {
    let installed = registry::installed_backends();
    let hint = if installed.is_empty() {
        "no backend is installed: `pip install torchnative[cpu]`".to_string()
    } else {
        format!("installed backends: {}", installed.join(", "))
    };
    PyNotImplementedError::new_err(format!("{op} has no kernel for device '{device}' ({hint})"))
}

fn error_from(kind: i32, msg: String) -> PyErr {
    match kind {
        k if k == TnErrorKind::Value as i32 => PyValueError::new_err(msg),
        k if k == TnErrorKind::Type as i32 => PyTypeError::new_err(msg),
        k if k == TnErrorKind::Index as i32 => PyIndexError::new_err(msg),
        k if k == TnErrorKind::NotImplemented as i32 => PyNotImplementedError::new_err(msg),
        _ => PyRuntimeError::new_err(msg),
    }
}

/// Outputs a kernel allocated itself through `ctx.alloc_output` (data-dependent shapes).
struct CtxState<'py> {
    py: Python<'py>,
    device: DeviceKey,
    device_index: i32,
    allocated: Vec<(usize, TensorBase)>,
    error: Option<PyErr>,
}

unsafe extern "C" fn alloc_output(
    core: *mut c_void,
    index: usize,
    dtype: i32,
    ndim: i32,
    sizes: *const i64,
    out: *mut TnTensor,
) -> i32 {
    let st = &mut *(core as *mut CtxState);
    let _ = st.py;
    let sizes = if ndim == 0 {
        vec![]
    } else {
        std::slice::from_raw_parts(sizes, ndim as usize).to_vec()
    };
    let Some(dt) = torchnative_abi::TnDtype::from_code(dtype) else {
        return 1;
    };
    match TensorBase::new_empty(st.device, st.device_index, sizes, dt) {
        Ok(t) => {
            st.allocated.push((index, t));
            let t = &st.allocated.last().unwrap().1;
            *out = t.abi_view();
            0
        }
        Err(e) => {
            st.error = Some(e);
            1
        }
    }
}

/// Calls the kernel registered for `op` on the device of the operands. `outs` are tensors (or
/// None for outputs the kernel allocates); returns the list of kernel-allocated outputs as
/// `(index, tensor)` pairs.
#[pyfunction]
pub fn _tn_launch(
    py: Python<'_>,
    op: &str,
    args: &Bound<'_, PyTuple>,
    outs: &Bound<'_, PyTuple>,
) -> PyResult<PyObject> {
    let mut arena = Arena::default();
    let mut device: Option<DeviceKey> = None;
    let mut device_index = 0;
    let mut out_views = Vec::with_capacity(outs.len());
    for o in outs.iter() {
        if o.is_none() {
            out_views.push(zero_arg().tensor);
        } else {
            let t = o.downcast::<TensorBase>()?.borrow();
            not_batched(&t)?;
            device.get_or_insert(t.device());
            device_index = t.storage.device_index;
            out_views.push(arena.tensor(&t));
        }
    }
    let mut targs = Vec::with_capacity(args.len());
    for a in args.iter() {
        targs.push(to_arg(&a, &mut arena, &mut device)?);
    }
    let device = device.unwrap_or_else(|| registry::lookup_device("cpu").unwrap());
    let kernel = registry::kernel(op, device).ok_or_else(|| {
        let qualified = if op.contains("::") {
            op.to_string()
        } else {
            format!("aten::{op}")
        };
        refuse(&display_name(&qualified), &registry::device_name(device))
    })?;
    match kernel {
        Kernel::Python { f, .. } => {
            f.call1(py, (args, outs))?;
            Ok(PyList::empty(py).into_any().unbind())
        }
        Kernel::Native { f, user, .. } => {
            // SAFETY: a registered kernel; the views point into tensors `args`/`outs` keep alive.
            let allocated = unsafe {
                call_native(py, f, user, (device, device_index), &targs, &mut out_views)?
            };
            let result = PyList::empty(py);
            for (i, t) in allocated {
                result.append((i, crate::tensor::wrap(py, t)?))?;
            }
            Ok(result.into_any().unbind())
        }
    }
}

/// Runs native kernel `f` on ABI arguments that point into live tensors (or the caller's
/// locals); returns the outputs the kernel allocated itself. The kernel's error becomes the
/// Python exception it names.
///
/// # Safety
/// `f` and `user` are a kernel as the registry holds it, and every pointer in `targs` and
/// `out_views` is valid for the whole call.
pub unsafe fn call_native(
    py: Python<'_>,
    f: torchnative_abi::TnKernelFn,
    user: *mut c_void,
    (device, device_index): crate::registry::Place,
    targs: &[TnArg],
    out_views: &mut [TnTensor],
) -> PyResult<Vec<(usize, TensorBase)>> {
    // A tensor without data (a meta tensor, or one whose storage was never allocated) must never
    // reach a kernel: it would read or write through a null pointer.
    let dataless = |t: &TnTensor| {
        t.ndim >= 0
            && t.data.is_null()
            && (0..t.ndim as usize).all(|i| unsafe { *t.sizes.add(i) } != 0)
    };
    let bad_arg = targs.iter().any(|a| {
        (a.kind == TnArgKind::Tensor as i32 && dataless(&a.tensor))
            || (a.kind == TnArgKind::TensorList as i32
                && (0..a.len).any(|i| dataless(unsafe { &*a.tensors.add(i) })))
    });
    if bad_arg || out_views.iter().any(|t| !t.sizes.is_null() && dataless(t)) {
        return Err(PyRuntimeError::new_err(format!(
            "Expected all tensors to be on the same device, but a tensor without data (device 'meta') was passed to a kernel for device '{}'",
            registry::device_name(device)
        )));
    }
    let mut state = CtxState {
        py,
        device,
        device_index,
        allocated: vec![],
        error: None,
    };
    let ctx = TnKernelCtx {
        struct_size: std::mem::size_of::<TnKernelCtx>() as u32,
        core: &mut state as *mut CtxState as *mut c_void,
        alloc_output,
    };
    // On the stack: a heap buffer per call was measurable in the per-call overhead.
    let mut buf = [0u8; 1024];
    let mut err = TnError {
        kind: 0,
        message: buf.as_mut_ptr() as *mut c_char,
        capacity: buf.len(),
    };
    // Kernels run without the GIL would be nicer, but Python kernels and the ctx
    // callback need it; native kernels are short and hold no Python state.
    let rc = unsafe {
        f(
            user,
            &ctx,
            targs.as_ptr(),
            targs.len(),
            out_views.as_mut_ptr(),
            out_views.len(),
            &mut err,
        )
    };
    if let Some(e) = state.error.take() {
        return Err(e);
    }
    if rc != 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let msg = String::from_utf8_lossy(&buf[..end]).into_owned();
        return Err(error_from(err.kind, msg));
    }
    Ok(std::mem::take(&mut state.allocated))
}

/// ABI arguments built directly by native meta steps (`fastpath.rs`), without Python values.
pub fn tensor_arg(view: TnTensor) -> TnArg {
    let mut a = zero_arg();
    a.kind = TnArgKind::Tensor as i32;
    a.tensor = view;
    a
}

/// A `Tensor[]` argument over `views`, which the caller keeps alive for the call.
pub fn tensor_list_arg(views: &[TnTensor]) -> TnArg {
    let mut a = zero_arg();
    a.kind = TnArgKind::TensorList as i32;
    a.tensors = views.as_ptr();
    a.len = views.len();
    a
}

/// An `int[]` argument over `ints`, which the caller keeps alive for the call.
pub fn int_list_arg(ints: &[i64]) -> TnArg {
    let mut a = zero_arg();
    a.kind = TnArgKind::IntList as i32;
    a.ints = ints.as_ptr();
    a.len = ints.len();
    a
}

pub fn bool_arg(b: bool) -> TnArg {
    let mut a = zero_arg();
    a.kind = TnArgKind::Bool as i32;
    a.i = b as i64;
    a
}

/// A None argument.
pub fn none_arg() -> TnArg {
    zero_arg()
}

pub fn int_arg(i: i64) -> TnArg {
    let mut a = zero_arg();
    a.kind = TnArgKind::Int as i32;
    a.i = i;
    a
}

pub fn float_arg(f: f64) -> TnArg {
    let mut a = zero_arg();
    a.kind = TnArgKind::Float as i32;
    a.f = f;
    a
}

/// `aten::add.Tensor` -> `aten.add.Tensor`, `aten::mm` -> `aten.mm.default`, as Python spells it.
pub fn display_name(op: &str) -> String {
    let s = op.replace("::", ".");
    if s.matches('.').count() == 1 {
        format!("{s}.default")
    } else {
        s
    }
}

#[pyfunction]
pub fn _tn_has_kernel(op: &str, device: &str) -> bool {
    registry::lookup_device(device)
        .map(|d| registry::has_kernel(op, d))
        .unwrap_or(false)
}

#[pyfunction]
pub fn _tn_copy_bytes(
    dst: PyRef<'_, TensorBase>,
    src: PyRef<'_, TensorBase>,
    nbytes: usize,
) -> PyResult<()> {
    // SAFETY: not checked here: the Python caller passes tensors holding `nbytes` bytes each.
    unsafe {
        crate::storage::copy_between(
            dst.place(),
            dst.data_ptr_raw() as *mut c_void,
            src.place(),
            src.data_ptr_raw() as *const c_void,
            nbytes,
        )
    }
}
