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
fn the_stack_capture_buffer_is_the_capture_layout() {
    // `invoke_state`/`invoke_raw` use `[i32; CAPTURE_SIZE / 4]` as the capture struct.
    assert_eq!(capture_state_layout().byte_size(), CAPTURE_SIZE);
    assert_eq!(
        capture_state_layout().byte_alignment(),
        std::mem::align_of::<i32>()
    );
    assert_eq!(std::mem::size_of::<[i32; CAPTURE_SIZE / 4]>(), CAPTURE_SIZE);
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
