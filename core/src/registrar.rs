//! The C registrar handed to backend plugins inside a PyCapsule.

use std::ffi::{c_char, c_void, CStr, CString};

use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use torchnative_abi::{TnAllocator, TnKernelFn, TnRegistrar, ABI_VERSION, REGISTRAR_CAPSULE_NAME};

use crate::registry::{registry, Allocator, Kernel};

/// Per-plugin context behind `TnRegistrar::core`.
struct PluginCtx {
    name: String,
    _name_c: CString,
    /// The device keys the plugin's descriptor declared; None allows any (tests, old callers).
    device_keys: Option<Vec<String>>,
}

/// Return code of a kernel registration for an operator overload the core does not know.
const UNKNOWN_OP: i32 = 2;
/// Return code of a registration for a device key the plugin did not declare.
const UNDECLARED_DEVICE: i32 = 3;

/// `aten::add.Tensor` for `add.Tensor` or `aten::add.Tensor`; other namespaces unchanged.
fn qualified(op: &str) -> String {
    if op.contains("::") {
        op.to_string()
    } else {
        format!("aten::{op}")
    }
}

impl PluginCtx {
    fn declared(&self, device: &str) -> bool {
        match &self.device_keys {
            None => true,
            Some(keys) => keys.iter().any(|k| k == device),
        }
    }
}

unsafe fn cstr<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        None
    } else {
        CStr::from_ptr(p).to_str().ok()
    }
}

unsafe extern "C" fn register_kernel(
    core: *mut c_void,
    op: *const c_char,
    device: *const c_char,
    kernel: TnKernelFn,
    user: *mut c_void,
) -> i32 {
    let ctx = &*(core as *const PluginCtx);
    let (Some(op), Some(device)) = (cstr(op), cstr(device)) else {
        return 1;
    };
    if !ctx.declared(device) {
        return UNDECLARED_DEVICE;
    }
    let mut r = registry().write().unwrap();
    let op = qualified(op);
    if !r.knows_op(&op) {
        return UNKNOWN_OP;
    }
    let key = r.device_key(device);
    r.insert_kernel(
        op,
        key,
        Kernel::Native {
            f: kernel,
            user,
            plugin: ctx.name.as_str().into(),
        },
    );
    let devs = r.plugins.entry(ctx.name.clone()).or_default();
    if !devs.iter().any(|d| d == device) {
        devs.push(device.to_string());
    }
    0
}

unsafe extern "C" fn register_allocator(
    core: *mut c_void,
    device: *const c_char,
    alloc: *const TnAllocator,
) -> i32 {
    register_allocator_at(core, device, 0, alloc)
}

/// ABI 1.1: the allocator of one device index (`mydev:1`); `register_allocator` is index 0.
unsafe extern "C" fn register_allocator_at(
    core: *mut c_void,
    device: *const c_char,
    index: i32,
    alloc: *const TnAllocator,
) -> i32 {
    let ctx = &*(core as *const PluginCtx);
    let Some(device) = cstr(device) else { return 1 };
    if !ctx.declared(device) {
        return UNDECLARED_DEVICE;
    }
    if alloc.is_null() || ((*alloc).struct_size as usize) < std::mem::size_of::<TnAllocator>() {
        return 2;
    }
    if index < 0 {
        return 4;
    }
    let mut r = registry().write().unwrap();
    let key = r.device_key(device);
    r.insert_allocator((key, index), Allocator(std::ptr::read(alloc)), &ctx.name);
    let devs = r.plugins.entry(ctx.name.clone()).or_default();
    if !devs.iter().any(|d| d == device) {
        devs.push(device.to_string());
    }
    0
}

/// A registrar for plugin `name`, in a capsule the plugin's `register(capsule)` reads. With
/// `device_keys`, registrations for any other key are refused (return code 3).
/// `abi_version` is overridable only so tests can hand a plugin a mismatched version.
#[pyfunction]
#[pyo3(signature = (name, abi_version=None, device_keys=None))]
pub fn _tn_make_registrar(
    py: Python<'_>,
    name: &str,
    abi_version: Option<u32>,
    device_keys: Option<Vec<String>>,
) -> PyResult<Py<PyCapsule>> {
    let name_c = CString::new(name)?;
    let plugin_ptr = name_c.as_ptr();
    // Leaked on purpose: kernels registered through it may refer to the plugin for the whole
    // process lifetime, and there is one per plugin.
    let ctx = Box::leak(Box::new(PluginCtx {
        name: name.to_string(),
        _name_c: name_c,
        device_keys,
    }));
    let reg = TnRegistrar {
        abi_version: abi_version.unwrap_or(ABI_VERSION),
        struct_size: std::mem::size_of::<TnRegistrar>() as u32,
        core: ctx as *mut PluginCtx as *mut c_void,
        plugin: plugin_ptr,
        register_kernel,
        register_allocator,
        register_allocator_at,
    };
    let cap_name = CString::new(REGISTRAR_CAPSULE_NAME).unwrap();
    Ok(PyCapsule::new(py, RegistrarBox(reg), Some(cap_name))?.unbind())
}

/// The capsule payload: `PyCapsule_GetPointer` yields a pointer to this, whose first (and only)
/// field is the `TnRegistrar`, so backends read it as `*const TnRegistrar`.
#[repr(transparent)]
struct RegistrarBox(TnRegistrar);
unsafe impl Send for RegistrarBox {}

/// Registers a Python callable as the kernel of `op` on `device`: it is called as
/// `fn(args, outs)` with the schema-ordered arguments and the pre-allocated outputs.
/// ValueError for an operator overload the core does not know.
#[pyfunction]
pub fn _tn_register_python_kernel(
    plugin: &str,
    op: &str,
    device: &str,
    f: Py<PyAny>,
) -> PyResult<()> {
    let mut r = registry().write().unwrap();
    let op = qualified(op);
    if !r.knows_op(&op) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "plugin '{plugin}' registered a kernel for {op}, which is no operator overload the core knows"
        )));
    }
    let key = r.device_key(device);
    r.insert_kernel(
        op,
        key,
        Kernel::Python {
            f: std::sync::Arc::new(f),
            plugin: plugin.into(),
        },
    );
    let devs = r.plugins.entry(plugin.to_string()).or_default();
    if !devs.iter().any(|d| d == device) {
        devs.push(device.to_string());
    }
    Ok(())
}

/// Sets the operator overloads kernels may be registered for (the Python half's schema table).
#[pyfunction]
pub fn _tn_set_known_ops(ops: Vec<String>) {
    registry().write().unwrap().known_ops = Some(ops.into_iter().collect());
}

/// A Python allocator object behind a `TnAllocator`: `user` points at a leaked `Py<PyAny>` whose
/// methods `alloc(nbytes, align) -> int address`, `free(address, nbytes)`,
/// `copy_from_host(dst, src, nbytes)` and `copy_to_host(dst, src, nbytes)` do the work. An
/// exception in one of them is reported through `sys.unraisablehook` and turns into the C
/// failure value (null, or a nonzero code) that the core turns into its own error.
mod py_alloc {
    use super::*;

    unsafe fn obj<'a>(user: *mut c_void) -> &'a Py<PyAny> {
        &*(user as *const Py<PyAny>)
    }

    fn report(py: Python<'_>, e: PyErr, obj: &Py<PyAny>) {
        e.write_unraisable(py, Some(obj.bind(py)));
    }

    /// Runs `f` with the thread's pending Python exception (if any) set aside and put back after:
    /// the core frees a storage while an error it raises is already set (a refused kernel's
    /// NotImplementedError dropping an intermediate tensor), and calling the allocator then
    /// would turn that error into `SystemError: ... returned a result with an exception set`.
    fn aside<R>(py: Python<'_>, f: impl FnOnce() -> R) -> R {
        let pending = PyErr::take(py);
        let r = f();
        if let Some(e) = pending {
            e.restore(py);
        }
        r
    }

    pub unsafe extern "C" fn alloc(user: *mut c_void, nbytes: usize, align: usize) -> *mut c_void {
        let o = obj(user);
        Python::with_gil(|py| {
            aside(py, || {
                match o
                    .call_method1(py, "alloc", (nbytes, align))
                    .and_then(|r| r.extract::<usize>(py))
                {
                    Ok(p) => p as *mut c_void,
                    Err(e) => {
                        report(py, e, o);
                        std::ptr::null_mut()
                    }
                }
            })
        })
    }

    pub unsafe extern "C" fn free(
        user: *mut c_void,
        ptr: *mut c_void,
        nbytes: usize,
        _align: usize,
    ) {
        // Storages freed while the interpreter shuts down leak rather than call into Python.
        if pyo3::ffi::Py_IsInitialized() == 0 {
            return;
        }
        let o = obj(user);
        Python::with_gil(|py| {
            aside(py, || {
                if let Err(e) = o.call_method1(py, "free", (ptr as usize, nbytes)) {
                    report(py, e, o);
                }
            })
        })
    }

    fn copy(user: *mut c_void, method: &str, dst: usize, src: usize, nbytes: usize) -> i32 {
        let o = unsafe { obj(user) };
        Python::with_gil(|py| {
            aside(py, || {
                match o.call_method1(py, method, (dst, src, nbytes)) {
                    Ok(_) => 0,
                    Err(e) => {
                        report(py, e, o);
                        1
                    }
                }
            })
        })
    }

    pub unsafe extern "C" fn copy_from_host(
        user: *mut c_void,
        dst: *mut c_void,
        src: *const c_void,
        nbytes: usize,
    ) -> i32 {
        copy(user, "copy_from_host", dst as usize, src as usize, nbytes)
    }

    pub unsafe extern "C" fn copy_to_host(
        user: *mut c_void,
        dst: *mut c_void,
        src: *const c_void,
        nbytes: usize,
    ) -> i32 {
        copy(user, "copy_to_host", dst as usize, src as usize, nbytes)
    }
}

/// Registers a Python object as the allocator of `device`, device index `index` (see `py_alloc`
/// for its methods). The object is kept alive for the rest of the process, as native allocators
/// are.
#[pyfunction]
#[pyo3(signature = (plugin, device, allocator, index=0))]
pub fn _tn_register_python_allocator(plugin: &str, device: &str, allocator: Py<PyAny>, index: i32) {
    let user = Box::into_raw(Box::new(allocator)) as *mut c_void;
    let a = TnAllocator {
        struct_size: std::mem::size_of::<TnAllocator>() as u32,
        user,
        alloc: py_alloc::alloc,
        free: py_alloc::free,
        copy_from_host: py_alloc::copy_from_host,
        copy_to_host: py_alloc::copy_to_host,
    };
    let mut r = registry().write().unwrap();
    let key = r.device_key(device);
    r.insert_allocator((key, index), Allocator(a), plugin);
    let devs = r.plugins.entry(plugin.to_string()).or_default();
    if !devs.iter().any(|d| d == device) {
        devs.push(device.to_string());
    }
}

/// Removes every kernel and allocator plugin `name` registered (after its registration failed).
#[pyfunction]
pub fn _tn_unregister_plugin(name: &str) {
    registry().write().unwrap().remove_plugin(name);
}

/// `{plugin: {device: [ops...]}}` of everything registered, for the CLI and tests.
#[pyfunction]
pub fn _tn_registered_kernels(py: Python<'_>) -> PyResult<PyObject> {
    let r = registry().read().unwrap();
    let out = pyo3::types::PyDict::new(py);
    for ((op, key), k) in r.kernels.iter() {
        let plugin = k.plugin();
        let per_plugin = match out.get_item(plugin)? {
            Some(d) => d,
            None => {
                let d = pyo3::types::PyDict::new(py).into_any();
                out.set_item(plugin, &d)?;
                d
            }
        };
        let dev = r.devices[*key as usize].clone();
        let list = match per_plugin.get_item(&dev).ok() {
            Some(l) => l,
            None => {
                let l = pyo3::types::PyList::empty(py).into_any();
                per_plugin.set_item(&dev, &l)?;
                l
            }
        };
        list.call_method1("append", (op,))?;
    }
    Ok(out.into_any().unbind())
}
