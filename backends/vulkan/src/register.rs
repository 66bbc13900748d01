//! The handshake with the core's registrar, independent of Python: check the ABI version,
//! register the allocator for `"vulkan"`, then every kernel. An overload the core refuses is
//! recorded, not fatal (the core refuses that operator by name at call time anyway).

use std::ffi::{CStr, CString};

use torchnative_abi::{abi_compatible, TnRegistrar, ABI_VERSION};

#[derive(Debug, Default)]
pub struct Registered {
    pub accepted: usize,
    pub refused: Vec<(&'static str, i32)>,
}

#[derive(Debug, PartialEq)]
pub enum RegisterError {
    AbiMismatch(String),
    Invalid(String),
    Allocator(String),
}

fn version_str(v: u32) -> String {
    format!("{}.{}", v >> 16, v & 0xffff)
}

/// Registers the vulkan allocator and every kernel of [`crate::kernels`].
///
/// # Safety
/// `reg` must be null or point at a valid registrar whose function pointers are callable.
pub unsafe fn register_into(reg: *const TnRegistrar) -> Result<Registered, RegisterError> {
    let Some(reg) = reg.as_ref() else {
        return Err(RegisterError::Invalid(
            "the registrar pointer is null".into(),
        ));
    };
    if !abi_compatible(reg.abi_version, ABI_VERSION) {
        return Err(RegisterError::AbiMismatch(format!(
            "torchnative-vulkan was built for backend ABI {} but the core speaks ABI {}",
            version_str(ABI_VERSION),
            version_str(reg.abi_version)
        )));
    }
    if (reg.struct_size as usize) < std::mem::size_of::<TnRegistrar>() {
        return Err(RegisterError::Invalid(format!(
            "the core's registrar is {} bytes, torchnative-vulkan needs {}",
            reg.struct_size,
            std::mem::size_of::<TnRegistrar>()
        )));
    }
    let plugin = if reg.plugin.is_null() {
        "vulkan".to_string()
    } else {
        CStr::from_ptr(reg.plugin).to_string_lossy().into_owned()
    };
    let device = CString::new(crate::DEVICE_KEY).unwrap();
    let alloc = crate::alloc::vulkan_allocator();
    let rc = (reg.register_allocator)(reg.core, device.as_ptr(), &alloc);
    if rc != 0 {
        return Err(RegisterError::Allocator(format!(
            "{plugin}: the core refused the allocator for device 'vulkan' ({rc})"
        )));
    }
    let mut out = Registered::default();
    for (op, kernel) in crate::kernels() {
        let cop = CString::new(op).unwrap();
        let rc = (reg.register_kernel)(
            reg.core,
            cop.as_ptr(),
            device.as_ptr(),
            kernel,
            std::ptr::null_mut(),
        );
        if rc == 0 {
            out.accepted += 1;
        } else {
            out.refused.push((op, rc));
        }
    }
    Ok(out)
}
