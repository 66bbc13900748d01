//! The kernel and allocator registry: what backends registered, by device key.
//!
//! Backends reach it through the C registrar (`registrar.rs`) or, for Python kernels, through
//! `_tn_register_python_kernel`. Entries are never removed, so a `Storage` may keep a copy of
//! its allocator for its whole life.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{OnceLock, RwLock};

use pyo3::prelude::*;
use torchnative_abi::{TnAllocator, TnKernelFn};

/// A device key's index in the registry (`"cpu"` is whatever index it was registered with).
pub type DeviceKey = u16;

#[derive(Clone)]
pub enum Kernel {
    Native {
        f: TnKernelFn,
        user: *mut c_void,
        plugin: String,
    },
    Python {
        f: std::sync::Arc<Py<PyAny>>,
        plugin: String,
    },
}

// Kernels and allocators are plain function pointers plus opaque user data that the backend
// promised to keep alive and thread-safe (see docs/plugins.md).
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

#[derive(Copy, Clone)]
pub struct Allocator(pub TnAllocator);
unsafe impl Send for Allocator {}
unsafe impl Sync for Allocator {}

#[derive(Default)]
pub struct Registry {
    pub devices: Vec<String>,
    pub allocators: HashMap<DeviceKey, Allocator>,
    /// Which plugin registered each allocator.
    pub allocator_owners: HashMap<DeviceKey, String>,
    pub kernels: HashMap<(String, DeviceKey), Kernel>,
    /// Plugin name -> device keys it registered, for `torchnative backends`.
    pub plugins: HashMap<String, Vec<String>>,
    /// Every operator overload the core knows (`aten::add.Tensor`), once the Python half has
    /// set it; kernels for anything else are refused. None accepts every name.
    pub known_ops: Option<std::collections::HashSet<String>>,
}

impl Registry {
    pub fn device_key(&mut self, name: &str) -> DeviceKey {
        if let Some(i) = self.devices.iter().position(|d| d == name) {
            return i as DeviceKey;
        }
        self.devices.push(name.to_string());
        (self.devices.len() - 1) as DeviceKey
    }

    /// Forgets everything plugin `name` registered (its registration failed half way). Storages
    /// already allocated keep their copy of the allocator; a kernel it had overridden stays lost.
    pub fn remove_plugin(&mut self, name: &str) {
        self.kernels.retain(|_, k| match k {
            Kernel::Native { plugin, .. } | Kernel::Python { plugin, .. } => plugin != name,
        });
        let owned: Vec<DeviceKey> = self
            .allocator_owners
            .iter()
            .filter(|(_, owner)| owner.as_str() == name)
            .map(|(key, _)| *key)
            .collect();
        for key in owned {
            self.allocators.remove(&key);
            self.allocator_owners.remove(&key);
        }
        self.plugins.remove(name);
    }

    pub fn knows_op(&self, op: &str) -> bool {
        match &self.known_ops {
            None => true,
            Some(ops) => ops.contains(op),
        }
    }

    pub fn find_device(&self, name: &str) -> Option<DeviceKey> {
        self.devices
            .iter()
            .position(|d| d == name)
            .map(|i| i as DeviceKey)
    }
}

pub fn registry() -> &'static RwLock<Registry> {
    static R: OnceLock<RwLock<Registry>> = OnceLock::new();
    R.get_or_init(|| {
        let mut r = Registry::default();
        // "cpu" and "meta" always exist as device keys; "meta" never needs an allocator.
        r.device_key("cpu");
        r.device_key("meta");
        RwLock::new(r)
    })
}

pub fn device_name(key: DeviceKey) -> String {
    registry()
        .read()
        .unwrap()
        .devices
        .get(key as usize)
        .cloned()
        .unwrap_or_else(|| "?".into())
}

pub fn lookup_device(name: &str) -> Option<DeviceKey> {
    registry().read().unwrap().find_device(name)
}

pub fn intern_device(name: &str) -> DeviceKey {
    if let Some(k) = lookup_device(name) {
        return k;
    }
    registry().write().unwrap().device_key(name)
}

pub fn allocator(key: DeviceKey) -> Option<Allocator> {
    registry().read().unwrap().allocators.get(&key).copied()
}

pub fn kernel(op: &str, key: DeviceKey) -> Option<Kernel> {
    registry()
        .read()
        .unwrap()
        .kernels
        .get(&(op.to_string(), key))
        .cloned()
}

/// Names of the plugins that registered anything, for refusal messages.
pub fn installed_backends() -> Vec<String> {
    let r = registry().read().unwrap();
    let mut names: Vec<String> = r.plugins.keys().cloned().collect();
    names.sort();
    names
}
