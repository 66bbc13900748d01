//! The kernel and allocator registry: what backends registered, by device key.
//!
//! Backends reach it through the C registrar (`registrar.rs`) or, for Python kernels, through
//! `_tn_register_python_kernel`. A plugin whose registration fails half way is removed again
//! (`remove_plugin`), and whatever it had overridden comes back; a `Storage` keeps its own copy
//! of its allocator, so memory allocated meanwhile stays valid.

use std::collections::{BTreeSet, HashMap};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use pyo3::prelude::*;
use torchnative_abi::{TnAllocator, TnKernelFn};

/// A device key's index in the registry (`"cpu"` is whatever index it was registered with).
pub type DeviceKey = u16;

/// One device: its key and its index (`mydev:1` is `(key of "mydev", 1)`). Allocators are
/// registered per place; the legacy `register_allocator` registers index 0.
pub type Place = (DeviceKey, i32);

#[derive(Clone)]
pub enum Kernel {
    Native {
        f: TnKernelFn,
        user: *mut c_void,
        plugin: Arc<str>,
    },
    Python {
        f: Arc<Py<PyAny>>,
        plugin: Arc<str>,
    },
}

impl Kernel {
    pub fn plugin(&self) -> &str {
        match self {
            Kernel::Native { plugin, .. } | Kernel::Python { plugin, .. } => plugin,
        }
    }
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
    pub allocators: HashMap<Place, Allocator>,
    /// Which plugin registered each allocator.
    pub allocator_owners: HashMap<Place, String>,
    pub kernels: HashMap<(String, DeviceKey), Kernel>,
    /// The same kernels per device key, by lookup name (`lookup_name`: `add.Tensor` for
    /// `aten::add.Tensor`), so that a launch finds its kernel without building a string.
    index: Vec<HashMap<Box<str>, Kernel>>,
    /// Bumped by every change to the kernels; caches of kernel handles compare it.
    pub generation: u64,
    /// Kernels a later plugin overrode, oldest first, restored when that plugin is removed.
    shadowed_kernels: HashMap<(String, DeviceKey), Vec<Kernel>>,
    /// Allocators a later plugin overrode, with their owners.
    shadowed_allocators: HashMap<Place, Vec<(Allocator, String)>>,
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

    /// Registers `kernel` for (op, key); a kernel of another plugin that it replaces is kept
    /// aside so that `remove_plugin` can restore it.
    pub fn insert_kernel(&mut self, op: String, key: DeviceKey, kernel: Kernel) {
        if self.index.len() <= key as usize {
            self.index.resize_with(key as usize + 1, HashMap::new);
        }
        self.index[key as usize].insert(lookup_name(&op).into(), kernel.clone());
        self.generation += 1;
        let slot = (op, key);
        if let Some(old) = self.kernels.insert(slot.clone(), kernel.clone()) {
            if old.plugin() != kernel.plugin() {
                self.shadowed_kernels.entry(slot).or_default().push(old);
            }
        }
    }

    /// Registers the allocator of `key` for `plugin`, keeping a replaced one aside.
    pub fn insert_allocator(&mut self, key: Place, alloc: Allocator, plugin: &str) {
        let prev = self.allocators.insert(key, alloc);
        let prev_owner = self.allocator_owners.insert(key, plugin.to_string());
        if let (Some(prev), Some(owner)) = (prev, prev_owner) {
            if owner != plugin {
                self.shadowed_allocators
                    .entry(key)
                    .or_default()
                    .push((prev, owner));
            }
        }
    }

    /// Forgets everything plugin `name` registered (its registration failed half way) and
    /// restores the kernels and allocators it had overridden. Storages already allocated keep
    /// their copy of the allocator.
    pub fn remove_plugin(&mut self, name: &str) {
        self.kernels.retain(|_, k| k.plugin() != name);
        for stack in self.shadowed_kernels.values_mut() {
            stack.retain(|k| k.plugin() != name);
        }
        for (slot, stack) in self.shadowed_kernels.iter_mut() {
            if !self.kernels.contains_key(slot) {
                if let Some(k) = stack.pop() {
                    self.kernels.insert(slot.clone(), k);
                }
            }
        }
        self.shadowed_kernels.retain(|_, stack| !stack.is_empty());
        for m in self.index.iter_mut() {
            m.clear();
        }
        for ((op, key), k) in self.kernels.iter() {
            self.index[*key as usize].insert(lookup_name(op).into(), k.clone());
        }
        self.generation += 1;
        for stack in self.shadowed_allocators.values_mut() {
            stack.retain(|(_, owner)| owner != name);
        }
        let owned: Vec<Place> = self
            .allocator_owners
            .iter()
            .filter(|(_, owner)| owner.as_str() == name)
            .map(|(key, _)| *key)
            .collect();
        for key in owned {
            self.allocators.remove(&key);
            self.allocator_owners.remove(&key);
            if let Some((alloc, owner)) = self.shadowed_allocators.get_mut(&key).and_then(Vec::pop)
            {
                self.allocators.insert(key, alloc);
                self.allocator_owners.insert(key, owner);
            }
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

/// The key of "cpu": the first device the registry interns.
pub const CPU: DeviceKey = 0;

pub fn registry() -> &'static RwLock<Registry> {
    static R: OnceLock<RwLock<Registry>> = OnceLock::new();
    R.get_or_init(|| {
        let mut r = Registry::default();
        // "cpu" and "meta" always exist as device keys; "meta" never needs an allocator.
        let cpu = r.device_key("cpu");
        debug_assert_eq!(cpu, CPU);
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

pub fn allocator(place: Place) -> Option<Allocator> {
    registry().read().unwrap().allocators.get(&place).copied()
}

/// The device indices that have an allocator for `key`, ascending.
pub fn device_indices(key: DeviceKey) -> Vec<i32> {
    let r = registry().read().unwrap();
    let mut v: Vec<i32> = r
        .allocators
        .keys()
        .filter(|(k, _)| *k == key)
        .map(|(_, i)| *i)
        .collect();
    v.sort_unstable();
    v
}

/// The name a kernel is looked up by: aten operators without their namespace (the Python meta
/// steps launch `add.Tensor`), others (`torchvision::nms`) in full.
fn lookup_name(op: &str) -> &str {
    op.strip_prefix("aten::").unwrap_or(op)
}

/// Kernel names looked up while tracing is on (`_tn_trace_kernels`, run by tools/primitives.py to
/// find the primitive set): those launched (native fast paths included) and those only probed
/// by `_tn_has_kernel` (a core path that composes when the device lacks them). Off, a lookup
/// pays one relaxed atomic load.
static TRACING: AtomicBool = AtomicBool::new(false);
static TRACED: Mutex<(BTreeSet<String>, BTreeSet<String>)> =
    Mutex::new((BTreeSet::new(), BTreeSet::new()));

fn trace(op: &str, probe: bool) {
    if TRACING.load(Ordering::Relaxed) {
        let mut t = TRACED.lock().unwrap();
        let set = if probe { &mut t.1 } else { &mut t.0 };
        set.insert(lookup_name(op).to_string());
    }
}

/// `_tn_trace_kernels(on)`: switches the recording of kernel lookups on or off and returns the
/// names recorded since the last call, sorted: (launched, probed).
#[pyfunction]
pub fn _tn_trace_kernels(on: bool) -> (Vec<String>, Vec<String>) {
    TRACING.store(on, Ordering::Relaxed);
    let (launched, probed) = std::mem::take(&mut *TRACED.lock().unwrap());
    (launched.into_iter().collect(), probed.into_iter().collect())
}

/// Whether device `key` has a kernel for `op`, asked by a path that composes otherwise.
pub fn has_kernel(op: &str, key: DeviceKey) -> bool {
    trace(op, true);
    lookup(op, key).is_some()
}

/// The kernel of `op` (`aten::add.Tensor` or `add.Tensor`) on device `key`.
pub fn kernel(op: &str, key: DeviceKey) -> Option<Kernel> {
    trace(op, false);
    lookup(op, key)
}

fn lookup(op: &str, key: DeviceKey) -> Option<Kernel> {
    registry()
        .read()
        .unwrap()
        .index
        .get(key as usize)?
        .get(lookup_name(op))
        .cloned()
}

/// The registry's generation: changes whenever a kernel is registered or removed.
pub fn generation() -> u64 {
    registry().read().unwrap().generation
}

/// Names of the plugins that registered anything, for refusal messages.
pub fn installed_backends() -> Vec<String> {
    let r = registry().read().unwrap();
    let mut names: Vec<String> = r.plugins.keys().cloned().collect();
    names.sort();
    names
}
