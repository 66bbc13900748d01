//! The handshake with the core's registrar, independent of Python (the PyO3 module only unwraps
//! the capsule): check the ABI version, register the host allocator for `"cpu"`, then every
//! kernel. A kernel the core refuses (an overload it does not know) is skipped and recorded, not
//! fatal: the core refuses such an operator by name at call time anyway.

use std::ffi::{CStr, CString};

use torchnative_abi::{abi_compatible, TnRegistrar, ABI_VERSION};

/// What a registration achieved.
#[derive(Debug, Default)]
pub struct Registered {
    /// Kernels the core accepted.
    pub accepted: usize,
    /// Overloads the core refused (with its return code).
    pub refused: Vec<(&'static str, i32)>,
}

/// Why a registration failed.
#[derive(Debug, PartialEq)]
pub enum RegisterError {
    /// The core speaks another major ABI version (message names both).
    AbiMismatch(String),
    Invalid(String),
    /// The core refused the allocator.
    Allocator(String),
}

pub fn version_str(v: u32) -> String {
    format!("{}.{}", v >> 16, v & 0xffff)
}

/// Registers the host allocator and every kernel of [`crate::kernels`].
///
/// # Safety
/// `reg` must be null or point at a valid registrar whose function pointers are callable.
pub unsafe fn register_into(reg: *const TnRegistrar) -> Result<Registered, RegisterError> {
    if reg.is_null() {
        return Err(RegisterError::Invalid(
            "the registrar pointer is null".into(),
        ));
    }
    let reg = &*reg;
    if !abi_compatible(reg.abi_version, ABI_VERSION) {
        return Err(RegisterError::AbiMismatch(format!(
            "torchnative-cpu was built for backend ABI {} but the core speaks ABI {}",
            version_str(ABI_VERSION),
            version_str(reg.abi_version)
        )));
    }
    // Fields past the core's struct size would be absent; ours are all in the 1.0 layout.
    if (reg.struct_size as usize) < std::mem::size_of::<TnRegistrar>() {
        return Err(RegisterError::Invalid(format!(
            "the core's registrar is {} bytes, torchnative-cpu needs {}",
            reg.struct_size,
            std::mem::size_of::<TnRegistrar>()
        )));
    }
    let plugin = if reg.plugin.is_null() {
        "cpu".to_string()
    } else {
        CStr::from_ptr(reg.plugin).to_string_lossy().into_owned()
    };
    let device = CString::new(crate::DEVICE_KEY).unwrap();
    let alloc = crate::alloc::host_allocator();
    let rc = (reg.register_allocator)(reg.core, device.as_ptr(), &alloc);
    if rc != 0 {
        return Err(RegisterError::Allocator(format!(
            "{plugin}: the core refused the allocator for device 'cpu' ({rc})"
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

#[cfg(test)]
mod tests {
    use std::ffi::{c_char, c_void};

    use torchnative_abi::{TnAllocator, TnKernelFn};

    use super::*;

    #[derive(Default)]
    struct Fake {
        kernels: Vec<(String, String)>,
        allocators: Vec<(String, u32)>,
        refuse: Option<&'static str>,
    }

    unsafe extern "C" fn reg_kernel(
        core: *mut c_void,
        op: *const c_char,
        dev: *const c_char,
        _k: TnKernelFn,
        _u: *mut c_void,
    ) -> i32 {
        let f = &mut *(core as *mut Fake);
        let op = CStr::from_ptr(op).to_str().unwrap().to_string();
        if Some(op.as_str()) == f.refuse {
            return 3;
        }
        f.kernels
            .push((op, CStr::from_ptr(dev).to_str().unwrap().to_string()));
        0
    }

    unsafe extern "C" fn reg_alloc(
        core: *mut c_void,
        dev: *const c_char,
        a: *const TnAllocator,
    ) -> i32 {
        let f = &mut *(core as *mut Fake);
        // The core copies the table; check it is usable now.
        let a = &*a;
        let p = (a.alloc)(a.user, 10, 8);
        assert_eq!(p as usize % 64, 0);
        (a.free)(a.user, p, 10, 8);
        f.allocators.push((
            CStr::from_ptr(dev).to_str().unwrap().to_string(),
            a.struct_size,
        ));
        0
    }

    unsafe extern "C" fn reg_alloc_at(
        core: *mut c_void,
        dev: *const c_char,
        index: i32,
        a: *const TnAllocator,
    ) -> i32 {
        assert_eq!(index, 0, "the cpu backend has one memory");
        reg_alloc(core, dev, a)
    }

    fn registrar(fake: &mut Fake, version: u32) -> TnRegistrar {
        TnRegistrar {
            abi_version: version,
            struct_size: std::mem::size_of::<TnRegistrar>() as u32,
            core: fake as *mut Fake as *mut c_void,
            plugin: c"cpu".as_ptr(),
            register_kernel: reg_kernel,
            register_allocator: reg_alloc,
            register_allocator_at: reg_alloc_at,
        }
    }

    #[test]
    fn registers_allocator_and_every_kernel() {
        let mut fake = Fake::default();
        let reg = registrar(&mut fake, ABI_VERSION);
        let r = unsafe { register_into(&reg) }.unwrap();
        assert_eq!(r.accepted, crate::kernels().len());
        assert!(r.refused.is_empty());
        assert_eq!(
            fake.allocators,
            vec![("cpu".to_string(), std::mem::size_of::<TnAllocator>() as u32)]
        );
        assert!(fake.kernels.iter().all(|(_, d)| d == "cpu"));
        for op in [
            "aten::add.Tensor",
            "aten::copy_",
            "aten::sum.dim_IntList",
            "aten::mm",
        ] {
            assert!(
                fake.kernels.iter().any(|(o, _)| o == op),
                "{op} not registered"
            );
        }
    }

    #[test]
    fn a_refused_kernel_is_recorded_not_fatal() {
        let mut fake = Fake {
            refuse: Some("aten::mm"),
            ..Default::default()
        };
        let reg = registrar(&mut fake, ABI_VERSION);
        let r = unsafe { register_into(&reg) }.unwrap();
        assert_eq!(r.refused, vec![("aten::mm", 3)]);
        assert_eq!(r.accepted, crate::kernels().len() - 1);
    }

    #[test]
    fn another_major_is_refused_naming_both_versions() {
        let mut fake = Fake::default();
        let reg = registrar(&mut fake, (torchnative_abi::ABI_VERSION_MAJOR + 1) << 16);
        let e = unsafe { register_into(&reg) }.unwrap_err();
        let RegisterError::AbiMismatch(msg) = e else {
            panic!("{e:?}")
        };
        let ours = format!(
            "ABI {}.{}",
            torchnative_abi::ABI_VERSION_MAJOR,
            torchnative_abi::ABI_VERSION_MINOR
        );
        assert!(msg.contains(&ours) && msg.contains("ABI 2.0"), "{msg}");
        assert!(fake.kernels.is_empty() && fake.allocators.is_empty());
        // A newer minor of the same major is accepted.
        let mut fake = Fake::default();
        let reg = registrar(&mut fake, ABI_VERSION + 1);
        assert!(unsafe { register_into(&reg) }.is_ok());
    }
}
