//! The handshake with the core's registrar, independent of Python (the `_native` module only
//! unwraps the capsule): check the ABI version and the registrar's size, register the backend's
//! allocator for its device key, then every kernel. A kernel the core refuses (an overload it
//! does not know) is skipped and recorded, not fatal: the core refuses such an operator by name
//! at call time anyway.

use std::ffi::{CStr, CString};

use crate::abi::{abi_compatible, TnRegistrar, ABI_VERSION};
use crate::Backend;

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
    /// The core speaks another major ABI version (the message names both).
    AbiMismatch(String),
    Invalid(String),
    /// The core refused the allocator.
    Allocator(String),
}

/// `major.minor` of an `abi_version`.
pub fn version_str(v: u32) -> String {
    format!("{}.{}", v >> 16, v & 0xffff)
}

/// Registers `B`'s allocator and every kernel of `B::kernels()`.
///
/// # Safety
/// `reg` must be null or point at a valid registrar whose function pointers are callable.
pub unsafe fn register_into<B: Backend>(
    reg: *const TnRegistrar,
) -> Result<Registered, RegisterError> {
    let Some(reg) = reg.as_ref() else {
        return Err(RegisterError::Invalid(
            "the registrar pointer is null".into(),
        ));
    };
    if !abi_compatible(reg.abi_version, ABI_VERSION) {
        return Err(RegisterError::AbiMismatch(format!(
            "{} was built for backend ABI {} but the core speaks ABI {}",
            B::NAME,
            version_str(ABI_VERSION),
            version_str(reg.abi_version)
        )));
    }
    // Fields past the core's struct size would be absent.
    if (reg.struct_size as usize) < std::mem::size_of::<TnRegistrar>() {
        return Err(RegisterError::Invalid(format!(
            "the core's registrar is {} bytes, {} needs {}",
            reg.struct_size,
            B::NAME,
            std::mem::size_of::<TnRegistrar>()
        )));
    }
    let plugin = if reg.plugin.is_null() {
        B::DEVICE_KEY.to_string()
    } else {
        CStr::from_ptr(reg.plugin).to_string_lossy().into_owned()
    };
    let device = CString::new(B::DEVICE_KEY).unwrap();
    let alloc = B::allocator();
    let rc = (reg.register_allocator)(reg.core, device.as_ptr(), &alloc);
    if rc != 0 {
        return Err(RegisterError::Allocator(format!(
            "{plugin}: the core refused the allocator for device '{}' ({rc})",
            B::DEVICE_KEY
        )));
    }
    let mut out = Registered::default();
    for (op, kernel) in B::kernels() {
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

    use super::*;
    use crate::abi::{TnAllocator, TnKernelFn, TnTensor, ABI_VERSION_MAJOR, ABI_VERSION_MINOR};
    use crate::{HostTensor, KResult, Registry};

    /// A backend of two kernels whose allocator is the system's.
    struct Fake;

    unsafe extern "C" fn fake_alloc(_u: *mut c_void, n: usize, _a: usize) -> *mut c_void {
        Box::into_raw(vec![0u8; n].into_boxed_slice()) as *mut c_void
    }
    unsafe extern "C" fn fake_free(_u: *mut c_void, p: *mut c_void, n: usize, _a: usize) {
        drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            p as *mut u8,
            n,
        )));
    }
    unsafe extern "C" fn fake_copy(
        _u: *mut c_void,
        d: *mut c_void,
        s: *const c_void,
        n: usize,
    ) -> i32 {
        std::ptr::copy(s as *const u8, d as *mut u8, n);
        0
    }

    impl Backend for Fake {
        const NAME: &'static str = "fake-backend";
        const DEVICE_KEY: &'static str = "fake";
        type Tensor<'a> = HostTensor<'a>;
        unsafe fn view<'a>(t: &'a TnTensor) -> KResult<HostTensor<'a>> {
            HostTensor::from_raw(t)
        }
        fn allocator() -> TnAllocator {
            crate::allocator(fake_alloc, fake_free, fake_copy, fake_copy)
        }
        fn kernels() -> Registry {
            let mut reg = vec![];
            table::register(&mut reg);
            reg
        }
    }

    mod table {
        use crate::{Call, KResult};

        fn nothing(_c: &mut Call<super::Fake>) -> KResult {
            Ok(())
        }
        fn boom(c: &mut Call<super::Fake>) -> KResult {
            let n = c.int(0)?;
            panic!("boom {n}")
        }
        crate::kernel_table! { super::Fake;
            k_nothing = "aten::mm" => nothing;
            k_boom = "aten::add.Tensor" => |c| boom(c);
        }
    }

    #[derive(Default)]
    struct Core {
        kernels: Vec<(String, String)>,
        allocators: Vec<String>,
        refuse: Option<&'static str>,
    }

    unsafe extern "C" fn reg_kernel(
        core: *mut c_void,
        op: *const c_char,
        dev: *const c_char,
        _k: TnKernelFn,
        _u: *mut c_void,
    ) -> i32 {
        let f = &mut *(core as *mut Core);
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
        _a: *const TnAllocator,
    ) -> i32 {
        let f = &mut *(core as *mut Core);
        f.allocators
            .push(CStr::from_ptr(dev).to_str().unwrap().to_string());
        0
    }

    unsafe extern "C" fn reg_alloc_at(
        core: *mut c_void,
        dev: *const c_char,
        _index: i32,
        a: *const TnAllocator,
    ) -> i32 {
        reg_alloc(core, dev, a)
    }

    fn registrar(core: &mut Core, version: u32) -> TnRegistrar {
        TnRegistrar {
            abi_version: version,
            struct_size: std::mem::size_of::<TnRegistrar>() as u32,
            core: core as *mut Core as *mut c_void,
            plugin: c"fake".as_ptr(),
            register_kernel: reg_kernel,
            register_allocator: reg_alloc,
            register_allocator_at: reg_alloc_at,
        }
    }

    #[test]
    fn a_dtype_refusal_names_the_device_as_conformance_matches_it() {
        // torchnative/conformance/suite.py refusal_pattern: "OP" not implemented for 'Dtype' on device 'DEV'
        use crate::abi::{TnDtype, TnErrorKind};
        let e = crate::unsupported_dtype::<Fake>("exp", TnDtype::Int64);
        assert!(matches!(e.kind, TnErrorKind::NotImplemented));
        assert_eq!(e.msg, "\"exp\" not implemented for 'Long' on device 'fake'");
        let e = crate::unsupported_dtype::<Fake>("add", TnDtype::BFloat16);
        assert_eq!(
            e.msg,
            "\"add\" not implemented for 'BFloat16' on device 'fake'"
        );
        // upstream's own wording stays available, unchanged, for the cpu backend
        let e = crate::upstream_unsupported_dtype("addmm_impl_cpu_", TnDtype::Float16);
        assert_eq!(e.msg, "\"addmm_impl_cpu_\" not implemented for 'Half'");
    }

    #[test]
    fn registers_allocator_and_every_kernel() {
        let mut core = Core::default();
        let reg = registrar(&mut core, ABI_VERSION);
        let r = unsafe { register_into::<Fake>(&reg) }.unwrap();
        assert_eq!(r.accepted, 2);
        assert!(r.refused.is_empty());
        assert_eq!(core.allocators, vec!["fake".to_string()]);
        assert_eq!(
            core.kernels,
            vec![
                ("aten::mm".to_string(), "fake".to_string()),
                ("aten::add.Tensor".to_string(), "fake".to_string())
            ]
        );
    }

    #[test]
    fn a_refused_kernel_is_recorded_not_fatal() {
        let mut core = Core {
            refuse: Some("aten::mm"),
            ..Default::default()
        };
        let reg = registrar(&mut core, ABI_VERSION);
        let r = unsafe { register_into::<Fake>(&reg) }.unwrap();
        assert_eq!(r.refused, vec![("aten::mm", 3)]);
        assert_eq!(r.accepted, 1);
    }

    #[test]
    fn another_major_is_refused_naming_both_versions() {
        let mut core = Core::default();
        let reg = registrar(&mut core, (ABI_VERSION_MAJOR + 1) << 16);
        let RegisterError::AbiMismatch(msg) = unsafe { register_into::<Fake>(&reg) }.unwrap_err()
        else {
            panic!("not an ABI mismatch")
        };
        assert_eq!(
            msg,
            format!(
                "fake-backend was built for backend ABI {ABI_VERSION_MAJOR}.{ABI_VERSION_MINOR} \
                 but the core speaks ABI {}.0",
                ABI_VERSION_MAJOR + 1
            )
        );
        assert!(core.kernels.is_empty() && core.allocators.is_empty());
        // A newer minor of the same major is accepted.
        let mut core = Core::default();
        let reg = registrar(&mut core, ABI_VERSION + 1);
        assert!(unsafe { register_into::<Fake>(&reg) }.is_ok());
    }

    /// Calls the table's `aten::add.Tensor` kernel (`boom`) with `args`; its return code, error
    /// kind and message.
    fn call_boom(args: &[TnArg]) -> (i32, i32, String) {
        use crate::abi::TnError;
        let mut buf = [0u8; 256];
        let mut e = TnError {
            kind: 0,
            message: buf.as_mut_ptr() as *mut c_char,
            capacity: buf.len(),
        };
        let (ptr, n) = (args.as_ptr(), args.len());
        let null = std::ptr::null_mut();
        let rc =
            unsafe { (Fake::kernels()[1].1)(null, std::ptr::null(), ptr, n, null as _, 0, &mut e) };
        let msg = CStr::from_bytes_until_nul(&buf)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        (rc, e.kind, msg)
    }

    #[test]
    fn a_kernel_reports_errors_and_panics_without_unwinding() {
        use crate::abi::{TnArgKind, TnErrorKind};
        let mut arg: TnArg = unsafe { std::mem::zeroed() };
        arg.kind = TnArgKind::Int as i32;
        arg.i = 7;
        // The panicking body: caught, reported as RuntimeError naming the backend.
        let (rc, kind, msg) = call_boom(&[arg]);
        assert_eq!((rc, kind), (1, TnErrorKind::Runtime as i32));
        assert_eq!(
            msg,
            "aten::add.Tensor: internal error in fake-backend: boom 7"
        );
        // A missing argument is an error, not a panic.
        let (rc, _, msg) = call_boom(&[]);
        assert_eq!(rc, 1);
        assert_eq!(
            msg,
            "aten::add.Tensor: expected argument 0, got 0 arguments"
        );
    }

    use crate::abi::TnArg;
}
