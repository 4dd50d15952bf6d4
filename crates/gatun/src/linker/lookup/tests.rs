use super::*;

#[test]
fn from_address_has_no_name_and_no_library() {
    // SAFETY: the symbol is only inspected, never called.
    let symbol = unsafe { Symbol::from_address(std::ptr::without_provenance(0x1234)) };
    assert_eq!(symbol.address() as usize, 0x1234);
    assert_eq!(symbol.name(), None);
    assert_eq!(symbol.library(), None);
    assert_eq!(symbol.to_string(), "0x1234");
}

#[test]
fn names_with_nul_are_rejected() {
    assert_eq!(c_string("st\0rlen"), Err(Error::InteriorNul { index: 2 }));
}

#[test]
#[cfg_attr(miri, ignore)]
fn default_lookup_is_the_process_then_the_c_libraries() {
    let lookup = SymbolLookup::default_lookup();
    let names: Vec<&str> = lookup.libraries.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names[0], "the process");
    #[cfg(all(unix, not(target_vendor = "apple")))]
    assert!(names[1].contains("libc"), "{names:?}");
    #[cfg(windows)]
    assert_eq!(names[1..], [windows::C_RUNTIME, "kernel32.dll"]);
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    assert_eq!(names[2..], ["libm.so.6"]);
    #[cfg(target_vendor = "apple")]
    assert_eq!(names[1..], ["/usr/lib/libSystem.B.dylib"]);
    // Cached: every call shares the same handles.
    let again = SymbolLookup::default_lookup();
    assert!(Arc::ptr_eq(&lookup.libraries[0], &again.libraries[0]));
}

#[test]
#[cfg_attr(miri, ignore)]
fn found_symbol_prints_name_address_and_library() {
    let symbol = SymbolLookup::default_lookup().find("strlen").unwrap();
    let text = symbol.to_string();
    assert!(text.starts_with("strlen at 0x"), "{text}");
    // On Unix the process's global scope has libc's symbols; on Windows the executable
    // exports none, so strlen comes from the C runtime.
    #[cfg(unix)]
    assert!(text.ends_with(" in the process"), "{text}");
    #[cfg(windows)]
    assert!(
        text.ends_with(&format!(" in {}", windows::C_RUNTIME)),
        "{text}"
    );
}

#[test]
#[cfg(windows)]
fn windows_dlls_load_and_export_their_functions() {
    // SAFETY: kernel32 is loaded in every process; loading it again runs nothing.
    let k32 = unsafe { SymbolLookup::library("kernel32.dll") }.unwrap();
    let tick = k32.find("GetTickCount").unwrap();
    assert!(!tick.address().is_null());
    assert_eq!(tick.library(), Some("kernel32.dll"));
    assert!(k32.find("gatun_no_such_symbol").is_err());
    // No symbol versions on Windows.
    assert!(k32.find_versioned("GetTickCount", "V1").is_err());
    // The C runtime's errno function is found by the default lookup.
    assert!(SymbolLookup::default_lookup().find("_errno").is_ok());
    // SAFETY: a missing DLL runs nothing.
    let err = unsafe { SymbolLookup::library("gatun_no_such_library.dll") }.unwrap_err();
    match err {
        Error::LibraryLoad { library, reason } => {
            assert_eq!(library, "gatun_no_such_library.dll");
            assert!(reason.contains("os error 126"), "{reason}");
        }
        other => panic!("expected LibraryLoad, got {other}"),
    }
}
