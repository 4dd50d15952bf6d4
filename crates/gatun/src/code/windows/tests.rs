//! Code placed in regions of their own on x86-64 Windows.

use super::PAGE;
use crate::code::{mapped_code_bytes, ExecutableCode, GRANULE};
use crate::error::Error;

#[test]
fn code_runs_from_its_own_region_and_is_counted() {
    let before = mapped_code_bytes();
    // SAFETY: `mov eax, 42; ret`, called below as the `extern "C" fn() -> i32` it is.
    let code = unsafe { ExecutableCode::new(&[0xB8, 42, 0, 0, 0, 0xC3]) }.unwrap();
    assert_eq!(code.entry() as usize % GRANULE, 0);
    assert_eq!(code.bytes(), [0xB8, 42, 0, 0, 0, 0xC3]);
    assert!(mapped_code_bytes() >= before + PAGE);
    // SAFETY: the bytes are a complete `extern "C" fn() -> i32`.
    let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(code.entry()) };
    assert_eq!(f(), 42);
    drop(code);
}

#[test]
fn empty_code_is_rejected() {
    // SAFETY: rejected before anything is mapped.
    let err = unsafe { ExecutableCode::new(&[]) }.unwrap_err();
    assert!(matches!(err, Error::InvalidSize { size: 0, .. }), "{err}");
}
