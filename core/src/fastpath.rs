//! Native meta steps for the commonest operator calls, taken inside the door's implementation
//! step (`door::_tn_call_impl`) instead of the Python implementation when they apply.
//!
//! A fast path is registered for an overload together with the Python implementation it stands
//! in for (`_tn_set_fast_paths`); it runs only while that implementation is still the one
//! installed for the overload (a replaced implementation turns it off), and only for arguments
//! on which it computes exactly what the Python meta step would: otherwise it answers `None` and
//! the Python implementation runs. docs/PERF.md records what each saves.
//!
//! * `binary`: `add.Tensor`, `sub.Tensor`, `mul.Tensor`, `div.Tensor` on two tensors of one
//!   dtype and device, or one tensor and a wrapped Python number on the CPU (float32/float64
//!   with an int or float, int64/int32 with an int); no bool, `div` on floating dtypes only, at
//!   least one element, a native kernel registered. The Python meta step
//!   (`ops/elementwise/arithmetic.binary`) then promotes to the tensor's dtype, so it reduces to: cast the
//!   number to that dtype (a 0-dim tensor), expand both operands to the broadcast shape
//!   (stride-0 views, or the operand itself when it already has the shape), allocate a
//!   contiguous output and launch the kernel. Their in-place forms (`add_.Tensor`, ...:
//!   ops/elementwise/arithmetic.binary_) take the same cases where the broadcast shape is `self`'s: the
//!   kernel writes into `self`, whose version is bumped. `pow.Tensor_Scalar` with exponent 2 on
//!   a floating tensor is the mul kernel on `(self, self)`, as ops/elementwise/arithmetic.pow_ts launches it.
//!   `threshold_backward` (relu's derivative) is the same binary launch with its threshold after
//!   the two tensors, and `silu_backward` on float32 the same launch of its kernel, as
//!   ops/elementwise/activations.py launches them. The comparisons (`eq`, `ne`, `lt`, `le`,
//!   `gt`, `ge`; `.Tensor`, and `.Scalar` with the number wrapped) are the same launch into a
//!   bool result, as ops/elementwise/arithmetic.py `_mk_cmp` makes it.
//! * `cat` of tensors of one dtype and place and one rank (at least 1), equal outside the
//!   joined dimension, into a non-empty result: ops/shape/join.cat's output (promotion and the
//!   legacy empty-tensor rule change nothing there) and its kernel launch.
//! * `sum.dim_IntList` and `mean.dim` of a float32/float64 tensor with elements over a list of
//!   dims (or None), without a dtype: ops/reductions/reduce.py's sum kernel into the reduced shape; `mean`
//!   then `div_`s by the count through the door, as the Python step calls it.
//! * views: `view`, `_unsafe_view`, `t`, `transpose.int`, `select.int`, `slice.Tensor` compute the same geometry
//!   as ops/shape/views.py (upstream's computeStride for `view`) and make the view as
//!   `TensorBase._tn_as_strided` does; any argument the Python step would refuse goes there, so
//!   errors keep their Python wording.
//! * matrix products: `mm` and `addmm` on 2-d operands of one dtype and place (the meta step of
//!   ops/linalg/products.py: an [n, m] output, `addmm`'s bias expanded to it), and the compositions `matmul`
//!   (2-d @ 2-d, and n-d @ 2-d folded into one mm) and `linear` (2-d input, 3-d contiguous with a
//!   bias, any input without one) re-entering the door for
//!   each operator they are made of, exactly as ops/linalg/products.py does, so dispatch modes and
//!   autograd see the same calls.
//! * the optimizers' pointwise operators: `addcmul`, `addcdiv`, `lerp.Scalar` and their in-place
//!   forms with float32/float64 operands of one dtype and place and a Python number, as
//!   ops/elementwise/math.py `_fused` launches them (`fused` below).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyTuple};
use torchnative_abi::TnDtype;

use crate::launch;
use crate::registry::{self, Kernel};
use crate::tensor::{self, Meta, TensorBase};

#[derive(Clone, Copy)]
enum Fast {
    /// Same-shape elementwise binary; `floats_only` for true division.
    Binary {
        floats_only: bool,
        inplace: bool,
    },
    /// `pow.Tensor_Scalar` with exponent 2 on a floating tensor: `self * self`.
    Square,
    /// `threshold_backward(grad_output, self, threshold)`: a binary kernel with a number after
    /// its two tensors (relu's derivative, once per relu in every backward).
    ThresholdBackward,
    /// `silu_backward(grad_output, self)` on two float32 tensors: the binary launch of its
    /// kernel (silu's derivative, once per MLP block in every backward).
    SiluBackward,
    /// `eq`/`ne`/`lt`/`le`/`gt`/`ge`, `.Tensor` or (`scalar`) `.Scalar`: the binary launch of the
    /// comparison's kernel into a bool result.
    Compare {
        scalar: bool,
    },
    View,
    T,
    Transpose,
    Select,
    Unsqueeze,
    /// `embedding(weight, indices)` of a 2-d floating weight and int64 indices: one gather
    /// launch (the token embedding of every language model's forward).
    Embedding,
    Mm,
    Addmm,
    Matmul,
    Linear,
    Unary,
    Reshape,
    Cat,
    SumDim,
    MeanDim,
    Slice,
    /// `addcmul`, `addcdiv`, `lerp.Scalar` and their in-place forms: one kernel of float32 or
    /// float64 operands of one dtype and place.
    Fused {
        inplace: bool,
    },
}

struct Entry {
    fast: Fast,
    /// The Python implementation this stands in for (compared by identity).
    py_impl: Py<PyAny>,
}

static TABLE: GILOnceCell<HashMap<String, Entry>> = GILOnceCell::new();
/// `_tn_fast_paths_enabled(False)` turns every fast path off (tests compare both ways).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns the fast paths on or off; returns the previous setting.
#[pyfunction]
pub fn _tn_fast_paths_enabled(on: bool) -> bool {
    ENABLED.swap(on, Ordering::Relaxed)
}

/// Registers the fast paths: `{overload name: the Python implementation it replaces}`. Names
/// without a native meta step here are ignored; called once by the ops package.
#[pyfunction]
pub fn _tn_set_fast_paths(py: Python<'_>, impls: &Bound<'_, PyDict>) -> PyResult<Vec<String>> {
    let mut table = HashMap::new();
    for (k, v) in impls.iter() {
        let name: String = k.extract()?;
        // (the meta step, the module and qualified name of the Python implementation it mirrors)
        let (fast, module, qualname) = match name.as_str() {
            "add.Tensor" => (binary_entry(false, false), "elementwise.arithmetic", "add"),
            "sub.Tensor" => (binary_entry(false, false), "elementwise.arithmetic", "sub"),
            "mul.Tensor" => (binary_entry(false, false), "elementwise.arithmetic", "mul"),
            "div.Tensor" => (binary_entry(true, false), "elementwise.arithmetic", "div"),
            "add_.Tensor" => (binary_entry(false, true), "elementwise.arithmetic", "add_"),
            "sub_.Tensor" => (binary_entry(false, true), "elementwise.arithmetic", "sub_"),
            "mul_.Tensor" => (binary_entry(false, true), "elementwise.arithmetic", "mul_"),
            "div_.Tensor" => (binary_entry(true, true), "elementwise.arithmetic", "div_"),
            "pow.Tensor_Scalar" => (Fast::Square, "elementwise.arithmetic", "pow_ts"),
            "threshold_backward" => (
                Fast::ThresholdBackward,
                "elementwise.activations",
                "threshold_backward",
            ),
            "silu_backward" => (
                Fast::SiluBackward,
                "elementwise.activations",
                "silu_backward",
            ),
            n if comparison(n).is_some() => {
                let scalar = comparison(n) == Some(true);
                let qualname = if scalar {
                    "_mk_cmp.<locals>.scalar_fn"
                } else {
                    "_mk_cmp.<locals>.tensor_fn"
                };
                (Fast::Compare { scalar }, "elementwise.arithmetic", qualname)
            }
            "cat" => (Fast::Cat, "shape.join", "cat"),
            "sum.dim_IntList" => (Fast::SumDim, "reductions.reduce", "sum_dim"),
            "mean.dim" => (Fast::MeanDim, "reductions.reduce", "mean_dim"),
            "view" => (Fast::View, "shape.views", "view"),
            "_unsafe_view" => (Fast::View, "shape.views", "_unsafe_view"),
            "reshape" => (Fast::Reshape, "shape.views", "reshape"),
            "t" => (Fast::T, "shape.views", "t"),
            "transpose.int" => (Fast::Transpose, "shape.views", "transpose"),
            "select.int" => (Fast::Select, "shape.views", "select"),
            "unsqueeze" => (Fast::Unsqueeze, "shape.views", "unsqueeze"),
            "embedding" => (Fast::Embedding, "indexing.index", "embedding"),
            "slice.Tensor" => (Fast::Slice, "shape.views", "slice_"),
            "mm" => (Fast::Mm, "linalg.products", "mm"),
            "addmm" => (Fast::Addmm, "linalg.products", "addmm"),
            "matmul" => (Fast::Matmul, "linalg.products", "matmul"),
            "linear" => (Fast::Linear, "linalg.products", "linear"),
            "addcmul" => (
                Fast::Fused { inplace: false },
                "elementwise.math",
                "addcmul",
            ),
            "addcdiv" => (
                Fast::Fused { inplace: false },
                "elementwise.math",
                "addcdiv",
            ),
            "lerp.Scalar" => (
                Fast::Fused { inplace: false },
                "elementwise.math",
                "lerp_scalar",
            ),
            "addcmul_" => (
                Fast::Fused { inplace: true },
                "elementwise.math",
                "addcmul_",
            ),
            "addcdiv_" => (
                Fast::Fused { inplace: true },
                "elementwise.math",
                "addcdiv_",
            ),
            "lerp_.Scalar" => (
                Fast::Fused { inplace: true },
                "elementwise.math",
                "lerp_scalar_",
            ),
            "neg" => (Fast::Unary, "elementwise.arithmetic", "neg"),
            "silu" => (Fast::Unary, "elementwise.arithmetic", "silu"),
            n if UNARY.contains(&n) => (
                Fast::Unary,
                "elementwise.arithmetic",
                "_register_unary.<locals>.<lambda>",
            ),
            _ => continue,
        };
        // Only over the implementation it was written against: an operator whose
        // implementation another module replaced keeps that one.
        let m: String = v.getattr("__module__")?.extract()?;
        let q: String = v.getattr("__qualname__")?.extract()?;
        if m != format!("torchnative_core.ops.{module}") || q != qualname {
            continue;
        }
        table.insert(
            name,
            Entry {
                fast,
                py_impl: v.unbind(),
            },
        );
    }
    let names = table.keys().cloned().collect();
    let _ = TABLE.set(py, table);
    Ok(names)
}

fn binary_entry(floats_only: bool, inplace: bool) -> Fast {
    Fast::Binary {
        floats_only,
        inplace,
    }
}

/// ops/elementwise/arithmetic.py's FLOAT_UNARY and SAME_UNARY names (registered by `_register_unary` as
/// `unary(name, self)`): on a floating tensor both allocate an output of the input's dtype and
/// shape and launch the kernel of the same name on the input.
const UNARY: &[&str] = &[
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "sigmoid",
    "erf",
    "erfc",
    "erfinv",
    "reciprocal",
    "neg",
    "abs",
    "sign",
    "relu",
    "floor",
    "ceil",
    "round",
    "trunc",
    "frac",
];

/// The fast path's result, or None when it does not apply (the Python implementation runs).
pub fn try_call(
    py: Python<'_>,
    op: &str,
    py_impl: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Option<PyObject>> {
    if !ENABLED.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let Some(table) = TABLE.get(py) else {
        return Ok(None);
    };
    let Some(entry) = table.get(op) else {
        return Ok(None);
    };
    if !entry.py_impl.bind(py).is(py_impl) || kwargs.is_some_and(|k| !k.is_empty()) {
        return Ok(None);
    }
    match entry.fast {
        Fast::Binary {
            floats_only,
            inplace,
        } => binary(py, op, args, floats_only, inplace),
        Fast::Square => square(py, args),
        Fast::ThresholdBackward => threshold_backward(py, args),
        Fast::SiluBackward => silu_backward(py, args),
        Fast::Compare { scalar } => compare(py, op, args, scalar),
        Fast::Cat => cat(py, args),
        Fast::SumDim => sum_dim(py, args),
        Fast::MeanDim => mean_dim(py, args),
        Fast::View => view(py, args),
        Fast::T => t(py, args),
        Fast::Transpose => transpose(py, args),
        Fast::Select => select(py, args),
        Fast::Unsqueeze => unsqueeze(py, args),
        Fast::Embedding => embedding(py, args),
        Fast::Slice => slice(py, args),
        Fast::Mm => mm(py, args),
        Fast::Addmm => addmm(py, args),
        Fast::Matmul => matmul(py, args),
        Fast::Linear => linear(py, args),
        Fast::Unary => unary(py, op, args),
        Fast::Reshape => reshape(py, args),
        Fast::Fused { inplace } => fused(py, op, args, inplace),
    }
}

/// ops/elementwise/math.py `_fused` (and `_fused_inplace` where `inplace`): `addcmul(self, t1, t2,
/// value)`, `addcdiv(...)` and `lerp.Scalar(self, end, weight)` with every tensor operand float32
/// or float64 of one dtype and place, the scalar a Python number and a native kernel of the
/// operator's name registered: the operands expanded to the broadcast shape and one launch into
/// a new contiguous output, or in place into `self` when `self` has the broadcast shape, no other
/// operand shares its storage and autograd need not see the parts (grad mode off or nothing
/// requires grad). Empty results take the Python path.
fn fused(
    py: Python<'_>,
    op: &str,
    args: &Bound<'_, PyTuple>,
    inplace: bool,
) -> PyResult<Option<PyObject>> {
    let n_tensors = if op.starts_with("lerp") { 2 } else { 3 };
    if args.len() != n_tensors + 1 {
        return Ok(None);
    }
    let mut ts = Vec::with_capacity(n_tensors);
    for i in 0..n_tensors {
        let Some(t) = tensor_arg(args, i) else {
            return Ok(None);
        };
        ts.push(t);
    }
    let Some(scalar) = number_arg(&args.get_item(n_tensors)?) else {
        return Ok(None);
    };
    let refs: Vec<_> = ts.iter().map(|t| t.borrow()).collect();
    let first = &refs[0];
    let dt = first.meta.dtype;
    if !matches!(dt, TnDtype::Float32 | TnDtype::Float64)
        || refs
            .iter()
            .any(|t| t.meta.dtype != dt || t.place() != first.place())
    {
        return Ok(None);
    }
    if inplace && crate::door::is_grad_enabled() && refs.iter().any(|t| t.requires_grad) {
        return Ok(None);
    }
    let mut shape = first.meta.sizes.clone();
    for t in &refs[1..] {
        match broadcast(&shape, &t.meta.sizes) {
            Some(s) => shape = s,
            None => return Ok(None),
        }
    }
    if shape.iter().product::<i64>() == 0 {
        return Ok(None);
    }
    if inplace
        && (shape != first.meta.sizes
            || refs[1..]
                .iter()
                .any(|t| std::sync::Arc::ptr_eq(&t.storage, &first.storage)))
    {
        return Ok(None);
    }
    let (device, index) = first.place();
    let Some(Kernel::Native { f, user, .. }) = registry::kernel(op, device) else {
        return Ok(None);
    };
    let mut strides: Vec<Vec<i64>> = Vec::with_capacity(n_tensors);
    for t in &refs {
        match expanded_strides(&t.meta.sizes, &t.meta.strides, &shape) {
            Some(s) => strides.push(s),
            None => return Ok(None),
        }
    }
    let mut targs = Vec::with_capacity(n_tensors + 1);
    for (t, st) in refs.iter().zip(&strides) {
        let mut v = t.abi_view();
        v.ndim = shape.len() as i32;
        v.sizes = shape.as_ptr();
        v.strides = st.as_ptr();
        targs.push(launch::tensor_arg(v));
    }
    targs.push(scalar);
    let out = if inplace {
        None
    } else {
        Some(TensorBase::new_empty(device, index, shape.clone(), dt)?)
    };
    let out_view = out
        .as_ref()
        .map_or_else(|| first.abi_view(), |o| o.abi_view());
    // SAFETY: a registered native kernel; the views point into the borrowed operands, `out`,
    // `shape` and `strides`, all alive until after the call.
    unsafe { launch::call_native(py, f, user, (device, index), &targs, &mut [out_view])? };
    if inplace {
        first.bump_version();
    }
    drop(refs);
    match out {
        Some(out) => tensor::wrap(py, out).map(Some),
        None => Ok(Some(ts[0].clone().into_any().unbind())),
    }
}

fn binary(
    py: Python<'_>,
    op: &str,
    args: &Bound<'_, PyTuple>,
    floats_only: bool,
    inplace: bool,
) -> PyResult<Option<PyObject>> {
    // add/sub take (self, other, alpha), mul/div (self, other); alpha defaults to 1.
    let n = args.len();
    let with_alpha = op.starts_with("add") || op.starts_with("sub");
    if n < 2 || n > 2 + with_alpha as usize {
        return Ok(None);
    }
    let (Some(a), Some(b)) = (tensor_arg(args, 0), tensor_arg(args, 1)) else {
        return Ok(None);
    };
    let alpha = if with_alpha && n == 3 {
        match number_arg(&args.get_item(2)?) {
            Some(a) => a,
            None => return Ok(None),
        }
    } else {
        launch::int_arg(1)
    };
    // the in-place overloads launch the out-of-place kernel with `self` as the output
    let kernel = if inplace {
        op.replacen("_.", ".", 1)
    } else {
        op.to_string()
    };
    let alpha = with_alpha.then_some(alpha);
    launch_binary(py, &kernel, &a, &b, alpha, floats_only, inplace, None)
}

/// `pow(self, 2)` on a floating tensor: ops/elementwise/arithmetic.py `pow_ts` launches the mul kernel on
/// `(self, self)`, as upstream's pow_tensor_scalar_optimized_kernel squares.
fn square(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    if args.len() != 2 {
        return Ok(None);
    }
    let Some(a) = tensor_arg(args, 0) else {
        return Ok(None);
    };
    let e = args.get_item(1)?;
    let two = if e.is_instance_of::<pyo3::types::PyBool>() {
        false
    } else if e.is_instance_of::<pyo3::types::PyInt>() {
        e.extract::<i64>().is_ok_and(|v| v == 2)
    } else if e.is_instance_of::<pyo3::types::PyFloat>() {
        e.extract::<f64>().is_ok_and(|v| v == 2.0)
    } else {
        false
    };
    let floating = matches!(
        a.borrow().meta.dtype,
        TnDtype::Float32 | TnDtype::Float64 | TnDtype::Float16 | TnDtype::BFloat16
    );
    if !two || !floating || a.borrow().wrapped_number {
        return Ok(None);
    }
    launch_binary(py, "mul.Tensor", &a, &a, None, false, false, None)
}

/// ops/elementwise/activations.py `threshold_backward` where the device has the kernel: its
/// `binary(kernel, grad_output, self, threshold)`, the threshold a Python number.
fn threshold_backward(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    if args.len() != 3 {
        return Ok(None);
    }
    let (Some(g), Some(x)) = (tensor_arg(args, 0), tensor_arg(args, 1)) else {
        return Ok(None);
    };
    let Some(th) = number_arg(&args.get_item(2)?) else {
        return Ok(None);
    };
    launch_binary(
        py,
        "threshold_backward",
        &g,
        &x,
        Some(th),
        false,
        false,
        None,
    )
}

/// ops/elementwise/activations.py `silu_backward` on float32 operands where the device has the
/// kernel: its `binary("silu_backward", grad_output, self)`. Other dtypes compose in Python.
fn silu_backward(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    if args.len() != 2 {
        return Ok(None);
    }
    let (Some(g), Some(x)) = (tensor_arg(args, 0), tensor_arg(args, 1)) else {
        return Ok(None);
    };
    let f32_tensor = |t: &Bound<'_, TensorBase>| {
        let r = t.borrow();
        r.meta.dtype == TnDtype::Float32 && !r.wrapped_number
    };
    if !f32_tensor(&g) || !f32_tensor(&x) {
        return Ok(None);
    }
    launch_binary(py, "silu_backward", &g, &x, None, false, false, None)
}

/// Whether `op` is a comparison (ops/elementwise/arithmetic.py `_mk_cmp`): Some(true) for its
/// `.Scalar` overload, Some(false) for `.Tensor`.
fn comparison(op: &str) -> Option<bool> {
    let (name, overload) = op.split_once('.')?;
    if !["eq", "ne", "lt", "le", "gt", "ge"].contains(&name) {
        return None;
    }
    match overload {
        "Scalar" => Some(true),
        "Tensor" => Some(false),
        _ => None,
    }
}

/// ops/elementwise/arithmetic.py `_mk_cmp`'s `tensor_fn` and `scalar_fn`: `binary(name.Tensor,
/// self, other, out_dtype=bool)`, a Python number `other` (`.Scalar`) wrapped first.
fn compare(
    py: Python<'_>,
    op: &str,
    args: &Bound<'_, PyTuple>,
    scalar: bool,
) -> PyResult<Option<PyObject>> {
    if args.len() != 2 {
        return Ok(None);
    }
    let Some(a) = tensor_arg(args, 0) else {
        return Ok(None);
    };
    let b = if scalar {
        let w = _tn_wrapped_number(py, &args.get_item(1)?)?.into_bound(py);
        match w.downcast_into::<TensorBase>() {
            Ok(t) => t,
            Err(_) => return Ok(None),
        }
    } else {
        match tensor_arg(args, 1) {
            Some(t) => t,
            None => return Ok(None),
        }
    };
    let kernel = op.replacen(".Scalar", ".Tensor", 1);
    launch_binary(py, &kernel, &a, &b, None, false, false, Some(TnDtype::Bool))
}

/// ops/elementwise/arithmetic.py `binary` (or `binary_` where `inplace`: `a` is the output, its shape must
/// be the broadcast shape, and its version is bumped) for the cases described at the top.
/// The result is in `out_dtype` where given (a comparison's bool), else in the operands' dtype.
#[allow(clippy::too_many_arguments)]
fn launch_binary(
    py: Python<'_>,
    op: &str,
    a: &Bound<'_, TensorBase>,
    b: &Bound<'_, TensorBase>,
    alpha: Option<torchnative_abi::TnArg>,
    floats_only: bool,
    inplace: bool,
    out_dtype: Option<TnDtype>,
) -> PyResult<Option<PyObject>> {
    let (ra, rb) = (a.borrow(), b.borrow());
    if inplace && ra.wrapped_number {
        return Ok(None);
    }
    // The operand that decides dtype and device; the other is the same kind of tensor or a
    // wrapped Python number (cast to that dtype, as `_prepare` casts it).
    let (wa, wb) = (ra.wrapped_number, rb.wrapped_number);
    if wa && wb {
        return Ok(None);
    }
    let main = if wa { &rb } else { &ra };
    let dt = main.meta.dtype;
    let is_float = matches!(dt, TnDtype::Float32 | TnDtype::Float64);
    let dtype_ok = matches!(
        dt,
        TnDtype::Float32 | TnDtype::Float64 | TnDtype::Int64 | TnDtype::Int32
    ) || (!wa && !wb && matches!(dt, TnDtype::Float16 | TnDtype::BFloat16));
    if !dtype_ok
        || (floats_only && !(is_float || matches!(dt, TnDtype::Float16 | TnDtype::BFloat16)))
    {
        return Ok(None);
    }
    let (device, index) = main.place();
    // The wrapped number, cast to `dt`, lives in this buffer for the kernel call: a stride-0
    // view of it is what expanding the Python path's 0-dim tensor would give.
    let mut scalar_buf = [0u8; 8];
    if wa || wb {
        let w = if wa { &ra } else { &rb };
        // a Python int or float; an int tensor takes only ints (a float would promote it)
        let Some(v) = read_wrapped(w) else {
            return Ok(None);
        };
        if (!is_float && matches!(v, Scalar::F(_))) || device != registry::CPU {
            return Ok(None);
        }
        write_scalar(scalar_buf.as_mut_ptr(), dt, v);
    } else if rb.meta.dtype != dt || ra.place() != rb.place() {
        return Ok(None);
    }
    let Some(shape) = broadcast(&ra.meta.sizes, &rb.meta.sizes) else {
        return Ok(None);
    };
    if shape.iter().product::<i64>() == 0 || (inplace && shape != ra.meta.sizes) {
        return Ok(None);
    }
    // Only a native kernel: the Python path refuses, falls back to the cpu backend, or skips
    // the meta step for the others.
    let Some(Kernel::Native { f, user, .. }) = registry::kernel(op, device) else {
        return Ok(None);
    };
    let zeros = vec![0i64; shape.len()];
    let (mut sa, mut sb) = (None, None);
    let mut operand = |t: &TensorBase, wrapped: bool, strides: &mut Option<Vec<i64>>| {
        let mut v = t.abi_view();
        if wrapped {
            v.data = scalar_buf.as_mut_ptr() as *mut _;
            v.dtype = dt as i32;
            v.strides = zeros.as_ptr();
        } else if t.meta.sizes != shape {
            *strides = Some(expanded_strides(&t.meta.sizes, &t.meta.strides, &shape)?);
            v.strides = strides.as_ref().unwrap().as_ptr();
        } else {
            return Some(v);
        }
        v.ndim = shape.len() as i32;
        v.sizes = shape.as_ptr();
        Some(v)
    };
    let (Some(x), Some(y)) = (operand(&ra, wa, &mut sa), operand(&rb, wb, &mut sb)) else {
        return Ok(None);
    };
    let one = launch::int_arg(1);
    let targs = [
        launch::tensor_arg(x),
        launch::tensor_arg(y),
        alpha.unwrap_or(one),
    ];
    let nargs = if alpha.is_some() { 3 } else { 2 };
    let out = if inplace {
        None
    } else {
        let mut o = TensorBase::new_empty(device, index, shape.clone(), out_dtype.unwrap_or(dt))?;
        // the layout upstream's TensorIterator gives the result (a dense permutation of
        // contiguous: the storage size is the same)
        let inputs: Vec<(&[i64], &[i64])> = [(&ra, wa), (&rb, wb)]
            .iter()
            .filter(|(_, w)| !w)
            .map(|(t, _)| (t.meta.sizes.as_slice(), t.meta.strides.as_slice()))
            .collect();
        if let Some(st) = crate::layout::elementwise_strides(&shape, &inputs) {
            o.meta.strides = st;
        }
        Some(o)
    };
    let out_view = out.as_ref().map_or_else(|| ra.abi_view(), |o| o.abi_view());
    // SAFETY: a registered native kernel; the views point into `ra`, `rb` (borrowed until after
    // the call), `out`, `shape`, `zeros`, the expanded strides and `scalar_buf`, all alive here.
    unsafe {
        launch::call_native(
            py,
            f,
            user,
            (device, index),
            &targs[..nargs],
            &mut [out_view],
        )?
    };
    if inplace {
        ra.bump_version();
    }
    drop((ra, rb));
    match out {
        Some(out) => tensor::wrap(py, out).map(Some),
        None => Ok(Some(a.clone().into_any().unbind())),
    }
}

/// A Python bool, int (within int64) or float as a kernel's Scalar argument, as `_tn_launch`
/// passes it; None for anything else.
fn number_arg(x: &Bound<'_, PyAny>) -> Option<torchnative_abi::TnArg> {
    if x.is_instance_of::<pyo3::types::PyBool>() {
        let mut a = launch::int_arg(x.extract::<bool>().ok()? as i64);
        a.kind = torchnative_abi::TnArgKind::Bool as i32;
        Some(a)
    } else if x.is_instance_of::<pyo3::types::PyInt>() {
        Some(launch::int_arg(x.extract::<i64>().ok()?))
    } else if x.is_instance_of::<pyo3::types::PyFloat>() {
        Some(launch::float_arg(x.extract::<f64>().ok()?))
    } else {
        None
    }
}

/// The strides of `sizes`/`strides` expanded to `shape` (ops/base.py `expand_to`: stride 0 along
/// broadcast dimensions); None where it would raise.
fn expanded_strides(sizes: &[i64], strides: &[i64], shape: &[i64]) -> Option<Vec<i64>> {
    if sizes.len() > shape.len() {
        return None;
    }
    let off = shape.len() - sizes.len();
    let mut new_strides = vec![0i64; shape.len()];
    for i in 0..sizes.len() {
        if sizes[i] == shape[i + off] {
            new_strides[i + off] = strides[i];
        } else if sizes[i] != 1 {
            return None;
        }
    }
    Some(new_strides)
}

#[derive(Clone, Copy)]
enum Scalar {
    I(i64),
    F(f64),
}

/// The value of a wrapped-number tensor made from a Python int or float.
fn read_wrapped(w: &TensorBase) -> Option<Scalar> {
    if !w.meta.sizes.is_empty() || w.device() != registry::CPU {
        return None;
    }
    let p = w.data_ptr_raw();
    // SAFETY: a 0-dim CPU tensor holds one element of its dtype at its data pointer.
    unsafe {
        match w.meta.dtype {
            TnDtype::Int64 => Some(Scalar::I(std::ptr::read_unaligned(p as *const i64))),
            TnDtype::Float64 => Some(Scalar::F(std::ptr::read_unaligned(p as *const f64))),
            _ => None,
        }
    }
}

/// Stores `v` cast to `dt` (f32, f64, i64, i32: C++'s static_cast rules, which `as` follows for
/// these pairs) at `p`, which has room for 8 bytes.
fn write_scalar(p: *mut u8, dt: TnDtype, v: Scalar) {
    // SAFETY: the caller's buffer holds 8 bytes; unaligned writes.
    unsafe {
        match (dt, v) {
            (TnDtype::Float32, Scalar::F(f)) => std::ptr::write_unaligned(p as *mut f32, f as f32),
            (TnDtype::Float32, Scalar::I(i)) => std::ptr::write_unaligned(p as *mut f32, i as f32),
            (TnDtype::Float64, Scalar::F(f)) => std::ptr::write_unaligned(p as *mut f64, f),
            (TnDtype::Float64, Scalar::I(i)) => std::ptr::write_unaligned(p as *mut f64, i as f64),
            (TnDtype::Int64, Scalar::I(i)) => std::ptr::write_unaligned(p as *mut i64, i),
            (TnDtype::Int32, Scalar::I(i)) => std::ptr::write_unaligned(p as *mut i32, i as i32),
            _ => unreachable!("checked by binary()"),
        }
    }
}

/// ops/base.py `broadcast_shapes` of two shapes, None where it would raise.
fn broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let nd = a.len().max(b.len());
    let mut out = vec![1i64; nd];
    for s in [a, b] {
        for (i, &d) in s.iter().enumerate() {
            let j = nd - s.len() + i;
            if out[j] == 1 {
                out[j] = d;
            } else if d != 1 && d != out[j] {
                return None;
            }
        }
    }
    Some(out)
}

/// `_tn_wrapped_number(x)`: a Python bool, int (within int64) or float as a 0-dim wrapped-number
/// tensor (bool, int64, float64), as ops/factories/tensors.wrapped_number makes it; None for anything
/// else (the caller then takes the Python path).
#[pyfunction]
pub fn _tn_wrapped_number(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    let cpu = registry::lookup_device("cpu").unwrap();
    let (dt, bytes): (TnDtype, [u8; 8]) = if x.is_instance_of::<pyo3::types::PyBool>() {
        let mut b = [0u8; 8];
        b[0] = x.extract::<bool>()? as u8;
        (TnDtype::Bool, b)
    } else if x.is_instance_of::<pyo3::types::PyInt>() {
        match x.extract::<i64>() {
            Ok(i) => (TnDtype::Int64, i.to_ne_bytes()),
            Err(_) => return Ok(py.None()),
        }
    } else if x.is_instance_of::<pyo3::types::PyFloat>() {
        (TnDtype::Float64, x.extract::<f64>()?.to_ne_bytes())
    } else {
        return Ok(py.None());
    };
    let mut t = TensorBase::new_empty(cpu, 0, vec![], dt)?;
    t.wrapped_number = true;
    // SAFETY: a fresh 0-dim CPU tensor has room for one element (at most 8 bytes).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), t.data_ptr_raw(), dt.itemsize()) };
    tensor::wrap(py, t)
}

// --- views ----------------------------------------------------------------------------------

/// A view of `t` with the given geometry: `TensorBase._tn_as_strided` without its bounds check
/// (every geometry made here lies inside the viewed tensor's).
/// ops/shape/views.py `slice_` (`slice.Tensor(self, dim=0, start=None, end=None, step=1)`) where
/// every argument is a plain int or None and the Python step would not raise.
fn slice(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    let n = args.len();
    if !(1..=5).contains(&n) {
        return Ok(None);
    }
    let Some(t) = tensor_arg(args, 0) else {
        return Ok(None);
    };
    // (value, whether it was given as None)
    let opt = |i: usize, default: Option<i64>| -> PyResult<Option<Option<i64>>> {
        if i >= n {
            return Ok(Some(default));
        }
        let v = args.get_item(i)?;
        if v.is_none() {
            return Ok(Some(None));
        }
        Ok(int_arg(args, i).map(Some))
    };
    let (Some(Some(dim)), Some(start), Some(end), Some(Some(step))) = (
        opt(1, Some(0))?,
        opt(2, None)?,
        opt(3, None)?,
        opt(4, Some(1))?,
    ) else {
        return Ok(None);
    };
    let (mut sizes, mut strides, offset) = geometry(&t);
    if sizes.is_empty() || step <= 0 {
        return Ok(None);
    }
    let Some(d) = wrap_dim(dim, sizes.len()) else {
        return Ok(None);
    };
    let size = sizes[d];
    let (mut start, mut end) = (start.unwrap_or(0), end.unwrap_or(size));
    if start < 0 {
        start += size;
    }
    if end < 0 {
        end += size;
    }
    let start = start.clamp(0, size);
    let end = end.max(start).min(size);
    let Some(stride) = strides[d].checked_mul(step) else {
        return Ok(None);
    };
    sizes[d] = ((end - start) as u64).div_ceil(step as u64) as i64;
    let offset = offset + start * strides[d];
    strides[d] = stride;
    make_view(py, &t, sizes, strides, offset).map(Some)
}

/// A tensor's sizes, strides and storage offset (copies, for a view to be made from them).
fn geometry(t: &Bound<'_, TensorBase>) -> (Vec<i64>, Vec<i64>, i64) {
    let me = t.borrow();
    (
        me.meta.sizes.clone(),
        me.meta.strides.clone(),
        me.meta.offset,
    )
}

fn make_view(
    py: Python<'_>,
    t: &Bound<'_, TensorBase>,
    sizes: Vec<i64>,
    strides: Vec<i64>,
    offset: i64,
) -> PyResult<PyObject> {
    let me = t.borrow();
    let base = me
        .base
        .as_ref()
        .map(|b| b.clone_ref(py))
        .unwrap_or_else(|| t.clone().into_any().unbind());
    let v = me.view_of(
        Meta {
            sizes,
            strides,
            offset,
            dtype: me.meta.dtype,
        },
        Some(base),
    );
    drop(me);
    tensor::wrap(py, v)
}

fn tensor_arg<'py>(args: &Bound<'py, PyTuple>, i: usize) -> Option<Bound<'py, TensorBase>> {
    args.get_item(i)
        .ok()
        .and_then(|x| x.downcast_into::<TensorBase>().ok())
}

/// `(self, int[] size)` as `view` and `reshape` take it: exactly two arguments, the second a
/// list or tuple of ints.
fn tensor_and_int_list<'py>(
    args: &Bound<'py, PyTuple>,
) -> Option<(Bound<'py, TensorBase>, Vec<i64>)> {
    if args.len() != 2 {
        return None;
    }
    let t = tensor_arg(args, 0)?;
    let size = args.get_item(1).ok()?;
    if !(size.is_instance_of::<pyo3::types::PyList>()
        || size.is_instance_of::<pyo3::types::PyTuple>())
    {
        return None;
    }
    Some((t, size.extract::<Vec<i64>>().ok()?))
}

fn int_arg(args: &Bound<'_, PyTuple>, i: usize) -> Option<i64> {
    let x = args.get_item(i).ok()?;
    if x.is_instance_of::<pyo3::types::PyBool>() || !x.is_instance_of::<pyo3::types::PyInt>() {
        return None;
    }
    x.extract::<i64>().ok()
}

/// `wrap_dim` of ops/base.py, None where it would raise.
fn wrap_dim(dim: i64, ndim: usize) -> Option<usize> {
    let n = ndim.max(1) as i64;
    if dim < -n || dim >= n {
        return None;
    }
    Some(if dim < 0 { dim + n } else { dim } as usize)
}

/// ops/shape/views.py `infer_size`, None where it would raise.
fn infer_size(shape: &[i64], numel: i64) -> Option<Vec<i64>> {
    let mut out = shape.to_vec();
    let mut infer = None;
    let mut prod = 1i64;
    for (i, &s) in shape.iter().enumerate() {
        if s == -1 {
            if infer.is_some() {
                return None;
            }
            infer = Some(i);
        } else if s < 0 {
            return None;
        } else {
            prod = prod.checked_mul(s)?;
        }
    }
    match infer {
        Some(i) => {
            if prod == 0 || numel % prod != 0 {
                return None;
            }
            out[i] = numel / prod;
        }
        None if prod != numel => return None,
        None => {}
    }
    Some(out)
}

/// ops/shape/views.py `compute_stride` (at::detail::computeStride).
fn compute_stride(oldshape: &[i64], oldstride: &[i64], newshape: &[i64]) -> Option<Vec<i64>> {
    if oldshape.is_empty() {
        return Some(vec![1; newshape.len()]);
    }
    let numel: i64 = oldshape.iter().product();
    if numel == 0 && oldshape == newshape {
        return Some(oldstride.to_vec());
    }
    let mut newstride = vec![0i64; newshape.len()];
    if numel == 0 {
        for view_d in (0..newshape.len()).rev() {
            newstride[view_d] = if view_d == newshape.len() - 1 {
                1
            } else {
                newshape[view_d + 1].max(1) * newstride[view_d + 1]
            };
        }
        return Some(newstride);
    }
    let mut view_d = newshape.len() as i64 - 1;
    let mut chunk_base_stride = *oldstride.last().unwrap();
    let mut tensor_numel = 1i64;
    let mut view_numel = 1i64;
    for tensor_d in (0..oldshape.len()).rev() {
        tensor_numel *= oldshape[tensor_d];
        if tensor_d == 0
            || (oldshape[tensor_d - 1] != 1
                && oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)
        {
            while view_d >= 0 && (view_numel < tensor_numel || newshape[view_d as usize] == 1) {
                newstride[view_d as usize] = view_numel * chunk_base_stride;
                view_numel *= newshape[view_d as usize];
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if tensor_d > 0 {
                chunk_base_stride = oldstride[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    if view_d != -1 {
        return None;
    }
    Some(newstride)
}

fn view(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    let Some((t, size)) = tensor_and_int_list(args) else {
        return Ok(None);
    };
    let (sizes, strides, offset) = {
        let me = t.borrow();
        let Some(shape) = infer_size(&size, me.numel()) else {
            return Ok(None);
        };
        let Some(strides) = compute_stride(&me.meta.sizes, &me.meta.strides, &shape) else {
            return Ok(None);
        };
        (shape, strides, me.meta.offset)
    };
    make_view(py, &t, sizes, strides, offset).map(Some)
}

fn transposed(
    py: Python<'_>,
    t: &Bound<'_, TensorBase>,
    d0: i64,
    d1: i64,
) -> PyResult<Option<PyObject>> {
    let (mut sizes, mut strides, offset) = geometry(t);
    let nd = sizes.len();
    if nd == 0 {
        return Ok(None);
    }
    let (Some(a), Some(b)) = (wrap_dim(d0, nd), wrap_dim(d1, nd)) else {
        return Ok(None);
    };
    sizes.swap(a, b);
    strides.swap(a, b);
    make_view(py, t, sizes, strides, offset).map(Some)
}

fn transpose(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    if args.len() != 3 {
        return Ok(None);
    }
    let (Some(t), Some(d0), Some(d1)) = (tensor_arg(args, 0), int_arg(args, 1), int_arg(args, 2))
    else {
        return Ok(None);
    };
    transposed(py, &t, d0, d1)
}

fn t(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    if args.len() != 1 {
        return Ok(None);
    }
    let Some(t) = tensor_arg(args, 0) else {
        return Ok(None);
    };
    let nd = t.borrow().meta.sizes.len();
    match nd {
        2 => transposed(py, &t, 0, 1),
        0 | 1 => {
            let (sizes, strides, offset) = {
                let me = t.borrow();
                (
                    me.meta.sizes.clone(),
                    me.meta.strides.clone(),
                    me.meta.offset,
                )
            };
            make_view(py, &t, sizes, strides, offset).map(Some)
        }
        _ => Ok(None),
    }
}

fn select(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    if args.len() != 3 {
        return Ok(None);
    }
    let (Some(t), Some(dim), Some(index)) =
        (tensor_arg(args, 0), int_arg(args, 1), int_arg(args, 2))
    else {
        return Ok(None);
    };
    let (mut sizes, mut strides, offset) = geometry(&t);
    let nd = sizes.len();
    if nd == 0 {
        return Ok(None);
    }
    let Some(d) = wrap_dim(dim, nd) else {
        return Ok(None);
    };
    let size = sizes[d];
    if index < -size || index >= size {
        return Ok(None);
    }
    let index = if index < 0 { index + size } else { index };
    let offset = offset + index * strides[d];
    sizes.remove(d);
    strides.remove(d);
    make_view(py, &t, sizes, strides, offset).map(Some)
}

/// ops/shape/views.py `unsqueeze`: a size-1 dim at `dim` (wrapped over ndim + 1) whose stride is
/// the next dim's extent (1 at the end), as upstream's `inferUnsqueezeGeometry`.
fn unsqueeze(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    if args.len() != 2 {
        return Ok(None);
    }
    let (Some(t), Some(dim)) = (tensor_arg(args, 0), int_arg(args, 1)) else {
        return Ok(None);
    };
    let (mut sizes, mut strides, offset) = geometry(&t);
    let nd = sizes.len();
    let Some(d) = wrap_dim(dim, nd + 1) else {
        return Ok(None);
    };
    let stride = if d >= nd { 1 } else { sizes[d] * strides[d] };
    sizes.insert(d, 1);
    strides.insert(d, stride);
    make_view(py, &t, sizes, strides, offset).map(Some)
}

/// ops/indexing/index.py `embedding` with only `(weight, indices)` given: a 2-d float32/float64
/// weight, int64 indices on its device, a non-empty result `indices.shape + [D]` filled by the
/// native `embedding` kernel (which refuses an index out of range as the Python path's launch does).
fn embedding(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    if args.len() != 2 {
        return Ok(None);
    }
    let (Some(w), Some(idx)) = (tensor_arg(args, 0), tensor_arg(args, 1)) else {
        return Ok(None);
    };
    let (sizes, dt, (device, index)) = {
        let (w, i) = (w.borrow(), idx.borrow());
        let dt = w.meta.dtype;
        if w.meta.sizes.len() != 2
            || !matches!(dt, TnDtype::Float32 | TnDtype::Float64)
            || i.meta.dtype != TnDtype::Int64
            || w.place() != i.place()
            || w.meta.sizes[1] == 0
            || i.numel() == 0
            || !native_kernel("aten::embedding", &w)
        {
            return Ok(None);
        }
        let mut sizes = i.meta.sizes.clone();
        sizes.push(w.meta.sizes[1]);
        (sizes, dt, w.place())
    };
    let out = tensor::wrap(py, TensorBase::new_empty(device, index, sizes, dt)?)?;
    let kargs = PyTuple::new(
        py,
        [
            w.into_any().unbind(),
            idx.into_any().unbind(),
            (-1i64).into_pyobject(py)?.into_any().unbind(),
            false.into_pyobject(py)?.to_owned().into_any().unbind(),
            false.into_pyobject(py)?.to_owned().into_any().unbind(),
        ],
    )?;
    crate::launch::_tn_launch(
        py,
        "embedding",
        &kargs,
        &PyTuple::new(py, [out.clone_ref(py)])?,
    )?;
    Ok(Some(out))
}

// --- matrix products ----------------------------------------------------------------------------

/// Whether `op` has a native kernel on `t`'s device.
fn native_kernel(op: &str, t: &TensorBase) -> bool {
    // complex operands take the Python step: ops/complex/arithmetic.py composes what a kernel refuses
    !crate::dtype::is_complex(t.meta.dtype)
        && matches!(
            registry::kernel(op, t.device()),
            Some(Kernel::Native { .. })
        )
}

/// The [n, k] x [k, m] -> [n, m] checks ops/linalg/products.py makes, None where it would raise (or where
/// the operands are on different devices, which it leaves to the kernel).
fn mm_shape(a: &TensorBase, b: &TensorBase) -> Option<(i64, i64)> {
    if a.meta.sizes.len() != 2
        || b.meta.sizes.len() != 2
        || a.meta.sizes[1] != b.meta.sizes[0]
        || a.meta.dtype != b.meta.dtype
        || a.place() != b.place()
    {
        return None;
    }
    Some((a.meta.sizes[0], b.meta.sizes[1]))
}

fn mm(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    if args.len() != 2 {
        return Ok(None);
    }
    let (Some(a), Some(b)) = (tensor_arg(args, 0), tensor_arg(args, 1)) else {
        return Ok(None);
    };
    let (n, m, dt, (device, index)) = {
        let (ra, rb) = (a.borrow(), b.borrow());
        let Some((n, m)) = mm_shape(&ra, &rb) else {
            return Ok(None);
        };
        if !native_kernel("aten::mm", &ra) {
            return Ok(None);
        }
        (n, m, ra.meta.dtype, ra.place())
    };
    let out = tensor::wrap(py, TensorBase::new_empty(device, index, vec![n, m], dt)?)?;
    crate::launch::_tn_launch(py, "mm", args, &PyTuple::new(py, [out.clone_ref(py)])?)?;
    Ok(Some(out))
}

/// ops/base.py `expand_to` for a bias: the tensor itself when it already has `shape`, else a
/// stride-0 view; None where it would raise.
fn expand_to(
    py: Python<'_>,
    t: &Bound<'_, TensorBase>,
    shape: &[i64],
) -> PyResult<Option<PyObject>> {
    let (sizes, strides, offset) = {
        let me = t.borrow();
        (
            me.meta.sizes.clone(),
            me.meta.strides.clone(),
            me.meta.offset,
        )
    };
    if sizes == shape {
        return Ok(Some(t.clone().into_any().unbind()));
    }
    let Some(new_strides) = expanded_strides(&sizes, &strides, shape) else {
        return Ok(None);
    };
    make_view(py, t, shape.to_vec(), new_strides, offset).map(Some)
}

fn addmm(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    if args.len() != 5 {
        return Ok(None);
    }
    let (Some(bias), Some(a), Some(b)) = (
        tensor_arg(args, 0),
        tensor_arg(args, 1),
        tensor_arg(args, 2),
    ) else {
        return Ok(None);
    };
    let (n, m, dt, place) = {
        let (ra, rb, rbias) = (a.borrow(), b.borrow(), bias.borrow());
        let Some((n, m)) = mm_shape(&ra, &rb) else {
            return Ok(None);
        };
        if rbias.place() != ra.place() || !native_kernel("aten::addmm", &ra) {
            return Ok(None);
        }
        (n, m, ra.meta.dtype, ra.place())
    };
    let Some(bias_b) = expand_to(py, &bias, &[n, m])? else {
        return Ok(None);
    };
    let out = tensor::wrap(py, TensorBase::new_empty(place.0, place.1, vec![n, m], dt)?)?;
    let kargs = PyTuple::new(
        py,
        [
            bias_b,
            a.into_any().unbind(),
            b.into_any().unbind(),
            args.get_item(3)?.unbind(),
            args.get_item(4)?.unbind(),
        ],
    )?;
    crate::launch::_tn_launch(py, "addmm", &kargs, &PyTuple::new(py, [out.clone_ref(py)])?)?;
    Ok(Some(out))
}

fn dispatch<const N: usize>(py: Python<'_>, op: &str, args: [PyObject; N]) -> PyResult<PyObject> {
    let t = PyTuple::new(py, args)?;
    crate::door::_aten_dispatch(py, &pyo3::types::PyString::intern(py, op), &t, None)
}

fn matmul(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    if args.len() != 2 {
        return Ok(None);
    }
    let (Some(a), Some(b)) = (tensor_arg(args, 0), tensor_arg(args, 1)) else {
        return Ok(None);
    };
    let sizes = a.borrow().meta.sizes.clone();
    let b_sizes = b.borrow().meta.sizes.clone();
    match (sizes.len(), b_sizes.len()) {
        (2, 2) => dispatch(py, "mm", [a.into_any().unbind(), b.into_any().unbind()]).map(Some),
        (da, 2) if da >= 3 => {
            // ops/linalg/products.py matmul: fold the batch into the rows, mm, view back
            let (k, m) = (sizes[da - 1], b_sizes[1]);
            let rows: i64 = sizes[..da - 1].iter().product();
            let flat = pyo3::types::PyList::new(py, [rows, k])?.into_any().unbind();
            let folded = dispatch(py, "reshape", [a.into_any().unbind(), flat])?;
            let out = dispatch(py, "mm", [folded, b.into_any().unbind()])?;
            let mut shape = sizes[..da - 1].to_vec();
            shape.push(m);
            let shape = pyo3::types::PyList::new(py, shape)?.into_any().unbind();
            dispatch(py, "_unsafe_view", [out, shape]).map(Some)
        }
        _ => Ok(None),
    }
}

fn linear(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    let n = args.len();
    if !(2..=3).contains(&n) {
        return Ok(None);
    }
    let (Some(input), Some(weight)) = (tensor_arg(args, 0), tensor_arg(args, 1)) else {
        return Ok(None);
    };
    let bias = if n == 3 {
        Some(args.get_item(2)?)
    } else {
        None
    }
    .filter(|b| !b.is_none());
    if bias
        .as_ref()
        .is_some_and(|b| !b.is_instance_of::<TensorBase>())
    {
        return Ok(None);
    }
    let (sizes, contiguous) = {
        let me = input.borrow();
        (
            me.meta.sizes.clone(),
            tensor::is_contiguous(&me.meta.sizes, &me.meta.strides),
        )
    };
    let one = || 1i64.into_pyobject(py).unwrap().into_any().unbind();
    let input = input.into_any().unbind();
    match (sizes.len(), bias) {
        (2, Some(bias)) => {
            let wt = dispatch(py, "t", [weight.into_any().unbind()])?;
            dispatch(py, "addmm", [bias.unbind(), input, wt, one(), one()]).map(Some)
        }
        (3, Some(bias)) if contiguous => {
            let out_features = weight.borrow().meta.sizes.first().copied();
            let Some(out_features) = out_features else {
                return Ok(None);
            };
            // the row count spelled out: with in_features == 0 a -1 is ambiguous
            let flat = pyo3::types::PyList::new(py, [sizes[0] * sizes[1], sizes[2]])?
                .into_any()
                .unbind();
            let v = dispatch(py, "view", [input, flat])?;
            let wt = dispatch(py, "t", [weight.into_any().unbind()])?;
            let out = dispatch(py, "addmm", [bias.unbind(), v, wt, one(), one()])?;
            let shape = pyo3::types::PyList::new(py, [sizes[0], sizes[1], out_features])?
                .into_any()
                .unbind();
            dispatch(py, "view", [out, shape]).map(Some)
        }
        (_, None) => {
            let wt = dispatch(py, "t", [weight.into_any().unbind()])?;
            dispatch(py, "matmul", [input, wt]).map(Some)
        }
        _ => Ok(None),
    }
}

// --- unary ----------------------------------------------------------------------------------

/// ops/elementwise/arithmetic.py `unary` on a floating tensor: same dtype out, no cast, the kernel of the
/// operator's name.
fn unary(py: Python<'_>, op: &str, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    if args.len() != 1 {
        return Ok(None);
    }
    let Some(t) = tensor_arg(args, 0) else {
        return Ok(None);
    };
    let (sizes, dt, (device, index), strides) = {
        let me = t.borrow();
        let dt = me.meta.dtype;
        if !matches!(
            dt,
            TnDtype::Float32 | TnDtype::Float64 | TnDtype::Float16 | TnDtype::BFloat16
        ) || me.numel() == 0
        {
            return Ok(None);
        }
        if !native_kernel(&format!("aten::{op}"), &me) {
            return Ok(None);
        }
        // the result's layout follows the input's (core/src/layout.rs)
        let inputs = [(me.meta.sizes.as_slice(), me.meta.strides.as_slice())];
        let strides = crate::layout::elementwise_strides(&me.meta.sizes, &inputs);
        (me.meta.sizes.clone(), dt, me.place(), strides)
    };
    let mut o = TensorBase::new_empty(device, index, sizes, dt)?;
    if let Some(st) = strides {
        o.meta.strides = st;
    }
    let out = tensor::wrap(py, o)?;
    crate::launch::_tn_launch(py, op, args, &PyTuple::new(py, [out.clone_ref(py)])?)?;
    Ok(Some(out))
}

/// ops/shape/views.py `reshape` when the new shape can view the old geometry: `view` through the door
/// (what a dispatch mode sees), with the shape as given for a contiguous input (as upstream's
/// reshape, -1 and all) and inferred otherwise; a reshape that must copy takes the Python path.
fn reshape(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    let Some((t, shape)) = tensor_and_int_list(args) else {
        return Ok(None);
    };
    let new = {
        let me = t.borrow();
        let Some(new) = infer_size(&shape, me.numel()) else {
            return Ok(None);
        };
        if crate::tensor::is_contiguous(&me.meta.sizes, &me.meta.strides) {
            shape
        } else if compute_stride(&me.meta.sizes, &me.meta.strides, &new).is_none() {
            return Ok(None);
        } else {
            new
        }
    };
    let new = pyo3::types::PyList::new(py, new)?.into_any().unbind();
    dispatch(py, "view", [t.into_any().unbind(), new]).map(Some)
}

/// ops/shape/join.py `cat` for the cases described at the top; None for the others (errors,
/// mixed dtypes or ranks, legacy 1-d empty tensors beside others, empty results).
fn cat(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    if args.is_empty() || args.len() > 2 {
        return Ok(None);
    }
    let seq = args.get_item(0)?;
    if !(seq.is_instance_of::<pyo3::types::PyList>()
        || seq.is_instance_of::<pyo3::types::PyTuple>())
    {
        return Ok(None);
    }
    let mut items = Vec::new();
    for x in seq.try_iter()? {
        match x?.downcast_into::<TensorBase>() {
            Ok(t) => items.push(t),
            Err(_) => return Ok(None),
        }
    }
    let dim = if args.len() == 2 {
        match int_arg(args, 1) {
            Some(d) => d,
            None => return Ok(None),
        }
    } else {
        0
    };
    let refs: Vec<_> = items.iter().map(|t| t.borrow()).collect();
    let Some(first) = refs.first() else {
        return Ok(None);
    };
    let (dt, place, mut size) = (first.meta.dtype, first.place(), first.meta.sizes.clone());
    if size.is_empty() {
        return Ok(None); // 0-dim tensors cannot be joined: the Python step raises
    }
    let Some(d) = wrap_dim(dim, size.len()) else {
        return Ok(None);
    };
    size[d] = 0;
    for t in &refs {
        let s = &t.meta.sizes;
        if t.meta.dtype != dt || t.place() != place || s.len() != size.len() {
            return Ok(None);
        }
        if (0..s.len()).any(|j| j != d && s[j] != size[j]) {
            return Ok(None);
        }
        size[d] += s[d];
    }
    if size.iter().product::<i64>() == 0 {
        return Ok(None);
    }
    let Some(Kernel::Native { f, user, .. }) = registry::kernel("cat", place.0) else {
        return Ok(None);
    };
    let views: Vec<_> = refs.iter().map(|t| t.abi_view()).collect();
    let out = TensorBase::new_empty(place.0, place.1, size, dt)?;
    let targs = [launch::tensor_list_arg(&views), launch::int_arg(d as i64)];
    // SAFETY: a registered native kernel; the views point into `refs` (borrowed until after the
    // call) and `out`.
    unsafe { launch::call_native(py, f, user, place, &targs, &mut [out.abi_view()])? };
    drop(refs);
    tensor::wrap(py, out).map(Some)
}

/// ops/reductions/reduce.py `sum_dim` for the cases described at the top.
fn sum_dim(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    match sum_over_dims(py, args)? {
        Some((out, _)) => tensor::wrap(py, out).map(Some),
        None => Ok(None),
    }
}

/// ops/reductions/reduce.py `mean_dim` for the cases described at the top.
fn mean_dim(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyObject>> {
    let Some((out, count)) = sum_over_dims(py, args)? else {
        return Ok(None);
    };
    let out = tensor::wrap(py, out)?;
    let count = _tn_wrapped_number(py, &count.into_pyobject(py)?.into_any())?;
    dispatch(py, "div_.Tensor", [out, count]).map(Some)
}

/// The sum kernel of `(self, dim, keepdim=False, dtype=None)` into a new tensor of the reduced
/// shape, and the number of elements each output sums; None where the Python step must run.
fn sum_over_dims(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<(TensorBase, i64)>> {
    let n = args.len();
    if !(2..=4).contains(&n) {
        return Ok(None);
    }
    let Some(a) = tensor_arg(args, 0) else {
        return Ok(None);
    };
    let keepdim = if n >= 3 {
        let k = args.get_item(2)?;
        if !k.is_instance_of::<pyo3::types::PyBool>() {
            return Ok(None);
        }
        k.extract::<bool>()?
    } else {
        false
    };
    if n == 4 && !args.get_item(3)?.is_none() {
        return Ok(None);
    }
    let dim = args.get_item(1)?;
    let (out, count) = {
        let me = a.borrow();
        let sizes = &me.meta.sizes;
        let ok_dtype = matches!(me.meta.dtype, TnDtype::Float32 | TnDtype::Float64);
        if !ok_dtype || me.wrapped_number || sizes.is_empty() || sizes.iter().product::<i64>() == 0
        {
            return Ok(None);
        }
        // norm_dims: None or [] is every dim; negatives wrap; duplicates refused (by Python)
        let mut dims = Vec::new();
        if !dim.is_none() {
            if !(dim.is_instance_of::<pyo3::types::PyList>() || dim.is_instance_of::<PyTuple>()) {
                return Ok(None);
            }
            for d in dim.try_iter()? {
                let d = d?;
                if d.is_instance_of::<pyo3::types::PyBool>()
                    || !d.is_instance_of::<pyo3::types::PyInt>()
                {
                    return Ok(None);
                }
                let Some(w) = d
                    .extract::<i64>()
                    .ok()
                    .and_then(|d| wrap_dim(d, sizes.len()))
                else {
                    return Ok(None);
                };
                if dims.contains(&(w as i64)) {
                    return Ok(None);
                }
                dims.push(w as i64);
            }
        }
        if dims.is_empty() {
            dims = (0..sizes.len() as i64).collect();
        }
        dims.sort_unstable();
        let reduced: Vec<i64> = (0..sizes.len())
            .filter_map(|i| match (dims.contains(&(i as i64)), keepdim) {
                (true, true) => Some(1),
                (true, false) => None,
                (false, _) => Some(sizes[i]),
            })
            .collect();
        let count: i64 = dims.iter().map(|&d| sizes[d as usize]).product();
        let place = me.place();
        let Some(Kernel::Native { f, user, .. }) = registry::kernel("sum.dim_IntList", place.0)
        else {
            return Ok(None);
        };
        let out = TensorBase::new_empty(place.0, place.1, reduced, me.meta.dtype)?;
        let targs = [
            launch::tensor_arg(me.abi_view()),
            launch::int_list_arg(&dims),
            launch::bool_arg(keepdim),
            launch::none_arg(),
        ];
        // SAFETY: a registered native kernel; the views point into `me` (borrowed until after
        // the call), `out` and `dims`.
        unsafe { launch::call_native(py, f, user, place, &targs, &mut [out.abi_view()])? };
        (out, count)
    };
    Ok(Some((out, count)))
}
