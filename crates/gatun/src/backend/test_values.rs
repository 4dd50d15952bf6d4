//! Helpers of the executors' case tables (`aarch64/tests.rs`, `win64/tests.rs`, the SysV
//! executor's tests): struct layouts, segments holding a Rust value, reading one back, the
//! linker stack's emptiness, and the struct-entry path of `invoke_into` run on every backend.

// Each executor's case table uses its own share of these.
#![allow(dead_code)]

use crate::layout::{MemoryLayout, ValueLayout as V};
use crate::memory::{MemorySegment, SegmentAllocator};

/// The arena the case tables allocate from.
pub(crate) type Arena = crate::memory::ConfinedArena;

/// A fresh confined arena.
pub(crate) fn arena() -> Arena {
    crate::memory::Arena::confined()
}

/// The C struct of `members`.
pub(crate) fn st<const N: usize>(members: [V; N]) -> MemoryLayout {
    MemoryLayout::c_struct(members).unwrap()
}

/// A segment of `arena` with `T`'s size and alignment holding `v`.
pub(crate) fn seg_of<'a, T: Copy>(arena: &'a Arena, v: T) -> MemorySegment<'a> {
    let s = arena
        .allocate(std::mem::size_of::<T>(), std::mem::align_of::<T>())
        .unwrap();
    // SAFETY: `s` has T's size and alignment.
    unsafe { s.as_ptr().cast::<T>().write(v) };
    s
}

/// The `T` at the start of `s` (at least `T`'s size; read unaligned).
pub(crate) fn read<T: Copy>(s: &MemorySegment<'_>) -> T {
    assert!(s.byte_size() >= std::mem::size_of::<T>());
    // SAFETY: size checked; an unaligned read.
    unsafe { s.as_ptr().cast::<T>().read_unaligned() }
}

/// Asserts that every linker-stack frame of this thread was closed: a frame of the whole block
/// fits in it again (no heap fallback).
pub(crate) fn assert_linker_stack_is_empty() {
    let stack = crate::memory::linker_stack();
    let f = stack.push_frame(stack.byte_size(), 16).unwrap();
    assert!(!f.is_fallback(), "a linker-stack frame was left open");
}

/// A 24-byte struct of three `long`s: returned through the hidden pointer on every executor
/// (SysV AMD64 MEMORY class in rdi, AAPCS64 x8, Win64 rcx).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Long3 {
    a: i64,
    b: i64,
    c: i64,
}

thread_local! {
    /// Calls of [`long3_of`] and [`long3_none`] on this thread.
    static LONG3_CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

extern "C" fn long3_of(a: i64, d: i32) -> Long3 {
    LONG3_CALLS.with(|n| n.set(n.get() + 1));
    Long3 {
        a,
        b: a + 1,
        c: i64::from(d),
    }
}

extern "C" fn long3_none() -> Long3 {
    LONG3_CALLS.with(|n| n.set(n.get() + 1));
    Long3 { a: 1, b: 2, c: 3 }
}

/// An allocator that hands out one fixed segment, whatever size and alignment are asked for
/// (a safe `SegmentAllocator` may do that).
struct Fixed<'a>(MemorySegment<'a>);

impl SegmentAllocator for Fixed<'_> {
    fn allocate(&self, _size: usize, _align: usize) -> crate::Result<MemorySegment<'_>> {
        Ok(self.0)
    }
}

/// The struct-entry path of `invoke_into` on the native executor (a struct the stub writes
/// through the return destination, here a 24-byte return through the hidden pointer), with
/// and without arguments, against the trampoline: the right values, one call each; a short or
/// misaligned segment from a lying allocator, a wrong argument kind and a wrong count are
/// typed errors before anything is called; a capture handle of the same return (no struct
/// entry) still works.
pub(crate) fn check_struct_entry_path() {
    use crate::linker::{FunctionDescriptor as FD, Linker, LinkerOption, Symbol};
    use crate::{Error, Value};
    let calls = || LONG3_CALLS.with(std::cell::Cell::get);
    let l3 = st([V::I64, V::I64, V::I64]);
    let a = arena();
    let block = a.allocate(64, 16).unwrap();
    let with_args = [Value::I64(7), Value::I32(-3)];
    let cases: [(*const std::ffi::c_void, FD, &[Value<'_>], Long3); 2] = [
        (
            long3_of as *const std::ffi::c_void,
            FD::of(&l3, [V::I64, V::I32]),
            &with_args,
            long3_of(7, -3),
        ),
        (
            long3_none as *const std::ffi::c_void,
            FD::of(&l3, []),
            &[],
            long3_none(),
        ),
    ];
    for (f, d, args, want) in cases {
        // SAFETY: `f` is a Rust function of the descriptor's C type, alive for the program.
        let sym = unsafe { Symbol::from_address(f) };
        let h = Linker::native().downcall(&sym, &d, &[]).unwrap();
        assert!(h.uses_compiled_stub() && h.uses_struct_entry(), "{h:?}");
        let t = h.interpreted();
        assert!(!t.uses_struct_entry());
        for h in [&h, &t] {
            let before = calls();
            // fresh segments from an arena, and one reused segment
            // SAFETY: `f` has this type.
            let v = unsafe { h.invoke_into(&a, args) }.unwrap();
            let Value::Segment(s) = v else {
                panic!("{v:?}")
            };
            assert_eq!(read::<Long3>(&s), want);
            let reused = Fixed(block.slice(16, 24).unwrap());
            for _ in 0..3 {
                // SAFETY: as above.
                let v = unsafe { h.invoke_into(&reused, args) }.unwrap();
                assert!(matches!(v, Value::Segment(s) if s.address() == block.address() + 16));
                assert_eq!(read::<Long3>(&block.slice(16, 24).unwrap()), want);
            }
            assert_eq!(calls(), before + 4);
            // a short segment: OutOfBounds before the call
            let short = Fixed(block.slice(0, 16).unwrap());
            // SAFETY: as above; nothing is called.
            let e = unsafe { h.invoke_into(&short, args) }.unwrap_err();
            assert_eq!(
                e,
                Error::OutOfBounds {
                    offset: 0,
                    access_size: 24,
                    segment_size: 16
                }
            );
            // a misaligned one: MisalignedAccess before the call
            let odd = Fixed(block.slice(4, 24).unwrap());
            // SAFETY: as above; nothing is called.
            let e = unsafe { h.invoke_into(&odd, args) }.unwrap_err();
            assert_eq!(
                e,
                Error::MisalignedAccess {
                    address: block.address() + 4,
                    alignment: 8
                }
            );
            // a wrong count
            let more: Vec<Value<'_>> = args.iter().copied().chain([Value::I32(0)]).collect();
            // SAFETY: as above; nothing is called.
            let e = unsafe { h.invoke_into(&reused, &more) }.unwrap_err();
            assert!(matches!(e, Error::ArgumentCount { .. }), "{e:?}");
            // a wrong kind (the stub rejects it, the checked path names it)
            if !args.is_empty() {
                // SAFETY: as above; nothing is called.
                let e = unsafe { h.invoke_into(&reused, &[Value::F64(7.0), Value::I32(-3)]) }
                    .unwrap_err();
                assert!(
                    matches!(&e, Error::ValueMismatch { position, .. }
                        if position.starts_with("argument 1 of the function at 0x")),
                    "{e:?}"
                );
            }
            assert_eq!(calls(), before + 4, "an error called the function");
            // an integer of another kind that fits: converted (the stub's retry, or the
            // trampoline's conversion), the same result
            if !args.is_empty() {
                // SAFETY: as above.
                let v = unsafe { h.invoke_into(&reused, &[Value::I32(7), Value::I64(-3)]) };
                assert!(matches!(v, Ok(Value::Segment(_))), "{v:?}");
                assert_eq!(read::<Long3>(&block.slice(16, 24).unwrap()), want);
                assert_eq!(calls(), before + 5);
            }
        }
        // a capture handle of the same return has no struct entry and still works
        let opts = [LinkerOption::CaptureCallState(&["errno"])];
        let c = Linker::native().downcall(&sym, &d, &opts).unwrap();
        assert!(!c.uses_struct_entry());
        let cap = a
            .allocate_layout(&crate::linker::capture_state_layout())
            .unwrap();
        let mut cargs = vec![Value::Segment(cap)];
        cargs.extend_from_slice(args);
        // SAFETY: as above.
        let v = unsafe { c.invoke_into(&a, &cargs) }.unwrap();
        let Value::Segment(s) = v else {
            panic!("{v:?}")
        };
        assert_eq!(read::<Long3>(&s), want);
    }
}
