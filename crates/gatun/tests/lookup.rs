//! SymbolLookup against real libraries: libc, libm, the test natives, an ld script; on
//! Windows (x86-64, under Wine) the test natives' DLL, kernel32.dll, ws2_32.dll and the C
//! runtime (msvcrt.dll) through the default lookup, whose functions are called through
//! `Linker::native()`.
// Unix loaders (libc, libm, the test natives, ld scripts, dlopen flags) and the Windows loader.
#![cfg(all(any(unix, all(windows, target_arch = "x86_64")), not(miri)))]

use std::ffi::c_int;
#[cfg(unix)]
use std::ffi::{c_void, CString};
use std::path::Path;

use gatun::linker::{LoadFlags, Symbol, SymbolLookup};
use gatun::Error;

const NATIVES: &str = gatun_test_natives::PATH;

fn natives() -> SymbolLookup {
    // SAFETY: the test natives have no initialisers.
    unsafe { SymbolLookup::library(NATIVES) }.expect("load the test natives")
}

/// Calls `int f(void)` at `symbol`.
///
/// # Safety
/// `symbol` must be such a function.
unsafe fn call_int_void(symbol: &Symbol) -> c_int {
    // SAFETY: the caller guarantees the signature; the address is not null.
    let f: extern "C" fn() -> c_int = unsafe { std::mem::transmute(symbol.address()) };
    f()
}

#[cfg(unix)]
#[test]
fn default_lookup_strlen_is_libc_strlen() {
    let strlen = SymbolLookup::default_lookup().find("strlen").unwrap();
    assert_eq!(strlen.address(), libc::strlen as *const c_void);
    assert_eq!(strlen.name(), Some("strlen"));
}

#[cfg(unix)]
#[test]
fn libm_pow_by_soname() {
    // Apple: libm.dylib is a name of libSystem, which re-exports libm.
    let name = if cfg!(target_vendor = "apple") {
        "libm.dylib"
    } else {
        "libm.so.6"
    };
    // SAFETY: libm is a system library, already loaded.
    let libm = unsafe { SymbolLookup::library(name) }.unwrap();
    let pow = libm.find("pow").unwrap();
    assert_eq!(pow.library(), Some(name));
    // SAFETY: `pow` is `double pow(double, double)`.
    let pow: extern "C" fn(f64, f64) -> f64 = unsafe { std::mem::transmute(pow.address()) };
    assert_eq!(pow(2.0, 10.0), 1024.0);
}

#[test]
fn natives_by_absolute_path_version_is_1() {
    // On Windows a Unix path from the Linux build host: rooted, on the current drive (Z: under
    // Wine), though without a drive letter not "absolute" to Windows.
    assert!(Path::new(NATIVES).is_absolute() || cfg!(windows) && Path::new(NATIVES).has_root());
    let version = natives().find("gatun_test_natives_version").unwrap();
    assert_eq!(version.library(), Some(NATIVES));
    // SAFETY: `int gatun_test_natives_version(void)`.
    assert_eq!(unsafe { call_int_void(&version) }, 1);
}

#[test]
fn missing_symbol_names_symbol_and_library() {
    let err = natives().find("gatun_no_such_symbol").unwrap_err();
    assert_eq!(
        err,
        Error::SymbolNotFound {
            symbol: "gatun_no_such_symbol".into(),
            library: Some(NATIVES.into()),
        }
    );
    assert_eq!(
        err.to_string(),
        format!("symbol `gatun_no_such_symbol` not found in {NATIVES}")
    );
}

#[cfg(unix)]
#[test]
fn missing_library_names_library_and_loader_reason() {
    // SAFETY: nothing is loaded.
    let err = unsafe { SymbolLookup::library("libgatun_no_such_library.so") }.unwrap_err();
    let Error::LibraryLoad { library, reason } = &err else {
        panic!("expected LibraryLoad, got {err:?}")
    };
    assert_eq!(library, "libgatun_no_such_library.so");
    if cfg!(target_vendor = "apple") {
        // dyld's message lists the paths it tried; its wording is not pinned here.
        return;
    }
    assert!(reason.contains("No such file or directory"), "{reason}");
    assert_eq!(
        err.to_string(),
        "cannot load library libgatun_no_such_library.so: \
         cannot open shared object file: No such file or directory",
        "the loader's message without the name repeated"
    );
}

#[cfg(unix)]
#[test]
fn ld_script_error_names_the_real_soname() {
    // Debian's multiarch development files of the target (libc6-dev, libc6-dev:arm64 for
    // AArch64 under qemu): `libc.so` is a GNU ld script on every glibc target, `libm.so` on
    // x86-64 (on AArch64 it is a symbolic link to `libm.so.6`, an ELF file).
    let dir = format!("/usr/lib/{}-linux-gnu", std::env::consts::ARCH);
    let mut checked = 0;
    for lib in ["libm.so", "libc.so"] {
        let script = format!("{dir}/{lib}");
        let is_script = std::fs::read(&script).is_ok_and(|b| b.starts_with(b"/* GNU ld script"));
        if !is_script {
            continue;
        }
        for name in [script.as_str(), lib] {
            // SAFETY: the load fails (not an ELF file); nothing runs.
            let err = unsafe { SymbolLookup::library(name) }.unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, Error::LibraryLoad { .. }), "{err:?}");
            assert!(text.contains("GNU ld script"), "{text}");
            assert!(text.contains(&format!("load `{lib}.6` instead")), "{text}");
        }
        checked += 1;
    }
    if checked == 0 {
        eprintln!("note: no ld script in {dir} (install libc6-dev); ld-script test skipped");
    }
    if Path::new(&format!("{dir}/libc.so")).exists() {
        assert!(checked >= 1, "{dir}/libc.so exists but is not an ld script");
    }
}

#[cfg(unix)]
#[test]
fn symbol_keeps_its_library_loaded() {
    // A private copy, so no other test holds a reference to the same library.
    let copy = std::env::temp_dir().join(format!("gatun-keepalive-{}.so", std::process::id()));
    std::fs::copy(NATIVES, &copy).unwrap();
    let c_copy = CString::new(copy.to_str().unwrap()).unwrap();
    let is_loaded = || {
        // SAFETY: RTLD_NOLOAD never loads; a handle it returns is closed at once.
        unsafe {
            let handle = libc::dlopen(c_copy.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
            !handle.is_null() && libc::dlclose(handle) == 0
        }
    };

    // SAFETY: the test natives have no initialisers.
    let lookup = unsafe { SymbolLookup::library(&copy) }.unwrap();
    let version = lookup.find("gatun_test_natives_version").unwrap();
    let clone = version.clone();
    drop(lookup);
    assert!(is_loaded());
    // SAFETY: `int gatun_test_natives_version(void)`, still mapped.
    assert_eq!(unsafe { call_int_void(&version) }, 1);
    drop(version);
    // SAFETY: as above; the clone still holds the library.
    assert_eq!(unsafe { call_int_void(&clone) }, 1);
    drop(clone);
    assert!(!is_loaded(), "the last Symbol's drop closes the library");
    std::fs::remove_file(&copy).unwrap();
}

#[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
#[test]
fn find_versioned_realpath_versions_differ() {
    let lookup = SymbolLookup::default_lookup();
    let new = lookup.find_versioned("realpath", "GLIBC_2.3").unwrap();
    let old = lookup.find_versioned("realpath", "GLIBC_2.2.5").unwrap();
    assert!(!new.address().is_null() && !old.address().is_null());
    assert_ne!(new.address(), old.address());
    assert_eq!(new.name(), Some("realpath@GLIBC_2.3"));
    // The default version is the newest.
    assert_eq!(lookup.find("realpath").unwrap().address(), new.address());
    // realpath@GLIBC_2.3 allocates the result when given a null buffer.
    // SAFETY: `char *realpath(const char *, char *)`; the result is freed with free().
    unsafe {
        use std::ffi::c_char;
        let realpath: extern "C" fn(*const c_char, *mut c_char) -> *mut c_char =
            std::mem::transmute(new.address());
        let resolved = realpath(c"/".as_ptr(), std::ptr::null_mut());
        assert!(!resolved.is_null());
        assert_eq!(std::ffi::CStr::from_ptr(resolved).to_bytes(), b"/");
        libc::free(resolved.cast());
    }
    let err = lookup.find_versioned("realpath", "GLIBC_9.9").unwrap_err();
    assert!(
        matches!(&err, Error::SymbolNotFound { symbol, .. } if symbol == "realpath@GLIBC_9.9"),
        "{err:?}"
    );
}

#[test]
fn every_rtld_flag_combination_loads() {
    for global in [false, true] {
        for lazy in [false, true] {
            // SAFETY: the test natives have no initialisers.
            let lookup = unsafe { SymbolLookup::library_with(NATIVES, LoadFlags { global, lazy }) }
                .unwrap_or_else(|e| panic!("global={global} lazy={lazy}: {e}"));
            let version = lookup.find("gatun_test_natives_version").unwrap();
            // SAFETY: `int gatun_test_natives_version(void)`.
            assert_eq!(unsafe { call_int_void(&version) }, 1);
        }
    }
}

#[cfg(unix)]
#[test]
fn or_searches_in_order_and_reports_all_libraries() {
    let lookup = natives().or(SymbolLookup::default_lookup());
    assert_eq!(
        lookup.find("gatun_test_natives_version").unwrap().library(),
        Some(NATIVES)
    );
    assert_eq!(
        lookup.find("strlen").unwrap().address(),
        libc::strlen as *const c_void
    );
    let err = lookup.find("gatun_no_such_symbol").unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "symbol `gatun_no_such_symbol` not found in {NATIVES} or the process or "
        )),
        "{err}"
    );
}

#[test]
fn symbols_cross_threads() {
    fn assert_send_sync<T: Clone + Send + Sync>() {}
    assert_send_sync::<Symbol>();
    assert_send_sync::<SymbolLookup>();
    let lookup = natives();
    let joins: Vec<_> = (0..4)
        .map(|_| {
            let lookup = lookup.clone();
            std::thread::spawn(move || lookup.find("gatun_test_natives_version").unwrap())
        })
        .collect();
    for join in joins {
        let symbol = join.join().unwrap();
        // SAFETY: `int gatun_test_natives_version(void)`.
        assert_eq!(unsafe { call_int_void(&symbol) }, 1);
    }
}

// ---- Windows ----

#[cfg(windows)]
mod windows {
    use std::ffi::c_void;

    use gatun::linker::{FunctionDescriptor as FD, Linker, LoadFlags, Symbol, SymbolLookup};
    use gatun::Value;
    use gatun::{layout::ValueLayout as V, Error};

    use super::{call_int_void, natives, NATIVES};

    #[link(name = "kernel32")]
    extern "system" {
        fn GetModuleHandleW(name: *const u16) -> *mut c_void;
    }

    /// Calls `symbol` through a downcall handle of `d`.
    ///
    /// # Safety
    /// `symbol` is a function of that C type, and `args` fit it.
    unsafe fn call(symbol: &Symbol, d: &FD, args: &[Value<'_>]) -> Value<'static> {
        let h = Linker::native().downcall(symbol, d, &[]).unwrap();
        // SAFETY: forwarded to the caller.
        unsafe { h.invoke(args) }.unwrap()
    }

    #[test]
    fn default_lookup_has_the_c_runtime_and_kernel32() {
        let lookup = SymbolLookup::default_lookup();
        let strlen = lookup.find("strlen").unwrap();
        assert_eq!(strlen.library(), Some("msvcrt.dll"));
        let s = c"gatun on Windows";
        // SAFETY: size_t strlen(const char *) on a NUL-terminated string.
        let n = unsafe {
            call(
                &strlen,
                &FD::of(V::U64, [V::ADDRESS]),
                &[Value::Address(s.as_ptr() as *mut c_void)],
            )
        };
        assert_eq!(n, Value::U64(16));
        // C `long` is 4 bytes on Windows (LLP64): labs takes and returns an int32.
        // SAFETY: long labs(long).
        let r = unsafe {
            call(
                &lookup.find("labs").unwrap(),
                &FD::of(V::I32, [V::I32]),
                &[Value::I32(-123_456)],
            )
        };
        assert_eq!(r, Value::I32(123_456));
        let pid = lookup.find("GetCurrentProcessId").unwrap();
        assert_eq!(pid.library(), Some("kernel32.dll"));
        // SAFETY: DWORD GetCurrentProcessId(void).
        let r = unsafe { call(&pid, &FD::of(V::U32, []), &[]) };
        assert_eq!(r, Value::U32(std::process::id()));
    }

    #[test]
    fn system_dlls_by_name() {
        // SAFETY: system DLLs, already loaded by Rust's standard library.
        let ws2 = unsafe { SymbolLookup::library("ws2_32.dll") }.unwrap();
        // byte-order helpers need no WSAStartup
        // SAFETY: u_short htons(u_short).
        let r = unsafe {
            call(
                &ws2.find("htons").unwrap(),
                &FD::of(V::U16, [V::U16]),
                &[Value::U16(0x1234)],
            )
        };
        assert_eq!(r, Value::U16(0x3412));
        // SAFETY: u_long ntohl(u_long) (4 bytes).
        let r = unsafe {
            call(
                &ws2.find("ntohl").unwrap(),
                &FD::of(V::U32, [V::U32]),
                &[Value::U32(0x1122_3344)],
            )
        };
        assert_eq!(r, Value::U32(0x4433_2211));
        // SAFETY: as above.
        let k32 = unsafe { SymbolLookup::library("kernel32.dll") }.unwrap();
        let tid = k32.find("GetCurrentThreadId").unwrap();
        assert_eq!(tid.library(), Some("kernel32.dll"));
        // SAFETY: DWORD GetCurrentThreadId(void), twice on this thread, once on another.
        let (a, b) = unsafe {
            (
                call(&tid, &FD::of(V::U32, []), &[]),
                call(&tid, &FD::of(V::U32, []), &[]),
            )
        };
        assert_eq!(a, b);
        let other = std::thread::spawn(move || {
            // SAFETY: as above.
            match unsafe { call(&tid, &FD::of(V::U32, []), &[]) } {
                Value::U32(id) => id,
                v => panic!("GetCurrentThreadId returned {v:?}"),
            }
        })
        .join()
        .unwrap();
        assert_ne!(a, Value::U32(other));
    }

    #[test]
    fn or_searches_in_order_and_reports_all_libraries() {
        let lookup = natives().or(SymbolLookup::default_lookup());
        assert_eq!(
            lookup.find("gatun_test_natives_version").unwrap().library(),
            Some(NATIVES)
        );
        assert_eq!(lookup.find("strlen").unwrap().library(), Some("msvcrt.dll"));
        let err = lookup.find("gatun_no_such_symbol").unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "symbol `gatun_no_such_symbol` not found in {NATIVES} or the process or "
            )),
            "{err}"
        );
    }

    #[test]
    fn missing_library_names_library_and_loader_reason() {
        // SAFETY: nothing is loaded.
        let err = unsafe { SymbolLookup::library("gatun_no_such_library.dll") }.unwrap_err();
        let Error::LibraryLoad { library, reason } = &err else {
            panic!("expected LibraryLoad, got {err:?}")
        };
        assert_eq!(library, "gatun_no_such_library.dll");
        // ERROR_MOD_NOT_FOUND
        assert!(reason.contains("(os error 126)"), "{reason}");
    }

    #[test]
    fn symbol_versions_are_never_found() {
        // SAFETY: the test natives have no initialisers.
        let lookup = unsafe { SymbolLookup::library_with(NATIVES, LoadFlags::default()) }.unwrap();
        let err = lookup
            .find_versioned("gatun_test_natives_version", "V1")
            .unwrap_err();
        assert!(matches!(err, Error::SymbolNotFound { .. }), "{err:?}");
    }

    #[test]
    fn symbol_keeps_its_library_loaded() {
        // A private copy, so no other test holds a reference to the same module.
        let copy = std::env::temp_dir().join(format!("gatun-keepalive-{}.dll", std::process::id()));
        std::fs::copy(NATIVES, &copy).unwrap();
        let wide: Vec<u16> = copy.to_str().unwrap().encode_utf16().chain([0]).collect();
        // SAFETY: a NUL-terminated UTF-16 name; GetModuleHandleW takes no reference.
        let is_loaded = || !unsafe { GetModuleHandleW(wide.as_ptr()) }.is_null();

        // SAFETY: the test natives have no initialisers.
        let lookup = unsafe { SymbolLookup::library(&copy) }.unwrap();
        let version = lookup.find("gatun_test_natives_version").unwrap();
        let clone = version.clone();
        drop(lookup);
        assert!(is_loaded());
        // SAFETY: `int gatun_test_natives_version(void)`, still mapped.
        assert_eq!(unsafe { call_int_void(&version) }, 1);
        drop(version);
        // SAFETY: as above; the clone still holds the module.
        assert_eq!(unsafe { call_int_void(&clone) }, 1);
        drop(clone);
        assert!(!is_loaded(), "the last Symbol's drop frees the module");
        std::fs::remove_file(&copy).unwrap();
    }
}
