//! Segments handed to foreign code keep their layout's alignment: a struct return whose
//! segment is misaligned for the return layout, and a misaligned capture segment, are
//! `Error::MisalignedAccess` before any foreign code runs — a C callee may store a MEMORY-class
//! return through the hidden pointer with aligned vector stores (gcc -O2 writes
//! `sysv_a16x4_make`'s result with `movaps`), so a misaligned buffer would fault. Struct
//! *argument* segments may have any alignment: their bytes are copied (loads of at most 8
//! bytes) into registers or an aligned stack slot.
// Calls foreign code: only where the executor runs.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use common::*;
use gatun::linker::{capture_state_layout, FunctionDescriptor as FD, LinkerOption};
use gatun::memory::{Arena, MemorySegment, PrefixAllocator, SegmentAllocator};
use gatun::{Error, MemoryLayout, Result, Value};

/// A safe allocator that lies about alignment: it hands out `slice(8, n)` of a 16-aligned
/// block, whatever alignment is asked for.
struct Misaligning<'a>(MemorySegment<'a>);

impl SegmentAllocator for Misaligning<'_> {
    fn allocate(&self, byte_size: usize, _byte_alignment: usize) -> Result<MemorySegment<'_>> {
        self.0.slice(8, byte_size)
    }
}

fn a16x4() -> MemoryLayout {
    let s = st([V::F64, V::F64, V::F64, V::F64]);
    let s = s.with_byte_alignment(16).unwrap();
    assert_eq!((s.byte_size(), s.byte_alignment()), (32, 16));
    s
}

#[test]
fn misaligned_memory_return_is_an_error_not_a_crash() {
    let arena = Arena::confined();
    let block = arena.allocate(64, 16).unwrap();
    assert_eq!(block.address() % 16, 0);
    let h = link("sysv_a16x4_make", &FD::of(a16x4(), [V::F64]));
    // (AArch64: the struct is an HFA returned in v0..v3, and the return segment is checked
    // the same way, on the compiled stub and the trampoline)
    assert!(h.uses_compiled_stub());
    for h in [h.clone(), h.interpreted()] {
        let lying = Misaligning(block);
        // SAFETY: sysv_a16x4_make(double) returns the 32-byte struct.
        let err = unsafe { h.invoke_into(&lying, &[Value::F64(1.5)]) };
        match err {
            Err(Error::MisalignedAccess { address, alignment }) => {
                assert_eq!((address, alignment), (block.address() + 8, 16));
            }
            other => panic!("expected MisalignedAccess, got {other:?}"),
        }
        let dest = block.slice(8, 32).unwrap();
        // the same allocator trick through a prefix allocator is refused by the allocator
        let prefix = PrefixAllocator::new(dest);
        // SAFETY: as above.
        let err = unsafe { h.invoke_into(&prefix, &[Value::F64(1.5)]) };
        assert!(
            matches!(err, Err(Error::MisalignedAccess { .. })),
            "{err:?}"
        );

        // aligned: the right values
        // SAFETY: as above.
        let v = unsafe { h.invoke_into(&arena, &[Value::F64(1.5)]) }.unwrap();
        let Value::Segment(s) = v else {
            panic!("{v:?}")
        };
        let got: Vec<f64> = (0..4).map(|i| s.get::<f64>(i * 8).unwrap()).collect();
        assert_eq!(got, [1.5, 3.0, 4.5, 6.0]);
        let dest = block.slice(16, 32).unwrap();
        let into = PrefixAllocator::new(dest);
        // SAFETY: as above.
        let v = unsafe { h.invoke_into(&into, &[Value::F64(2.0)]) }.unwrap();
        assert!(
            matches!(v, Value::Segment(s) if s.address() == dest.address()),
            "{v:?}"
        );
        let got: Vec<f64> = (0..4).map(|i| dest.get::<f64>(i * 8).unwrap()).collect();
        assert_eq!(got, [2.0, 4.0, 6.0, 8.0]);
    }
}

#[test]
fn register_returns_check_alignment_too() {
    // a 24-byte struct of longs: MEMORY class, 8-byte aligned
    let arena = Arena::confined();
    let block = arena.allocate(64, 16).unwrap();
    let h = link(
        "sysv_l3_make",
        &FD::of(st([V::I64, V::I64, V::I64]), [V::I64; 3]),
    );
    let lying = Misaligning(block.slice(4, 40).unwrap());
    // SAFETY: sysv_l3_make(long, long, long) returns a 24-byte struct.
    let err = unsafe { h.invoke_into(&lying, &[Value::I64(1), Value::I64(2), Value::I64(3)]) };
    assert!(
        matches!(err, Err(Error::MisalignedAccess { alignment: 8, .. })),
        "{err:?}"
    );
    // a register-returned struct (rax:rdx, stored by gatun itself): the same rule
    let h = link(
        "sysv_ll_make",
        &FD::of(st([V::I64, V::I64]), [V::I64, V::I64]),
    );
    // SAFETY: returns a 16-byte struct of two longs.
    let err = unsafe { h.invoke_into(&lying, &[Value::I64(1), Value::I64(2)]) };
    assert!(
        matches!(err, Err(Error::MisalignedAccess { alignment: 8, .. })),
        "{err:?}"
    );
}

#[test]
fn misaligned_struct_arguments_are_copied_and_work() {
    let arena = Arena::confined();
    let block = arena.allocate(64, 16).unwrap();
    let src = block.slice(8, 32).unwrap();
    for (i, x) in [1.0f64, 2.0, 3.0, 4.0].into_iter().enumerate() {
        src.set::<f64>(i * 8, x).unwrap();
    }
    let h = link("sysv_a16x4_sum", &FD::of(V::F64, [a16x4()]));
    for h in [h.clone(), h.interpreted()] {
        // SAFETY: double sysv_a16x4_sum(sysv_A16x4) reads only its copy of the struct.
        let v = unsafe { h.invoke(&[Value::Segment(src)]) }.unwrap();
        assert_eq!(v, Value::F64(4321.0));
    }
}

#[test]
fn misaligned_capture_segment_is_an_error() {
    let arena = Arena::confined();
    // a capture struct's size (4 bytes on Linux, 12 on Windows) at an odd address
    let size = capture_state_layout().byte_size();
    let block = arena.allocate(size + 4, 4).unwrap();
    let misaligned = block.slice(1, size).unwrap();
    let h = link_with(
        "sysv_set_errno",
        &FD::of(V::I32, [V::I32, V::I32]),
        &[LinkerOption::CaptureCallState(&["errno"])],
    );
    // SAFETY: int sysv_set_errno(int, int) sets errno; the capture segment is checked first.
    let err = unsafe { h.invoke(&[Value::Segment(misaligned), Value::I32(7), Value::I32(-1)]) };
    match err {
        Err(Error::MisalignedAccess { address, alignment }) => {
            assert_eq!((address, alignment), (misaligned.address(), 4));
        }
        other => panic!("expected MisalignedAccess, got {other:?}"),
    }
    // SAFETY: as above.
    let cap = arena.allocate_layout(&capture_state_layout()).unwrap();
    // SAFETY: as above.
    let v = unsafe { h.invoke(&[Value::Segment(cap), Value::I32(7), Value::I32(-1)]) }.unwrap();
    assert_eq!(v, Value::I32(-1));
    let at = capture_state_layout().byte_offset_of("errno").unwrap();
    assert_eq!(cap.get::<i32>(at).unwrap(), 7);
}
