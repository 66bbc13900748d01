//! Storage: bytes on a device, allocated through the allocator its backend registered.

use std::ffi::c_void;
use std::sync::Mutex;

use pyo3::exceptions::{PyNotImplementedError, PyRuntimeError};
use pyo3::PyResult;

use crate::registry::{self, Allocator, DeviceKey, Place};

pub const ALIGN: usize = 64;

struct Block {
    ptr: *mut u8,
    nbytes: usize,
    /// None for memory the storage does not own (numpy buffers, meta tensors).
    allocator: Option<Allocator>,
}

/// Shared by every view of one tensor. `resize_`/`set_` replace the block in place so all views
/// observe it, as upstream's `StorageImpl` does.
pub struct Storage {
    pub device: DeviceKey,
    pub device_index: i32,
    block: Mutex<Block>,
    /// Keeps foreign memory alive (a numpy array) while the storage lives.
    pub owner: Mutex<Option<pyo3::Py<pyo3::PyAny>>>,
}

unsafe impl Send for Storage {}
unsafe impl Sync for Storage {}

fn no_allocator((device, index): Place) -> pyo3::PyErr {
    let name = registry::device_name(device);
    let indices = registry::device_indices(device);
    if !indices.is_empty() {
        // The device key exists, this index does not (upstream: "invalid device ordinal").
        let have: Vec<String> = indices.iter().map(|i| format!("{name}:{i}")).collect();
        return PyRuntimeError::new_err(format!(
            "device '{name}:{index}' does not exist: its backend registered {}",
            have.join(", ")
        ));
    }
    PyNotImplementedError::new_err(format!(
        "no allocator registered for device '{name}' (installed backends: {}); install its backend, e.g. `pip install torchnative[cpu]`",
        registry::installed_backends().join(", ")
    ))
}

/// Upstream's `alloc_cpu` refusal, word for word after its source location.
fn out_of_memory(nbytes: usize) -> pyo3::PyErr {
    PyRuntimeError::new_err(format!(
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)"
    ))
}

impl Storage {
    pub fn new(device: DeviceKey, device_index: i32, nbytes: usize) -> PyResult<Storage> {
        let meta = registry::lookup_device("meta") == Some(device);
        let block = if meta {
            Block {
                ptr: std::ptr::null_mut(),
                nbytes,
                allocator: None,
            }
        } else {
            let place = (device, device_index);
            let alloc = registry::allocator(place).ok_or_else(|| no_allocator(place))?;
            let ptr = unsafe { (alloc.0.alloc)(alloc.0.user, nbytes, ALIGN) } as *mut u8;
            if ptr.is_null() && nbytes > 0 {
                return Err(out_of_memory(nbytes));
            }
            Block {
                ptr,
                nbytes,
                allocator: Some(alloc),
            }
        };
        Ok(Storage {
            device,
            device_index,
            block: Mutex::new(block),
            owner: Mutex::new(None),
        })
    }

    /// Wraps memory owned by someone else (kept alive by `owner`).
    pub fn foreign(
        device: DeviceKey,
        ptr: *mut u8,
        nbytes: usize,
        owner: pyo3::Py<pyo3::PyAny>,
    ) -> Storage {
        Storage {
            device,
            device_index: 0,
            block: Mutex::new(Block {
                ptr,
                nbytes,
                allocator: None,
            }),
            owner: Mutex::new(Some(owner)),
        }
    }

    pub fn ptr(&self) -> *mut u8 {
        self.block.lock().unwrap().ptr
    }

    pub fn nbytes(&self) -> usize {
        self.block.lock().unwrap().nbytes
    }

    /// Grows the block to at least `nbytes`, preserving contents (upstream `resize_`).
    pub fn grow(&self, nbytes: usize) -> PyResult<()> {
        let mut b = self.block.lock().unwrap();
        if nbytes <= b.nbytes {
            return Ok(());
        }
        if registry::lookup_device("meta") == Some(self.device) {
            b.nbytes = nbytes;
            return Ok(());
        }
        let place = (self.device, self.device_index);
        let alloc = registry::allocator(place).ok_or_else(|| no_allocator(place))?;
        let new = unsafe { (alloc.0.alloc)(alloc.0.user, nbytes, ALIGN) } as *mut u8;
        if new.is_null() {
            return Err(out_of_memory(nbytes));
        }
        if b.nbytes > 0 && !b.ptr.is_null() {
            // SAFETY: `new` holds `nbytes` >= `b.nbytes` and `b.ptr` holds `b.nbytes`, same device.
            unsafe {
                copy_between(
                    place,
                    new as *mut c_void,
                    place,
                    b.ptr as *const c_void,
                    b.nbytes,
                )
            }?;
        }
        let old = std::mem::replace(
            &mut *b,
            Block {
                ptr: new,
                nbytes,
                allocator: Some(alloc),
            },
        );
        drop_block(old);
        *self.owner.lock().unwrap() = None;
        Ok(())
    }
}

fn drop_block(b: Block) {
    if let Some(a) = b.allocator {
        if !b.ptr.is_null() {
            unsafe { (a.0.free)(a.0.user, b.ptr as *mut c_void, b.nbytes, ALIGN) };
        }
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        let b = std::mem::replace(
            self.block.get_mut().unwrap(),
            Block {
                ptr: std::ptr::null_mut(),
                nbytes: 0,
                allocator: None,
            },
        );
        drop_block(b);
    }
}

/// Copies raw bytes between (possibly different) devices through their allocators' host copies.
///
/// # Safety
/// `dst` and `src` must be valid for `nbytes` bytes on `dst_dev` and `src_dev` respectively
/// (host memory for cpu, the allocator's own pointers otherwise).
pub unsafe fn copy_between(
    dst_dev: Place,
    dst: *mut c_void,
    src_dev: Place,
    src: *const c_void,
    nbytes: usize,
) -> PyResult<()> {
    if nbytes == 0 {
        return Ok(());
    }
    let cpu = registry::lookup_device("cpu");
    let is_cpu = |(d, _): Place| Some(d) == cpu;
    unsafe {
        match (is_cpu(dst_dev), is_cpu(src_dev)) {
            (true, true) => std::ptr::copy(src as *const u8, dst as *mut u8, nbytes),
            (false, true) => {
                let a = registry::allocator(dst_dev).ok_or_else(|| no_allocator(dst_dev))?;
                check((a.0.copy_from_host)(a.0.user, dst, src, nbytes))?;
            }
            (true, false) => {
                let a = registry::allocator(src_dev).ok_or_else(|| no_allocator(src_dev))?;
                check((a.0.copy_to_host)(a.0.user, dst, src, nbytes))?;
            }
            (false, false) => {
                // Through a host bounce buffer: device-to-device copies are a later ABI minor.
                let mut tmp = vec![0u8; nbytes];
                let a = registry::allocator(src_dev).ok_or_else(|| no_allocator(src_dev))?;
                check((a.0.copy_to_host)(
                    a.0.user,
                    tmp.as_mut_ptr() as *mut c_void,
                    src,
                    nbytes,
                ))?;
                let b = registry::allocator(dst_dev).ok_or_else(|| no_allocator(dst_dev))?;
                check((b.0.copy_from_host)(
                    b.0.user,
                    dst,
                    tmp.as_ptr() as *const c_void,
                    nbytes,
                ))?;
            }
        }
    }
    Ok(())
}

fn check(rc: i32) -> PyResult<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(PyRuntimeError::new_err(format!(
            "device copy failed with code {rc}"
        )))
    }
}
