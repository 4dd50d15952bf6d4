use super::*;
use crate::capture::typed::SysCallReturn;

#[test]
fn negation_follows_the_jdk() {
    assert_eq!(negated(13), -13);
    assert_eq!(negated(0), 0);
    // The int is negated first (wrapping), then sign-extended.
    assert_eq!(negated(i32::MIN), i32::MIN as i64);
    assert_eq!(<i32 as SysCallReturn>::negated_state(13), -13);
    assert_eq!(
        <i64 as SysCallReturn>::negated_state(i32::MIN),
        i32::MIN as i64
    );
}

#[test]
fn capture_stack_holds_the_nesting_depth() {
    let s = capture_stack();
    assert_eq!(s.byte_size(), CAPTURE_NESTING * CAPTURE_SIZE);
    assert_eq!(capture_state_layout().byte_size(), CAPTURE_SIZE);
    assert_eq!(capture_state_layout().byte_alignment(), CAPTURE_ALIGN);
    // CAPTURE_NESTING frames fit without a fallback; one more falls back.
    let frames: Vec<_> = (0..CAPTURE_NESTING)
        .map(|_| s.push_frame(CAPTURE_SIZE, CAPTURE_ALIGN).unwrap())
        .collect();
    assert!(frames.iter().all(|f| !f.is_fallback()));
    let extra = s.push_frame(CAPTURE_SIZE, CAPTURE_ALIGN).unwrap();
    assert!(extra.is_fallback());
    drop(extra);
    for f in frames.into_iter().rev() {
        f.close().unwrap();
    }
}

#[test]
fn signature_parameters() {
    type F = unsafe extern "C" fn(i32, *mut u8, i64) -> i64;
    assert_eq!(
        <F as SysCallSignature>::PARAMETERS,
        &[ScalarKind::I32, ScalarKind::Pointer, ScalarKind::I64]
    );
    type G = unsafe extern "C" fn() -> i32;
    assert!(<G as SysCallSignature>::PARAMETERS.is_empty());
}
