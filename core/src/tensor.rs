//! `torch._C.TensorBase`: sizes, strides, storage offset, dtype, device, version counter and
//! autograd slots. Device-independent; the bytes live in a `Storage`.
//!
//! Upstream-named members that are plain metadata are defined here; members with Python
//! semantics (`__getitem__`, `to`, `tolist`, ...) are attached by `torchnative_core` at import.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};
use torchnative_abi::{TnDtype, TnTensor};

use crate::registry::{self, DeviceKey};
use crate::storage::Storage;

/// Weak storage references handed to Python (torch.multiprocessing's StorageWeakRef, which
/// torch.fx and FakeTensorMode use to tell aliasing tensors apart): id -> (weak, holders).
type WeakStorages = std::collections::HashMap<usize, (std::sync::Weak<Storage>, usize)>;
static WEAK_STORAGES: std::sync::LazyLock<std::sync::Mutex<WeakStorages>> =
    std::sync::LazyLock::new(|| std::sync::Mutex::new(WeakStorages::new()));

/// Whether the storage behind a weak reference has no tensor left.
#[pyfunction]
pub fn _tn_storage_expired(id: usize) -> bool {
    let refs = WEAK_STORAGES.lock().unwrap_or_else(|e| e.into_inner());
    refs.get(&id).is_none_or(|(w, _)| w.strong_count() == 0)
}

/// Drops one weak reference (`UntypedStorage._free_weak_ref`).
#[pyfunction]
pub fn _tn_storage_free_weak_ref(id: usize) {
    let mut refs = WEAK_STORAGES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(entry) = refs.get_mut(&id) {
        entry.1 -= 1;
        if entry.1 == 0 {
            refs.remove(&id);
        }
    }
}

#[derive(Clone)]
pub struct Meta {
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
    pub offset: i64,
    pub dtype: TnDtype,
}

pub fn contiguous_strides(sizes: &[i64]) -> Vec<i64> {
    let mut strides = vec![0i64; sizes.len()];
    let mut acc = 1i64;
    for i in (0..sizes.len()).rev() {
        strides[i] = acc;
        // Wrapping: only views (no storage behind the product) reach sizes this large.
        acc = acc.wrapping_mul(sizes[i].max(1));
    }
    strides
}

/// Bytes a contiguous tensor of `sizes` needs past `offset` elements, with upstream's refusals
/// (negative dimension, then `computeStorageNbytesContiguous`'s overflow) instead of a wrapped
/// product that would allocate too little.
pub fn contiguous_nbytes(sizes: &[i64], offset: i64, itemsize: usize) -> PyResult<usize> {
    if let Some(s) = sizes.iter().find(|&&s| s < 0) {
        return Err(PyRuntimeError::new_err(format!(
            "Trying to create tensor with negative dimension {s}: {sizes:?}"
        )));
    }
    let overflow = || {
        PyRuntimeError::new_err(format!(
            "Storage size calculation overflowed with sizes={sizes:?}"
        ))
    };
    let mut numel: i64 = 1;
    for &s in sizes {
        numel = numel.checked_mul(s).ok_or_else(overflow)?;
    }
    let n = numel
        .checked_add(offset.max(0))
        .and_then(|n| n.checked_mul(itemsize as i64))
        .ok_or_else(overflow)?;
    Ok(n as usize)
}

pub fn is_contiguous(sizes: &[i64], strides: &[i64]) -> bool {
    let mut expected = 1i64;
    for i in (0..sizes.len()).rev() {
        if sizes[i] == 1 {
            continue;
        }
        if sizes[i] == 0 {
            return true;
        }
        if strides[i] != expected {
            return false;
        }
        expected *= sizes[i];
    }
    true
}

// No `dict`: PyO3 0.25 clears an instance dict at dealloc but never releases it (64 bytes leaked
// per tensor whose __dict__ was used). torch.Tensor, the Python subclass every tensor is an
// instance of, gets its own __dict__ slot, which CPython frees.
#[pyclass(subclass, module = "torch._C", name = "TensorBase", weakref)]
pub struct TensorBase {
    pub storage: Arc<Storage>,
    pub meta: Meta,
    pub version: Arc<AtomicI64>,
    pub requires_grad: bool,
    /// Set on tensors made from Python numbers (type promotion treats them specially).
    pub wrapped_number: bool,
    /// Made under inference mode (upstream's inference tensors; views inherit it).
    pub inference: bool,
    /// The tensor this one is a view of, for `._base`.
    pub base: Option<Py<PyAny>>,
    /// A vmap logical tensor (functorch/batched.py): its geometry is sample 0 of its batch, so
    /// no kernel or host reader may take it as data; the door's vmap step unwraps it first.
    pub batched: bool,
    /// A functionalization wrapper (functionalize/tensor.py): its data lives in the value it
    /// wraps, so the door's functionalize step takes every call that has one as an argument.
    pub functional: bool,
    /// The tensor's history, `(grad_fn, output_nr)`, once autograd recorded it (None: a leaf or
    /// a tensor without history). Held here rather than in the Python subclass's `__dict__`:
    /// a dict and a tuple per recorded output were objects the collector counted (autograd/graph.py).
    pub edge: Option<(Option<PyObject>, i64)>,
}

/// A kernel launch or a view made directly (not through the door) of a vmap logical tensor
/// would take sample 0 of its batch for the whole: refused, and the vmap step
/// (functorch/rules.py `default`) falls back to a per-sample loop on this message.
pub fn batched_kernel_error() -> PyErr {
    PyRuntimeError::new_err(
        "vmap: internal: a batched tensor reached a kernel; it must be unwrapped first",
    )
}

/// A host read (`.item()`, `.tolist()`, `bool()`) of a vmap logical tensor: upstream's message.
pub fn batched_read_error() -> PyErr {
    PyRuntimeError::new_err(
        "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling \
         .item() on a Tensor, please try to rewrite what you're doing with other operations.",
    )
}

impl TensorBase {
    pub fn new_empty(
        device: DeviceKey,
        device_index: i32,
        sizes: Vec<i64>,
        dtype: TnDtype,
    ) -> PyResult<TensorBase> {
        let nbytes = contiguous_nbytes(&sizes, 0, dtype.itemsize())?;
        let storage = Storage::new(device, device_index, nbytes)?;
        let strides = contiguous_strides(&sizes);
        Ok(TensorBase {
            storage: Arc::new(storage),
            meta: Meta {
                sizes,
                strides,
                offset: 0,
                dtype,
            },
            version: Arc::new(AtomicI64::new(0)),
            requires_grad: false,
            wrapped_number: false,
            inference: false,
            base: None,
            batched: false,
            functional: false,
            edge: None,
        })
    }

    /// A view sharing storage and version counter.
    pub fn view_of(&self, meta: Meta, base: Option<Py<PyAny>>) -> TensorBase {
        TensorBase {
            storage: self.storage.clone(),
            meta,
            version: self.version.clone(),
            requires_grad: false,
            wrapped_number: false,
            inference: self.inference,
            base,
            batched: false,
            functional: false,
            edge: None,
        }
    }

    pub fn numel(&self) -> i64 {
        self.meta.sizes.iter().product()
    }

    pub fn device(&self) -> DeviceKey {
        self.storage.device
    }

    /// Device key and index of the storage.
    pub fn place(&self) -> crate::registry::Place {
        (self.storage.device, self.storage.device_index)
    }

    pub fn data_ptr_raw(&self) -> *mut u8 {
        let p = self.storage.ptr();
        if p.is_null() {
            return p;
        }
        unsafe { p.add(self.meta.offset as usize * self.meta.dtype.itemsize()) }
    }

    /// The ABI view of this tensor. The returned struct borrows `self.meta`.
    pub fn abi_view(&self) -> TnTensor {
        TnTensor {
            data: self.data_ptr_raw() as *mut _,
            dtype: self.meta.dtype as i32,
            ndim: self.meta.sizes.len() as i32,
            sizes: self.meta.sizes.as_ptr(),
            strides: self.meta.strides.as_ptr(),
            device_index: self.storage.device_index,
        }
    }

    pub fn bump_version(&self) {
        self.version.fetch_add(1, Ordering::Relaxed);
    }
}

/// Creates a Python object of class `cls` (a subclass of TensorBase, normally `torch.Tensor`)
/// holding `t`, as `TensorBase.__new__(cls)` would, without the Python call: the instance is
/// allocated by `cls`'s own `tp_alloc`, so a Python subclass gets its `__dict__` and weakref
/// slots (measured: a third of the cost of wrapping an operator's output went to the call).
pub fn wrap_as(py: Python<'_>, cls: &Bound<'_, PyType>, t: TensorBase) -> PyResult<PyObject> {
    if !cls.is_subclass_of::<TensorBase>()? {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{} is not a subclass of torch._C.TensorBase",
            cls.name()?
        )));
    }
    new_object(py, cls, t)
}

fn new_object(py: Python<'_>, cls: &Bound<'_, PyType>, t: TensorBase) -> PyResult<PyObject> {
    use pyo3::impl_::pyclass_init::PyObjectInit;
    // SAFETY: `cls` is TensorBase or a subclass of it (checked by the callers).
    let ptr = unsafe { pyo3::PyClassInitializer::from(t).into_new_object(py, cls.as_type_ptr())? };
    // SAFETY: `into_new_object` returned a new, owned reference.
    Ok(unsafe { PyObject::from_owned_ptr(py, ptr) })
}

pub fn wrap(py: Python<'_>, t: TensorBase) -> PyResult<PyObject> {
    // `tensor_class` is TensorBase or the subclass `_tn_set_tensor_class` was given
    // (torch.Tensor), which that function checks.
    let cls = crate::tensor_class(py)?;
    new_object(py, cls.bind(py), t)
}

fn dim_index(dim: i64, ndim: usize) -> PyResult<usize> {
    let n = ndim.max(1) as i64;
    if dim < -n || dim >= n {
        return Err(PyIndexError::new_err(format!(
            "Dimension out of range (expected to be in range of [{}, {}], but got {})",
            -n,
            n - 1,
            dim
        )));
    }
    Ok(if dim < 0 {
        (dim + n) as usize
    } else {
        dim as usize
    })
}

#[pymethods]
impl TensorBase {
    /// The history edge `(grad_fn, output_nr)`, or None where none was recorded.
    #[getter]
    fn _tn_edge(&self, py: Python<'_>) -> PyResult<Option<Py<PyTuple>>> {
        self.edge
            .as_ref()
            .map(|(n, nr)| {
                let n = n.as_ref().map_or_else(|| py.None(), |n| n.clone_ref(py));
                Ok(PyTuple::new(py, [n, nr.into_pyobject(py)?.into_any().unbind()])?.unbind())
            })
            .transpose()
    }

    #[getter]
    fn _tn_grad_fn(&self, py: Python<'_>) -> PyObject {
        match &self.edge {
            Some((Some(n), _)) => n.clone_ref(py),
            _ => py.None(),
        }
    }

    #[getter]
    fn _tn_output_nr(&self) -> i64 {
        self.edge.as_ref().map_or(0, |(_, nr)| *nr)
    }

    /// Records the tensor's history (`graph.set_history`).
    fn _tn_set_edge(&mut self, py: Python<'_>, node: PyObject, nr: i64) {
        self.edge = Some(((!node.is_none(py)).then_some(node), nr));
    }

    fn _tn_clear_edge(&mut self) {
        self.edge = None;
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Some((Some(n), _)) = &self.edge {
            visit.call(n)?;
        }
        if let Some(b) = &self.base {
            visit.call(b)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.edge = None;
    }

    #[new]
    #[pyo3(signature = (*args, **kwargs))]
    fn py_new(
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<TensorBase> {
        // The legacy constructor (`torch.Tensor(3)`, `torch.Tensor([1, 2])`, `torch.Tensor(t)`):
        // torchnative_core.legacy_ctor makes the tensor through the door; the new object shares its
        // storage, as upstream's legacy_tensor_ctor does.
        let made = py
            .import("torchnative_core.legacy_ctor")?
            .getattr("tensor_new")?
            .call1((args, kwargs))?;
        let t = made.downcast::<TensorBase>()?.borrow();
        Ok(TensorBase {
            storage: t.storage.clone(),
            meta: t.meta.clone(),
            version: t.version.clone(),
            requires_grad: false,
            wrapped_number: false,
            inference: t.inference,
            base: None,
            batched: false,
            functional: false,
            edge: None,
        })
    }

    // --- metadata (upstream names) -----------------------------------------------------------

    fn dim(&self) -> usize {
        self.meta.sizes.len()
    }

    #[getter]
    fn ndim(&self) -> usize {
        self.meta.sizes.len()
    }

    fn numel_(&self) -> i64 {
        self.numel()
    }

    fn nelement(&self) -> i64 {
        self.numel()
    }

    fn element_size(&self) -> usize {
        self.meta.dtype.itemsize()
    }

    fn storage_offset(&self) -> i64 {
        self.meta.offset
    }

    fn data_ptr(&self) -> usize {
        self.data_ptr_raw() as usize
    }

    fn _is_view(&self) -> bool {
        self.base.is_some()
    }

    /// Makes this tensor a view of `base` (of `base`'s own base when it is a view), sharing its
    /// version counter: what upstream's ADInplaceOrView key does to a view operator's result,
    /// whoever computed it (a dispatch mode or a subclass).
    fn _tn_mark_view_of(&mut self, py: Python<'_>, base: &Bound<'_, TensorBase>) {
        let b = base.borrow();
        self.base = Some(
            b.base
                .as_ref()
                .map(|x| x.clone_ref(py))
                .unwrap_or_else(|| base.clone().into_any().unbind()),
        );
        self.version = b.version.clone();
    }

    #[getter]
    fn _base(&self, py: Python<'_>) -> Option<PyObject> {
        self.base.as_ref().map(|b| b.clone_ref(py))
    }

    #[getter]
    fn _version(&self) -> PyResult<i64> {
        if self.inference {
            return Err(PyRuntimeError::new_err(
                "Inference tensors do not track version counter.",
            ));
        }
        Ok(self.version.load(Ordering::Relaxed))
    }

    #[getter]
    fn _tn_requires_grad(&self) -> bool {
        self.requires_grad
    }

    #[setter(_tn_requires_grad)]
    fn set_tn_requires_grad(&mut self, v: bool) {
        self.requires_grad = v;
    }

    #[getter]
    fn _tn_batched(&self) -> bool {
        self.batched
    }

    #[setter(_tn_batched)]
    fn set_tn_batched(&mut self, v: bool) {
        self.batched = v;
    }

    #[getter]
    fn _tn_functional(&self) -> bool {
        self.functional
    }

    /// Marking a tensor functional also turns the door's functionalize step on (for good: from
    /// then on every call checks its arguments' flag).
    #[setter(_tn_functional)]
    fn set_tn_functional(&mut self, v: bool) {
        if v {
            crate::door::functional_exists();
        }
        self.functional = v;
    }

    fn _tn_bump_version(&self) {
        self.bump_version()
    }

    #[getter]
    fn _tn_sizes(&self) -> Vec<i64> {
        self.meta.sizes.clone()
    }

    #[getter]
    fn _tn_strides(&self) -> Vec<i64> {
        self.meta.strides.clone()
    }

    #[getter]
    fn _tn_dtype_code(&self) -> i32 {
        self.meta.dtype as i32
    }

    #[getter]
    fn _tn_device_key(&self) -> String {
        registry::device_name(self.storage.device)
    }

    #[getter]
    fn _tn_device_index(&self) -> i32 {
        self.storage.device_index
    }

    #[getter]
    fn _tn_wrapped_number(&self) -> bool {
        self.wrapped_number
    }

    #[setter(_tn_wrapped_number)]
    fn set_tn_wrapped_number(&mut self, v: bool) {
        self.wrapped_number = v;
    }

    #[getter]
    fn _tn_storage_nbytes(&self) -> usize {
        self.storage.nbytes()
    }

    #[getter]
    fn _tn_storage_id(&self) -> usize {
        Arc::as_ptr(&self.storage) as usize
    }

    /// A weak reference to this tensor's storage (`UntypedStorage._weak_ref`): its id, which
    /// stays unique while any weak reference is held (the Arc's allocation outlives its last
    /// strong owner until the weak ones go).
    fn _tn_storage_weak_ref(&self) -> usize {
        let id = Arc::as_ptr(&self.storage) as usize;
        let mut refs = WEAK_STORAGES.lock().unwrap_or_else(|e| e.into_inner());
        refs.entry(id)
            .or_insert_with(|| (Arc::downgrade(&self.storage), 0))
            .1 += 1;
        id
    }

    /// The one element of a single-element CPU tensor as a Python number (`item()`'s plain
    /// read), or None where `binding/tensor_methods.host_values` must do it (other devices,
    /// half, bfloat16 and complex dtypes, batched tensors, more or fewer elements).
    fn _tn_read_one(&self, py: Python<'_>) -> PyResult<PyObject> {
        if self.batched
            || self.device() != crate::registry::CPU
            || self.meta.sizes.iter().product::<i64>() != 1
        {
            return Ok(py.None());
        }
        let p = self.data_ptr_raw();
        if p.is_null() {
            return Ok(py.None());
        }
        // SAFETY: a CPU tensor with one element holds a value of its dtype at its data pointer.
        let v = unsafe {
            match self.meta.dtype {
                TnDtype::Float32 => (std::ptr::read_unaligned(p as *const f32) as f64)
                    .into_pyobject(py)?
                    .into_any(),
                TnDtype::Float64 => std::ptr::read_unaligned(p as *const f64)
                    .into_pyobject(py)?
                    .into_any(),
                TnDtype::Int64 => std::ptr::read_unaligned(p as *const i64)
                    .into_pyobject(py)?
                    .into_any(),
                TnDtype::Int32 => std::ptr::read_unaligned(p as *const i32)
                    .into_pyobject(py)?
                    .into_any(),
                TnDtype::Int16 => std::ptr::read_unaligned(p as *const i16)
                    .into_pyobject(py)?
                    .into_any(),
                TnDtype::Int8 => (*(p as *const i8)).into_pyobject(py)?.into_any(),
                TnDtype::UInt8 => (*p).into_pyobject(py)?.into_any(),
                TnDtype::Bool => pyo3::types::PyBool::new(py, *p != 0).to_owned().into_any(),
                _ => return Ok(py.None()),
            }
        };
        Ok(v.unbind())
    }

    #[getter]
    fn _tn_inference(&self) -> bool {
        self.inference
    }

    /// How many tensor objects share this storage (autograd steals a gradient buffer only when
    /// nothing else can see it, as upstream's AccumulateGrad checks use_count).
    #[getter]
    fn _tn_storage_use_count(&self) -> usize {
        Arc::strong_count(&self.storage)
    }

    fn _tn_is_contiguous(&self) -> bool {
        is_contiguous(&self.meta.sizes, &self.meta.strides)
    }

    #[getter]
    fn _tn_non_overlapping_and_dense(&self) -> bool {
        crate::layout::is_non_overlapping_and_dense(&self.meta.sizes, &self.meta.strides)
    }

    /// This gradient, for AccumulateGrad to keep as `variable.grad` without a copy, or None when
    /// it must be copied: upstream steals a gradient nothing else can see that obeys the
    /// gradient layout contract (`utils::obeys_layout_contract`: the variable's strides where
    /// the variable is non-overlapping and dense, else contiguous). A view whose base only it
    /// holds (a formula's `.t()` of a fresh product) is stolen as a plain alias, as upstream's
    /// `new_grad.detach()` does. The caller checks that no Python reference but its own remains.
    fn _tn_steal_as_grad_of(
        slf: &Bound<'_, Self>,
        variable: &Bound<'_, TensorBase>,
    ) -> PyResult<Option<PyObject>> {
        let py = slf.py();
        let me = slf.borrow();
        let var = variable.borrow();
        if me.batched
            || me.functional
            || me.meta.sizes != var.meta.sizes
            || me.device() != var.device()
        {
            return Ok(None);
        }
        let obeys =
            if crate::layout::is_non_overlapping_and_dense(&var.meta.sizes, &var.meta.strides) {
                me.meta.sizes.iter().enumerate().all(|(i, &n)| {
                    if n != 1 {
                        me.meta.strides[i] == var.meta.strides[i]
                    } else {
                        me.meta.strides[i] != 0
                    }
                })
            } else {
                is_contiguous(&me.meta.sizes, &me.meta.strides)
            };
        if !obeys {
            return Ok(None);
        }
        match &me.base {
            None if Arc::strong_count(&me.storage) == 1 => {
                Ok(Some(slf.clone().into_any().unbind()))
            }
            Some(b) if Arc::strong_count(&me.storage) == 2 && b.get_refcnt(py) == 1 => {
                let t = me.view_of(me.meta.clone(), None);
                drop(me);
                Ok(Some(wrap(py, t)?))
            }
            _ => Ok(None),
        }
    }

    fn _tn_size(&self, dim: i64) -> PyResult<i64> {
        Ok(self.meta.sizes
            [dim_index(dim, self.meta.sizes.len())?.min(self.meta.sizes.len().saturating_sub(1))])
    }

    /// A new view of the same storage with the given geometry (no checks beyond bounds):
    /// the primitive every view operator is built on.
    #[pyo3(signature = (sizes, strides, offset, base=None))]
    fn _tn_as_strided(
        slf: &Bound<'_, Self>,
        sizes: Vec<i64>,
        strides: Vec<i64>,
        offset: i64,
        base: Option<PyObject>,
    ) -> PyResult<PyObject> {
        if slf.borrow().batched {
            return Err(batched_kernel_error());
        }
        Self::_tn_batch_view(slf, sizes, strides, offset, base)
    }

    /// `_tn_as_strided` that also takes a batched (vmap) tensor: functorch/batched.py builds
    /// logical tensors over their values with it.
    #[pyo3(signature = (sizes, strides, offset, base=None))]
    fn _tn_batch_view(
        slf: &Bound<'_, Self>,
        sizes: Vec<i64>,
        strides: Vec<i64>,
        offset: i64,
        base: Option<PyObject>,
    ) -> PyResult<PyObject> {
        let py = slf.py();
        let me = slf.borrow();
        check_in_bounds(&me, &sizes, &strides, offset)?;
        let base = base
            .or_else(|| me.base.as_ref().map(|b| b.clone_ref(py)))
            .or_else(|| Some(slf.clone().into_any().unbind()));
        let t = me.view_of(
            Meta {
                sizes,
                strides,
                offset,
                dtype: me.meta.dtype,
            },
            base,
        );
        drop(me);
        wrap(py, t)
    }

    /// Re-points this tensor at new geometry in place (`as_strided_`, `resize_`, `t_`, `squeeze_`).
    fn _tn_set_geometry(
        &mut self,
        sizes: Vec<i64>,
        strides: Vec<i64>,
        offset: i64,
    ) -> PyResult<()> {
        check_in_bounds(self, &sizes, &strides, offset)?;
        self.meta.sizes = sizes;
        self.meta.strides = strides;
        self.meta.offset = offset;
        Ok(())
    }

    /// `resize_`: grows storage if needed, then sets contiguous geometry.
    fn _tn_resize(&mut self, sizes: Vec<i64>) -> PyResult<()> {
        let need = contiguous_nbytes(&sizes, self.meta.offset, self.meta.dtype.itemsize())?;
        self.storage.grow(need)?;
        self.meta.strides = contiguous_strides(&sizes);
        self.meta.sizes = sizes;
        Ok(())
    }

    /// Makes this tensor share `other`'s storage with the given geometry (`set_`).
    fn _tn_set_storage_from(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, TensorBase>,
        sizes: Vec<i64>,
        strides: Vec<i64>,
        offset: i64,
    ) {
        // `other` may be `slf` itself (`t.set_(t)`, as torch.nn.utils.parametrize does): its
        // borrow ends before `slf` is borrowed mutably.
        let (storage, dtype) = {
            let o = other.borrow();
            (o.storage.clone(), o.meta.dtype)
        };
        let mut me = slf.borrow_mut();
        me.storage = storage;
        me.meta.sizes = sizes;
        me.meta.strides = strides;
        me.meta.offset = offset;
        me.meta.dtype = dtype;
    }

    /// A view with another dtype over the same bytes (`view(dtype)`), geometry pre-computed.
    fn _tn_reinterpret(
        slf: &Bound<'_, Self>,
        dtype: i32,
        sizes: Vec<i64>,
        strides: Vec<i64>,
        offset: i64,
    ) -> PyResult<PyObject> {
        if slf.borrow().batched {
            return Err(batched_kernel_error());
        }
        let py = slf.py();
        let me = slf.borrow();
        let dtype =
            TnDtype::from_code(dtype).ok_or_else(|| PyTypeError::new_err("bad dtype code"))?;
        let t = me.view_of(
            Meta {
                sizes,
                strides,
                offset,
                dtype,
            },
            Some(slf.clone().into_any().unbind()),
        );
        drop(me);
        wrap(py, t)
    }

    /// A fresh tensor object sharing storage, geometry and version counter (`detach`, `alias`).
    /// `view=False`: no `_base` (upstream's `detach` is not a view, even of a view).
    #[pyo3(signature = (cls=None, view=true))]
    fn _tn_alias(
        slf: &Bound<'_, Self>,
        cls: Option<Bound<'_, PyType>>,
        view: bool,
    ) -> PyResult<PyObject> {
        if slf.borrow().batched {
            return Err(batched_kernel_error());
        }
        let py = slf.py();
        let me = slf.borrow();
        let base = if view {
            me.base.as_ref().map(|b| b.clone_ref(py))
        } else {
            None
        };
        let t = me.view_of(me.meta.clone(), base);
        drop(me);
        match cls {
            Some(c) => wrap_as(py, &c, t),
            None => wrap(py, t),
        }
    }

    /// `tensor.data`: the same storage and geometry under a new version counter, as upstream's
    /// variable_data() (in-place changes through it do not invalidate saved tensors).
    fn _tn_variable_data(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let py = slf.py();
        let me = slf.borrow();
        let mut t = me.view_of(me.meta.clone(), None);
        t.version = Arc::new(AtomicI64::new(0));
        drop(me);
        wrap(py, t)
    }

    /// Raw bytes of the storage this tensor's elements live in, for host-side readers
    /// (`tolist`, `item`, `numpy`). Only for CPU tensors; returns (address, nbytes).
    fn _tn_host_span(&self) -> PyResult<(usize, usize)> {
        if self.batched {
            return Err(batched_read_error());
        }
        if Some(self.storage.device) != registry::lookup_device("cpu") {
            return Err(PyRuntimeError::new_err("_tn_host_span on a non-CPU tensor"));
        }
        Ok((self.storage.ptr() as usize, self.storage.nbytes()))
    }
}

fn check_in_bounds(t: &TensorBase, sizes: &[i64], strides: &[i64], offset: i64) -> PyResult<()> {
    if sizes.len() != strides.len() {
        return Err(PyRuntimeError::new_err(format!(
            "mismatch in length of strides and shape ({} vs {})",
            strides.len(),
            sizes.len()
        )));
    }
    if let Some(s) = sizes.iter().find(|&&s| s < 0) {
        return Err(PyRuntimeError::new_err(format!(
            "Trying to create tensor with negative dimension {s}: {sizes:?}"
        )));
    }
    if offset < 0 {
        return Err(PyRuntimeError::new_err(format!(
            "Tensor: invalid storage offset {offset}"
        )));
    }
    if sizes.contains(&0) {
        return Ok(());
    }
    // In i128: sizes and strides near 2**63 must not wrap into a small, passing extent.
    let mut max = offset as i128;
    for (s, st) in sizes.iter().zip(strides) {
        if *st < 0 {
            return Err(PyRuntimeError::new_err(
                "as_strided: Negative strides are not supported at the moment",
            ));
        }
        max += (*s as i128 - 1) * *st as i128;
    }
    let need = (max + 1) * t.meta.dtype.itemsize() as i128;
    if need > i64::MAX as i128 {
        return Err(PyRuntimeError::new_err(format!(
            "Storage size calculation overflowed with sizes={sizes:?} and strides={strides:?}"
        )));
    }
    // Upstream's safe_compute_numel when a view's sizes are set (`expand(2**62, 3)`).
    if sizes
        .iter()
        .try_fold(1i64, |n, &s| n.checked_mul(s))
        .is_none()
    {
        return Err(PyRuntimeError::new_err(
            "numel: integer multiplication overflow",
        ));
    }
    if need > t.storage.nbytes() as i128 {
        return Err(PyRuntimeError::new_err(format!(
            "setStorage: sizes {:?}, strides {:?}, storage offset {}, and itemsize {} requiring a storage size of {} are out of bounds for storage of size {}",
            sizes,
            strides,
            offset,
            t.meta.dtype.itemsize(),
            need,
            t.storage.nbytes()
        )));
    }
    Ok(())
}
