//! The one wgpu device of the backend: probed lazily (`probe`, at describe time), opened on first
//! use (`gpu`), kept for the life of the process in a `OnceLock`.
//!
//! Only Vulkan adapters count (wgpu is built with the `vulkan` feature alone). Mesa's lavapipe
//! (llvmpipe) is a CPU implementation of Vulkan; it is a real adapter as far as wgpu is concerned,
//! so the backend runs (and is tested) on machines without a GPU that have `mesa-vulkan-drivers`.

use std::sync::{Mutex, OnceLock};

/// The opened device and what we know about it.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// "llvmpipe (LLVM 15.0.6, 256 bits) (Cpu, Vulkan)"-style description.
    pub description: String,
    pub limits: wgpu::Limits,
}

static ADAPTER: OnceLock<Result<wgpu::Adapter, String>> = OnceLock::new();
static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
/// Validation errors wgpu reports outside an error scope (recorded, never a panic).
pub static UNCAPTURED: Mutex<Option<String>> = Mutex::new(None);

fn adapter() -> &'static Result<wgpu::Adapter, String> {
    ADAPTER.get_or_init(|| {
        let instance = wgpu::Instance::new(&wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            ..Default::default()
        });
        let found = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: None,
        }));
        found.map_err(|_| "no Vulkan adapter".to_string())
    })
}

/// `Ok(adapter description)` when wgpu finds a Vulkan adapter, else `Err("no Vulkan adapter")`.
/// Creates the wgpu instance and enumerates adapters once per process; opens no device.
pub fn probe() -> Result<String, String> {
    adapter().as_ref().map(describe).map_err(Clone::clone)
}

fn describe(a: &wgpu::Adapter) -> String {
    let i = a.get_info();
    format!("{} ({:?}, {:?})", i.name, i.device_type, i.backend)
}

/// The device, opened on first call.
pub fn gpu() -> Result<&'static Gpu, String> {
    GPU.get_or_init(|| {
        let a = adapter().as_ref().map_err(Clone::clone)?;
        let limits = a.limits();
        let (device, queue) = pollster::block_on(a.request_device(&wgpu::DeviceDescriptor {
            label: Some("torchnative-vulkan"),
            required_features: wgpu::Features::empty(),
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| format!("could not open the Vulkan device: {e}"))?;
        device.on_uncaptured_error(std::sync::Arc::new(|e: wgpu::Error| {
            *UNCAPTURED.lock().unwrap() = Some(e.to_string());
        }));
        Ok(Gpu {
            device,
            queue,
            description: describe(a),
            limits,
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// Blocks until every submitted command has finished.
pub fn wait(g: &Gpu) -> Result<(), String> {
    g.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map(|_| ())
        .map_err(|e| format!("waiting for the Vulkan device failed: {e:?}"))
}

/// Takes the last validation error wgpu reported outside an error scope.
pub fn take_uncaptured() -> Option<String> {
    UNCAPTURED.lock().unwrap().take()
}
