//! Unit tests of the memory module: segment bounds and alignment checks, slices, copies, C
//! strings, dynamic values, the slicing and prefix allocators and the heap arenas. Pure Rust:
//! these run under Miri (`cargo +nightly miri test -p gatun --lib`), with smaller counts there.

use std::ffi::c_void;

use super::*;
use crate::error::Error;
use crate::layout::{MemoryLayout, PointerTarget, ValueLayout};
use crate::value::Value;

/// An 8-byte-aligned byte buffer, so aligned offsets are aligned addresses.
#[repr(C, align(16))]
struct Aligned<const N: usize>([u8; N]);

impl<const N: usize> Aligned<N> {
    fn new() -> Self {
        Aligned([0; N])
    }
    fn segment(&mut self) -> MemorySegment<'_> {
        MemorySegment::of_slice(&mut self.0)
    }
}

// ---------------------------------------------------------------------------------------------
// Bounds and alignment
// ---------------------------------------------------------------------------------------------

#[test]
fn get_and_set_every_scalar() {
    let mut buf = Aligned::<64>::new();
    let seg = buf.segment();
    seg.set::<bool>(0, true).unwrap();
    seg.set::<i8>(1, -5).unwrap();
    seg.set::<u8>(2, 250).unwrap();
    seg.set::<i16>(4, -30_000).unwrap();
    seg.set::<u16>(6, 60_000).unwrap();
    seg.set::<i32>(8, -2_000_000_000).unwrap();
    seg.set::<u32>(12, 4_000_000_000).unwrap();
    seg.set::<i64>(16, i64::MIN).unwrap();
    seg.set::<u64>(24, u64::MAX).unwrap();
    seg.set::<f32>(32, 1.5).unwrap();
    seg.set::<f64>(40, -2.25).unwrap();
    let p = 0x1234_5678usize as *mut c_void;
    seg.set::<*mut c_void>(48, p).unwrap();
    seg.set::<usize>(56, usize::MAX - 1).unwrap();

    assert!(seg.get::<bool>(0).unwrap());
    assert_eq!(seg.get::<i8>(1).unwrap(), -5);
    assert_eq!(seg.get::<u8>(2).unwrap(), 250);
    assert_eq!(seg.get::<i16>(4).unwrap(), -30_000);
    assert_eq!(seg.get::<u16>(6).unwrap(), 60_000);
    assert_eq!(seg.get::<i32>(8).unwrap(), -2_000_000_000);
    assert_eq!(seg.get::<u32>(12).unwrap(), 4_000_000_000);
    assert_eq!(seg.get::<i64>(16).unwrap(), i64::MIN);
    assert_eq!(seg.get::<u64>(24).unwrap(), u64::MAX);
    assert_eq!(seg.get::<f32>(32).unwrap(), 1.5);
    assert_eq!(seg.get::<f64>(40).unwrap(), -2.25);
    assert_eq!(seg.get::<*mut c_void>(48).unwrap(), p);
    assert_eq!(seg.get::<*const u8>(48).unwrap(), p as *const u8);
    assert_eq!(seg.get::<usize>(56).unwrap(), usize::MAX - 1);
    // Native byte order.
    assert_eq!(
        seg.get::<u8>(12).unwrap(),
        4_000_000_000u32.to_ne_bytes()[0]
    );
}

#[test]
fn bool_reads_any_nonzero_byte_as_true() {
    let mut buf = [0u8, 1, 2, 0xff];
    let seg = MemorySegment::of_slice(&mut buf);
    let read: Vec<bool> = (0..4).map(|i| seg.get::<bool>(i).unwrap()).collect();
    assert_eq!(read, [false, true, true, true]);
    assert_eq!(
        seg.get_value(&ValueLayout::BOOL, 2).unwrap(),
        Value::Bool(true)
    );
}

#[test]
fn out_of_bounds_errors_are_exact() {
    let mut buf = Aligned::<16>::new();
    let seg = buf.segment();
    assert_eq!(
        seg.get::<i32>(16),
        Err(Error::OutOfBounds {
            offset: 16,
            access_size: 4,
            segment_size: 16
        })
    );
    assert_eq!(
        seg.get::<u64>(12),
        Err(Error::OutOfBounds {
            offset: 12,
            access_size: 8,
            segment_size: 16
        })
    );
    assert_eq!(
        seg.set::<u8>(16, 1),
        Err(Error::OutOfBounds {
            offset: 16,
            access_size: 1,
            segment_size: 16
        })
    );
    assert_eq!(
        seg.get_unaligned::<i16>(15),
        Err(Error::OutOfBounds {
            offset: 15,
            access_size: 2,
            segment_size: 16
        })
    );
    // offset + size overflows usize: still a clean error.
    assert_eq!(
        seg.get::<i32>(usize::MAX - 1),
        Err(Error::OutOfBounds {
            offset: usize::MAX - 1,
            access_size: 4,
            segment_size: 16
        })
    );
    assert_eq!(
        seg.set_unaligned::<f64>(usize::MAX, 0.0),
        Err(Error::OutOfBounds {
            offset: usize::MAX,
            access_size: 8,
            segment_size: 16
        })
    );
    assert_eq!(
        seg.get_value(&ValueLayout::I64, 9),
        Err(Error::OutOfBounds {
            offset: 9,
            access_size: 8,
            segment_size: 16
        })
    );
    // The last in-bounds element works.
    seg.set::<u32>(12, 7).unwrap();
    assert_eq!(seg.get::<u32>(12).unwrap(), 7);
    let message = seg.get::<i32>(16).unwrap_err().to_string();
    assert_eq!(
        message,
        "out of bounds: access of 4 bytes at offset 16 in a segment of 16 bytes"
    );
}

#[test]
fn misaligned_access_is_an_error_with_the_address() {
    let mut buf = Aligned::<32>::new();
    let seg = buf.segment();
    let base = seg.address();
    assert_eq!(base % 16, 0);
    assert_eq!(
        seg.get::<i32>(2),
        Err(Error::MisalignedAccess {
            address: base + 2,
            alignment: 4
        })
    );
    assert_eq!(
        seg.set::<f64>(4, 1.0),
        Err(Error::MisalignedAccess {
            address: base + 4,
            alignment: 8
        })
    );
    assert_eq!(
        seg.get::<u16>(1),
        Err(Error::MisalignedAccess {
            address: base + 1,
            alignment: 2
        })
    );
    // A failed write writes nothing.
    assert_eq!(seg.to_vec(), vec![0u8; 32]);
    // Alignment is checked on the absolute address, not the offset.
    let odd = seg.slice(1, 16).unwrap();
    assert_eq!(
        odd.get::<i32>(0),
        Err(Error::MisalignedAccess {
            address: base + 1,
            alignment: 4
        })
    );
    odd.get::<i32>(3).unwrap();
    // Bounds are checked before alignment.
    assert!(matches!(seg.get::<i64>(30), Err(Error::OutOfBounds { .. })));
}

#[test]
fn unaligned_accessors() {
    let mut buf = Aligned::<32>::new();
    let seg = buf.segment();
    seg.set_unaligned::<u32>(1, 0xdead_beef).unwrap();
    assert_eq!(seg.get_unaligned::<u32>(1).unwrap(), 0xdead_beef);
    seg.set_unaligned::<f64>(19, 3.25).unwrap();
    assert_eq!(seg.get_unaligned::<f64>(19).unwrap(), 3.25);
    let mut bytes = [0u8; 4];
    seg.copy_to_slice(1, &mut bytes).unwrap();
    assert_eq!(bytes, 0xdead_beefu32.to_ne_bytes());
    // A layout with lowered alignment permits the unaligned offset through get_value.
    let packed = ValueLayout::U32.with_byte_alignment(1).unwrap();
    assert_eq!(seg.get_value(&packed, 1).unwrap(), Value::U32(0xdead_beef));
    seg.set_value(&packed, 5, &Value::U32(9)).unwrap();
    assert_eq!(seg.get_unaligned::<u32>(5).unwrap(), 9);
    assert!(matches!(
        seg.get_value(&ValueLayout::U32, 1),
        Err(Error::MisalignedAccess { alignment: 4, .. })
    ));
}

// ---------------------------------------------------------------------------------------------
// Dynamic values
// ---------------------------------------------------------------------------------------------

#[test]
fn get_value_and_set_value_round_trip_every_kind() {
    let mut buf = Aligned::<16>::new();
    let seg = buf.segment();
    let values = [
        Value::Bool(true),
        Value::I8(-1),
        Value::U8(200),
        Value::I16(-300),
        Value::U16(65_000),
        Value::I32(-70_000),
        Value::U32(3_000_000_000),
        Value::I64(-(1 << 40)),
        Value::U64(1 << 63),
        Value::F32(0.5),
        Value::F64(1e300),
        Value::Address(0x1000 as *mut c_void),
    ];
    for v in values {
        let kind = v.scalar_kind().unwrap();
        let layout = ValueLayout::new(kind);
        seg.fill(0xaa);
        seg.set_value(&layout, 8, &v).unwrap();
        assert_eq!(seg.get_value(&layout, 8).unwrap(), v, "{kind}");
        // Only the value's bytes were written.
        if kind.byte_size() < 8 {
            assert_eq!(seg.get::<u8>(8 + kind.byte_size()).unwrap(), 0xaa, "{kind}");
        }
        assert_eq!(seg.get::<u8>(7).unwrap(), 0xaa, "{kind}");
    }
}

#[test]
fn set_value_rejects_the_wrong_kind() {
    let mut buf = Aligned::<8>::new();
    let seg = buf.segment();
    assert_eq!(
        seg.set_value(&ValueLayout::I32, 0, &Value::I64(1)),
        Err(Error::ValueMismatch {
            position: "offset 0".into(),
            expected: "i32".into(),
            found: "i64".into(),
        })
    );
    assert!(matches!(
        seg.set_value(&ValueLayout::F64, 0, &Value::Void),
        Err(Error::ValueMismatch { .. })
    ));
    assert!(matches!(
        seg.set_value(&ValueLayout::ADDRESS, 0, &Value::Segment(seg)),
        Err(Error::ValueMismatch { .. })
    ));
    assert_eq!(seg.to_vec(), vec![0u8; 8]);
}

// ---------------------------------------------------------------------------------------------
// Slices, copies, fill, byte views
// ---------------------------------------------------------------------------------------------

#[test]
fn slices() {
    let mut buf = Aligned::<32>::new();
    let seg = buf.segment();
    let s = seg.slice(8, 16).unwrap();
    assert_eq!((s.address(), s.byte_size()), (seg.address() + 8, 16));
    assert!(s.overlaps(&seg) && seg.overlaps(&s));
    s.set::<u64>(8, 42).unwrap();
    assert_eq!(seg.get::<u64>(16).unwrap(), 42); // views alias the same bytes
                                                 // Slices of slices, and the edges.
    let ss = s.slice(8, 8).unwrap();
    assert_eq!(ss.get::<u64>(0).unwrap(), 42);
    assert_eq!(seg.slice(32, 0).unwrap().byte_size(), 0);
    assert_eq!(seg.slice(0, 32).unwrap(), seg);
    assert_eq!(
        s.slice(8, 9),
        Err(Error::OutOfBounds {
            offset: 8,
            access_size: 9,
            segment_size: 16
        })
    );
    assert_eq!(
        seg.slice(usize::MAX, 2),
        Err(Error::OutOfBounds {
            offset: usize::MAX,
            access_size: 2,
            segment_size: 32
        })
    );
    // slice_from.
    let tail = seg.slice_from(24).unwrap();
    assert_eq!(tail.byte_size(), 8);
    assert!(seg.slice_from(32).unwrap().is_empty());
    assert_eq!(
        seg.slice_from(33),
        Err(Error::OutOfBounds {
            offset: 33,
            access_size: 0,
            segment_size: 32
        })
    );
    // Disjoint slices do not overlap; empty ones never do.
    let a = seg.slice(0, 8).unwrap();
    let b = seg.slice(8, 8).unwrap();
    assert!(!a.overlaps(&b) && !b.overlaps(&a));
    assert!(!seg.slice(4, 0).unwrap().overlaps(&seg));
}

#[test]
fn copy_from_and_byte_copies() {
    let mut a = *b"hello, segment!!";
    let mut b = [0u8; 20];
    let src = MemorySegment::of_slice(&mut a);
    let dst = MemorySegment::of_slice(&mut b);
    dst.copy_from(&src).unwrap();
    assert_eq!(&dst.to_vec()[..16], b"hello, segment!!");
    assert_eq!(&dst.to_vec()[16..], &[0; 4]);
    // The source must fit.
    assert_eq!(
        src.copy_from(&dst),
        Err(Error::OutOfBounds {
            offset: 0,
            access_size: 20,
            segment_size: 16
        })
    );
    // Overlapping copies behave like memmove.
    let right = dst.slice(2, 16).unwrap();
    right.copy_from(&dst.slice(0, 16).unwrap()).unwrap();
    assert_eq!(&dst.to_vec()[..18], b"hehello, segment!!");
    // copy_from_slice / copy_to_slice.
    dst.copy_from_slice(18, b"XY").unwrap();
    let mut out = [0u8; 4];
    dst.copy_to_slice(16, &mut out).unwrap();
    assert_eq!(&out, b"!!XY");
    assert_eq!(
        dst.copy_from_slice(19, b"XY"),
        Err(Error::OutOfBounds {
            offset: 19,
            access_size: 2,
            segment_size: 20
        })
    );
    assert!(matches!(
        dst.copy_to_slice(17, &mut out),
        Err(Error::OutOfBounds { .. })
    ));
    // Empty copies are fine, even from NULL.
    dst.copy_from(&MemorySegment::NULL).unwrap();
    dst.copy_from_slice(20, &[]).unwrap();
}

#[test]
fn fill_and_byte_views() {
    let mut buf = [1u8; 10];
    let seg = MemorySegment::of_slice(&mut buf);
    seg.slice(2, 5).unwrap().fill(0x7f);
    assert_eq!(seg.to_vec(), [1, 1, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 1, 1, 1]);
    seg.fill(0);
    // SAFETY: no segment writes while `view` is alive.
    let view = unsafe { seg.as_slice() };
    assert_eq!(view, &[0u8; 10]);
    // SAFETY: no other access while `bytes` is alive.
    let bytes = unsafe { seg.as_mut_slice() };
    bytes[9] = 9;
    assert_eq!(seg.get::<u8>(9).unwrap(), 9);
    assert_eq!(buf[9], 9);
}

#[test]
fn null_segment() {
    let null = MemorySegment::NULL;
    assert_eq!(null.address(), 0);
    assert!(null.as_ptr().is_null());
    assert!(null.as_address().is_null());
    assert!(null.is_empty());
    assert_eq!(
        null.get::<u8>(0),
        Err(Error::OutOfBounds {
            offset: 0,
            access_size: 1,
            segment_size: 0
        })
    );
    assert!(null.set::<i32>(0, 1).is_err());
    assert_eq!(null.slice(0, 0).unwrap().address(), 0);
    assert!(null.slice(0, 1).is_err());
    null.fill(0xff);
    assert_eq!(null.to_vec(), Vec::<u8>::new());
    assert!(matches!(
        null.get_c_string(0),
        Err(Error::UnterminatedString {
            offset: 0,
            segment_size: 0
        })
    ));
    assert_eq!(
        format!("{null:?}"),
        "MemorySegment { address: 0x0, byte_size: 0 }"
    );
    // SAFETY: a null pointer with length 0 is the NULL segment.
    let from_null = unsafe { MemorySegment::from_raw_parts(std::ptr::null_mut(), 0) };
    assert_eq!(from_null, MemorySegment::NULL);
    assert!(from_null.as_ptr().is_null());
}

#[test]
fn of_slice_from_raw_parts_and_reinterpret() {
    let mut buf = [0u8; 8];
    let ptr = buf.as_mut_ptr();
    {
        let seg = MemorySegment::of_slice(&mut buf);
        assert_eq!(seg.as_ptr(), ptr);
        assert_eq!(seg.byte_size(), 8);
        seg.set_unaligned::<u32>(0, 0x0102_0304).unwrap();
    }
    assert_eq!(
        u32::from_ne_bytes(buf[..4].try_into().unwrap()),
        0x0102_0304
    );
    // A zero-length segment at a foreign address, made readable with reinterpret (as for a
    // pointer that C returned).
    // SAFETY: `buf` is valid for 8 bytes and only accessed through these segments below.
    let zero = unsafe { MemorySegment::from_raw_parts(buf.as_mut_ptr(), 0) };
    assert!(zero.get::<u8>(0).is_err());
    // SAFETY: as above.
    let full = unsafe { zero.reinterpret(8) };
    assert_eq!(full.get_unaligned::<u32>(0).unwrap(), 0x0102_0304);
    assert_eq!(full.address(), zero.address());
}

// ---------------------------------------------------------------------------------------------
// C strings
// ---------------------------------------------------------------------------------------------

#[test]
fn c_string_round_trips() {
    let mut buf = [0xffu8; 32];
    let seg = MemorySegment::of_slice(&mut buf);
    for s in ["", "hello", "grüße, 世界", "tab\tnewline\n"] {
        seg.set_string(3, s).unwrap();
        assert_eq!(seg.get::<u8>(3 + s.len()).unwrap(), 0);
        assert_eq!(seg.get_string(3).unwrap(), s);
        assert_eq!(seg.get_c_string(3).unwrap().as_bytes(), s.as_bytes());
    }
    // The string stops at the first NUL.
    seg.copy_from_slice(0, b"ab\0cd\0").unwrap();
    assert_eq!(seg.get_string(0).unwrap(), "ab");
    assert_eq!(seg.get_string(3).unwrap(), "cd");
    assert_eq!(seg.get_string(2).unwrap(), "");
    // Exactly fitting.
    let mut small = [0xffu8; 4];
    let seg = MemorySegment::of_slice(&mut small);
    seg.set_string(0, "abc").unwrap();
    assert_eq!(seg.get_string(0).unwrap(), "abc");
    assert_eq!(
        seg.set_string(1, "abc"),
        Err(Error::OutOfBounds {
            offset: 1,
            access_size: 4,
            segment_size: 4
        })
    );
}

#[test]
fn interior_nul_is_an_error() {
    let mut buf = [0xffu8; 16];
    let seg = MemorySegment::of_slice(&mut buf);
    assert_eq!(
        seg.set_string(0, "ab\0c"),
        Err(Error::InteriorNul { index: 2 })
    );
    assert_eq!(seg.to_vec(), vec![0xff; 16]); // nothing written
    let arena = Arena::confined();
    assert_eq!(
        arena.allocate_c_string("\0"),
        Err(Error::InteriorNul { index: 0 })
    );
    let s = arena.allocate_c_string("gatun").unwrap();
    assert_eq!(s.byte_size(), 6);
    assert_eq!(s.to_vec(), b"gatun\0");
    assert_eq!(s.get_string(0).unwrap(), "gatun");
    let empty = arena.allocate_c_string("").unwrap();
    assert_eq!(empty.to_vec(), b"\0");
}

#[test]
fn unterminated_and_invalid_strings() {
    let mut buf = *b"abcd";
    let seg = MemorySegment::of_slice(&mut buf);
    assert_eq!(
        seg.get_c_string(1),
        Err(Error::UnterminatedString {
            offset: 1,
            segment_size: 4
        })
    );
    assert_eq!(
        seg.get_string(4),
        Err(Error::UnterminatedString {
            offset: 4,
            segment_size: 4
        })
    );
    assert_eq!(
        seg.get_string(5),
        Err(Error::OutOfBounds {
            offset: 5,
            access_size: 0,
            segment_size: 4
        })
    );
    // The search is bounded by the segment, even when the NUL follows right after it.
    let mut with_nul = *b"abc\0";
    let seg = MemorySegment::of_slice(&mut with_nul);
    let head = seg.slice(0, 3).unwrap();
    assert!(matches!(
        head.get_c_string(0),
        Err(Error::UnterminatedString { .. })
    ));
    let mut bad = [b'o', b'k', 0xc3, 0x28, 0];
    let seg = MemorySegment::of_slice(&mut bad);
    assert_eq!(
        seg.get_string(0),
        Err(Error::InvalidUtf8 {
            offset: 0,
            valid_up_to: 2
        })
    );
    assert_eq!(
        seg.get_c_string(0).unwrap().as_bytes(),
        &[b'o', b'k', 0xc3, 0x28]
    );
}

// ---------------------------------------------------------------------------------------------
// Slicing and prefix allocators
// ---------------------------------------------------------------------------------------------

#[test]
fn slicing_allocator_bumps_with_alignment() {
    let mut buf = Aligned::<64>::new();
    let seg = buf.segment();
    let base = seg.address();
    let alloc = SlicingAllocator::new(seg);
    let a = alloc.allocate(3, 1).unwrap();
    assert_eq!((a.address() - base, a.byte_size()), (0, 3));
    assert_eq!(alloc.current_offset(), 3);
    let b = alloc.allocate(8, 8).unwrap(); // 5 bytes of padding consumed
    assert_eq!(b.address() - base, 8);
    assert_eq!(alloc.current_offset(), 16);
    let c = alloc.allocate_layout(&ValueLayout::I16.into()).unwrap();
    assert_eq!(c.address() - base, 16);
    let d = alloc.allocate(16, 16).unwrap();
    assert_eq!(d.address() - base, 32);
    assert!(!a.overlaps(&b) && !b.overlaps(&c) && !c.overlaps(&d));
    assert!(alloc.can_allocate(16, 1));
    assert!(!alloc.can_allocate(17, 1));
    assert!(!alloc.can_allocate(1, 3));
    // Exhaustion is an error that changes nothing.
    assert_eq!(
        alloc.allocate(17, 1),
        Err(Error::AllocatorExhausted {
            requested: 17,
            alignment: 1,
            available: 16,
            capacity: 64
        })
    );
    assert_eq!(alloc.current_offset(), 48);
    let e = alloc.allocate(16, 1).unwrap();
    assert_eq!(e.address() - base, 48);
    assert_eq!(alloc.allocate(0, 1).unwrap().byte_size(), 0);
    assert!(alloc.allocate(1, 1).is_err());
    assert_eq!(alloc.segment(), seg);
    // Not zeroed: the bytes are the segment's.
    seg.fill(0x5a);
    let mut alloc = alloc;
    alloc.reset();
    assert_eq!(alloc.current_offset(), 0);
    assert_eq!(
        alloc.allocate(4, 4).unwrap().get::<u32>(0).unwrap(),
        0x5a5a_5a5a
    );
}

#[test]
fn slicing_allocator_aligns_absolute_addresses() {
    let mut buf = Aligned::<64>::new();
    let seg = buf.segment();
    let odd = seg.slice(1, 40).unwrap();
    let alloc = SlicingAllocator::new(odd);
    let s = alloc.allocate(8, 8).unwrap();
    assert_eq!(s.address() % 8, 0);
    assert_eq!(s.address() - odd.address(), 7);
    assert_eq!(alloc.current_offset(), 15);
}

#[test]
fn allocators_validate_arguments_without_changing_state() {
    let mut buf = Aligned::<64>::new();
    let alloc = SlicingAllocator::new(buf.segment());
    alloc.allocate(1, 1).unwrap();
    for bad in [0usize, 3, 12] {
        assert_eq!(
            alloc.allocate(1, bad),
            Err(Error::InvalidAlignment { alignment: bad })
        );
    }
    assert!(matches!(
        alloc.allocate(usize::MAX, 1),
        Err(Error::SizeOverflow { .. })
    ));
    assert!(matches!(
        alloc.allocate(isize::MAX as usize, 8),
        Err(Error::SizeOverflow { .. })
    ));
    assert!(matches!(
        alloc.allocate_array(&ValueLayout::I64.into(), usize::MAX / 2),
        Err(Error::SizeOverflow { .. })
    ));
    assert_eq!(alloc.current_offset(), 1);
    assert!(matches!(
        alloc.allocate(64, 1),
        Err(Error::AllocatorExhausted { .. })
    ));
    assert_eq!(alloc.current_offset(), 1);
}

#[test]
fn prefix_allocator_reuses_the_prefix() {
    let mut buf = Aligned::<32>::new();
    let seg = buf.segment();
    let alloc = PrefixAllocator::new(seg);
    let a = alloc.allocate_from::<u64>(7).unwrap();
    let b = alloc.allocate(16, 8).unwrap();
    assert_eq!(a.address(), seg.address());
    assert_eq!(b.address(), seg.address());
    assert_eq!(b.get::<u64>(0).unwrap(), 7); // not zeroed: same bytes
    assert_eq!(
        alloc.allocate(33, 1),
        Err(Error::AllocatorExhausted {
            requested: 33,
            alignment: 1,
            available: 32,
            capacity: 32
        })
    );
    assert_eq!(
        alloc.allocate(8, 5),
        Err(Error::InvalidAlignment { alignment: 5 })
    );
    let odd = PrefixAllocator::new(seg.slice(4, 16).unwrap());
    assert_eq!(
        odd.allocate(8, 8),
        Err(Error::MisalignedAccess {
            address: seg.address() + 4,
            alignment: 8
        })
    );
    assert_eq!(odd.allocate(8, 4).unwrap().address(), seg.address() + 4);
}

// ---------------------------------------------------------------------------------------------
// Arenas
// ---------------------------------------------------------------------------------------------

#[test]
fn confined_arena_allocates_aligned_zeroed_memory() {
    let arena = Arena::confined();
    for shift in 0..=12 {
        let align = 1usize << shift;
        for size in [0usize, 1, 7, 64, 100] {
            let s = arena.allocate(size, align).unwrap();
            assert_eq!(s.byte_size(), size);
            assert_eq!(s.address() % align, 0, "size {size} align {align}");
            assert!(s.to_vec().iter().all(|&b| b == 0));
        }
    }
}

#[test]
fn arena_zeroes_even_reused_memory_but_uninit_is_written_first() {
    // Dirty some blocks, free them, then allocate the same sizes: allocate() must zero even if
    // the global allocator hands the same blocks back.
    for _ in 0..3 {
        let arena = Arena::confined();
        for _ in 0..8 {
            arena.allocate(256, 16).unwrap().fill(0xcd);
        }
    }
    let arena = Arena::confined();
    for _ in 0..8 {
        let s = arena.allocate(256, 16).unwrap();
        assert_eq!(s.to_vec(), vec![0u8; 256]);
    }
    // allocate_uninit promises nothing about the contents (reading them first would be a read
    // of uninitialised memory, which Miri rejects); it is written before it is read.
    let u = arena.allocate_uninit(256, 16).unwrap();
    assert_eq!((u.byte_size(), u.address() % 16), (256, 0));
    u.fill(0x11);
    assert_eq!(u.to_vec(), vec![0x11u8; 256]);
    let shared = Arena::shared();
    let u = shared.allocate_uninit(32, 32).unwrap();
    assert_eq!(u.address() % 32, 0);
    u.fill(1);
    assert_eq!(shared.allocate(32, 32).unwrap().to_vec(), vec![0u8; 32]);
}

#[test]
fn arena_segments_are_distinct_and_survive_later_allocations() {
    let arena = Arena::confined();
    let n = if cfg!(miri) { 20 } else { 1000 };
    let segs: Vec<MemorySegment<'_>> = (0..n)
        .map(|i| {
            let s = arena.allocate(8, 8).unwrap();
            s.set::<u64>(0, i as u64).unwrap();
            s
        })
        .collect();
    for (i, s) in segs.iter().enumerate() {
        assert_eq!(s.get::<u64>(0).unwrap(), i as u64);
    }
    for w in segs.windows(2) {
        assert!(!w[0].overlaps(&w[1]));
    }
}

#[test]
fn arena_typed_allocation_helpers() {
    let arena = Arena::confined();
    let x = arena.allocate_from(42i32).unwrap();
    assert_eq!((x.byte_size(), x.get::<i32>(0).unwrap()), (4, 42));
    let xs = arena.allocate_from_slice(&[1.5f64, 2.5, 3.5]).unwrap();
    assert_eq!(xs.byte_size(), 24);
    assert_eq!(xs.address() % 8, 0);
    assert_eq!(xs.get::<f64>(16).unwrap(), 3.5);
    let bytes = arena.allocate_from_bytes(b"raw").unwrap();
    assert_eq!(bytes.to_vec(), b"raw");
    let point = MemoryLayout::c_struct([ValueLayout::I8, ValueLayout::F64]).unwrap();
    let p = arena.allocate_layout(&point).unwrap();
    assert_eq!((p.byte_size(), p.address() % 8), (16, 0));
    let arr = arena.allocate_array(&point, 10).unwrap();
    assert_eq!((arr.byte_size(), arr.address() % 8), (160, 0));
    assert!(arr.to_vec().iter().all(|&b| b == 0));
    // Through a reference (the blanket impl).
    let by_ref: &dyn SegmentAllocator = &arena;
    assert_eq!(by_ref.allocate(5, 1).unwrap().byte_size(), 5);
    let reference = &arena;
    assert_eq!(
        SegmentAllocator::allocate_uninit(&reference, 4, 4)
            .unwrap()
            .byte_size(),
        4
    );
}

#[test]
fn arena_argument_errors() {
    let arena = Arena::confined();
    assert_eq!(
        arena.allocate(8, 3),
        Err(Error::InvalidAlignment { alignment: 3 })
    );
    assert_eq!(
        arena.allocate_uninit(8, 0),
        Err(Error::InvalidAlignment { alignment: 0 })
    );
    for (size, align) in [
        (usize::MAX, 1),
        (isize::MAX as usize, 8),
        (0, 1usize << (usize::BITS - 1)),
    ] {
        // (On Windows an alignment above MAX_ALLOCATION_ALIGNMENT, 1 GiB, is refused first.)
        let refused = cfg!(windows) && align > 1 << 30;
        assert!(
            match arena.allocate(size, align) {
                Err(Error::SizeOverflow { .. }) => !refused,
                Err(Error::OutOfMemory { .. }) => refused,
                _ => false,
            },
            "{size} {align}"
        );
    }
    let shared = Arena::shared();
    assert_eq!(
        shared.allocate(1, 6),
        Err(Error::InvalidAlignment { alignment: 6 })
    );
    assert!(matches!(
        Arena::global().allocate_static(usize::MAX, 1),
        Err(Error::SizeOverflow { .. })
    ));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "Miri aborts on huge allocations instead of returning null"
)]
fn arena_out_of_memory_is_an_error() {
    let arena = Arena::confined();
    let size = isize::MAX as usize - 4096;
    assert_eq!(
        arena.allocate(size, 1),
        Err(Error::OutOfMemory { size, alignment: 1 })
    );
}

/// The huge alignment of the tests below: 2^32 bytes, as the layout fuzzer found it; 2^29
/// under Miri, which supports no larger allocation alignment (rustc's maximum).
const HUGE_ALIGN: usize = if cfg!(miri) { 1 << 29 } else { 1 << 32 };

/// A 1-byte layout aligned to [`HUGE_ALIGN`] bytes.
fn bool_aligned_4_gib() -> MemoryLayout {
    MemoryLayout::from(ValueLayout::BOOL)
        .with_byte_alignment(HUGE_ALIGN)
        .unwrap()
}

/// Checks one allocation of [`bool_aligned_4_gib`]: aligned, 1 byte, zeroed, writable; or the
/// typed error if the system allocator cannot align that far.
fn check_huge_alignment(result: crate::error::Result<MemorySegment<'_>>) {
    match result {
        Ok(s) => {
            assert_eq!((s.byte_size(), s.address() % HUGE_ALIGN), (1, 0));
            assert_eq!(s.get::<u8>(0).unwrap(), 0);
            s.set::<u8>(0, 1).unwrap();
            assert_eq!(s.get::<u8>(0).unwrap(), 1);
        }
        Err(e) => assert_eq!(
            e,
            Error::OutOfMemory {
                size: 1,
                alignment: HUGE_ALIGN
            }
        ),
    }
}

#[test]
fn block_size_depends_on_the_size_not_the_alignment() {
    let trailer = std::mem::size_of::<arena::Chunk>();
    for align in [1usize, 8, 4096, 1 << 32, 1 << 62] {
        let (layout, at) = arena::block_layout(1, align).unwrap();
        assert_eq!((layout.size(), at), (8 + trailer, 8), "align {align}");
        assert_eq!(layout.align(), align.max(8));
        let (layout, at) = arena::block_layout(0, align).unwrap();
        assert_eq!((layout.size(), at), (trailer, 0), "align {align}");
        let (layout, at) = arena::block_layout(100, align).unwrap();
        assert_eq!((layout.size(), at), (104 + trailer, 104), "align {align}");
    }
}

#[test]
fn a_one_byte_layout_aligned_to_4_gib_allocates_one_small_block() {
    let layout = bool_aligned_4_gib();
    let confined = Arena::confined();
    check_huge_alignment(confined.allocate_layout(&layout));
    check_huge_alignment(
        confined
            .allocate_uninit(1, HUGE_ALIGN)
            .inspect(|s| s.fill(0)),
    );
    // Later allocations and the drop still work (the trailer is found from the block).
    assert_eq!(confined.allocate(8, 8).unwrap().to_vec(), vec![0u8; 8]);
    drop(confined);
    let shared = Arena::shared();
    check_huge_alignment(shared.allocate_layout(&layout));
    drop(shared);
    check_huge_alignment(Arena::global().allocate_layout(&layout));
    // A pool whose region cannot hold it falls back to its confined arena; a pool and a
    // buffer stack sized for it allocate exactly `layout`'s size from the system.
    let small_pool = ArenaPool::new(64, 8).unwrap();
    check_huge_alignment(small_pool.take().allocate_layout(&layout));
    // (On Windows, where 4 GiB is above MAX_ALLOCATION_ALIGNMENT, the pool is refused.)
    match ArenaPool::for_layout(&layout) {
        Ok(pool) => check_huge_alignment(pool.take().allocate_layout(&layout)),
        Err(e) => check_huge_alignment(Err(e)),
    }
    let stack = BufferStack::new(64, 8).unwrap();
    let frame = stack.push_frame(1, HUGE_ALIGN);
    match &frame {
        Ok(frame) => check_huge_alignment(frame.allocate_layout(&layout)),
        Err(e) => check_huge_alignment(Err(e.clone())),
    }
    drop(frame);
}

#[test]
fn global_arena_segments_are_static() {
    fn keep(seg: MemorySegment<'static>) -> MemorySegment<'static> {
        seg
    }
    let s = keep(Arena::global().allocate_static(16, 8).unwrap());
    assert_eq!(s.to_vec(), vec![0u8; 16]);
    s.set::<u64>(8, 99).unwrap();
    let t = Arena::global().allocate(4, 4).unwrap();
    t.set::<u32>(0, 1).unwrap();
    assert_eq!(s.get::<u64>(8).unwrap(), 99);
    assert!(std::ptr::eq(Arena::global(), Arena::global()));
}

#[test]
fn arena_thread_rules() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<SharedArena>();
    send_sync::<GlobalArena>();
    send_sync::<&'static GlobalArena>();
    // `ConfinedArena`, `MemorySegment`: !Send and !Sync (checked by the trybuild tests in
    // tests/compile_fail).
}

#[test]
fn shared_arena_allocates_from_8_threads() {
    let threads = 8usize;
    let per_thread = if cfg!(miri) { 8 } else { 500 };
    let arena = Arena::shared();
    let addresses: Vec<Vec<(usize, usize)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let arena = &arena;
                scope.spawn(move || {
                    let mut mine = Vec::with_capacity(per_thread);
                    let mut segs = Vec::with_capacity(per_thread);
                    for i in 0..per_thread {
                        let size = 8 + (i % 5) * 8;
                        let s = arena.allocate(size, 8).unwrap();
                        assert!(s.to_vec().iter().all(|&b| b == 0));
                        s.fill(t as u8);
                        s.set::<u64>(0, (t * per_thread + i) as u64).unwrap();
                        mine.push((s.address(), size));
                        segs.push(s);
                    }
                    // Nothing another thread did overwrote this thread's segments.
                    for (i, s) in segs.iter().enumerate() {
                        assert_eq!(s.get::<u64>(0).unwrap(), (t * per_thread + i) as u64);
                        assert!(s.to_vec()[8..].iter().all(|&b| b == t as u8));
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // All blocks are distinct.
    let mut all: Vec<(usize, usize)> = addresses.into_iter().flatten().collect();
    assert_eq!(all.len(), threads * per_thread);
    all.sort_unstable();
    for w in all.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "blocks overlap: {w:?}");
    }
    // The arena is still usable from the owning thread, and frees everything on drop.
    assert_eq!(arena.allocate(8, 8).unwrap().get::<u64>(0).unwrap(), 0);
    drop(arena);
}

#[test]
fn segment_debug_and_equality() {
    let mut buf = Aligned::<16>::new();
    let seg = buf.segment();
    let text = format!("{seg:?}");
    assert_eq!(
        text,
        format!(
            "MemorySegment {{ address: {:#x}, byte_size: 16 }}",
            seg.address()
        )
    );
    assert_eq!(seg, seg.slice(0, 16).unwrap());
    assert_ne!(seg, seg.slice(0, 8).unwrap());
    assert_ne!(seg.slice(0, 8).unwrap(), seg.slice(8, 8).unwrap());
    assert_eq!(seg.as_address(), seg.as_ptr().cast::<c_void>());
}

#[test]
fn out_parameters_through_address_slots() {
    let arena = Arena::confined();
    let target = arena.allocate_from_slice(&[1_i32, 2, 3]).unwrap();
    let out = arena.allocate_from(std::ptr::null_mut::<c_void>()).unwrap();
    assert_eq!(out.get_address(0).unwrap(), std::ptr::null_mut());
    // SAFETY: byte_size 0 never reads through the (null) pointer.
    let null = unsafe { out.get_pointee(0, 0) }.unwrap();
    assert_eq!(null, MemorySegment::NULL);
    // SAFETY: as above; the null pointer is rejected before any segment is made.
    let e = unsafe { out.get_pointee(0, 4) }.unwrap_err();
    assert!(matches!(e, Error::NullPointer { .. }), "{e}");
    out.set_address(0, target.as_address()).unwrap();
    // SAFETY: the stored pointer points to `target`'s 12 bytes, owned by `arena`.
    let seen = unsafe { out.get_pointee(0, 12) }.unwrap();
    assert_eq!(seen, target);
    assert_eq!(seen.get::<i32>(8).unwrap(), 3);
    assert!(matches!(out.get_address(1), Err(Error::OutOfBounds { .. })));
    let wide = arena.allocate(16, 8).unwrap();
    assert!(matches!(
        wide.get_address(4),
        Err(Error::MisalignedAccess { .. })
    ));
}

#[test]
fn alignments_above_the_target_limit_are_out_of_memory_at_once() {
    let limit = crate::error::MAX_ALLOCATION_ALIGNMENT;
    if limit == usize::MAX {
        return; // no limit on this target
    }
    // Windows: a 16-byte segment aligned to 2^31 (or 2^62) would commit that many bytes.
    let arena = Arena::confined();
    for align in [limit * 2, 1 << 62] {
        assert_eq!(
            arena.allocate(16, align).unwrap_err(),
            Error::OutOfMemory {
                size: 16,
                alignment: align
            }
        );
        let layout = MemoryLayout::from(ValueLayout::I32)
            .with_byte_alignment(align)
            .unwrap();
        assert!(matches!(
            Arena::global().allocate_layout(&layout),
            Err(Error::OutOfMemory { .. })
        ));
    }
    // A large alignment within the limit still works.
    let seg = arena.allocate(16, 1 << 20).unwrap();
    assert_eq!(seg.address() % (1 << 20), 0);
}

// ---------------------------------------------------------------------------------------------
// Pointers read through target layouts
// ---------------------------------------------------------------------------------------------

/// A pointer layout with `target`.
fn to(target: PointerTarget) -> ValueLayout {
    // SAFETY: every pointer read through these layouts in the tests below is null or points to
    // what the target says, in an arena that outlives the segments read.
    unsafe { ValueLayout::ADDRESS.with_target(target) }.unwrap()
}

#[test]
fn pointers_with_a_layout_target_read_as_segments_of_its_size() {
    let arena = Arena::confined();
    let pair = arena.allocate_from_slice(&[5_i32, 6]).unwrap();
    let slot = arena.allocate_from(pair.as_address()).unwrap();
    let two_ints = MemoryLayout::sequence_layout(2, ValueLayout::I32).unwrap();
    let layout = to(PointerTarget::Layout(two_ints));
    let seg = slot.get_target(&layout, 0).unwrap().unwrap();
    assert_eq!((seg.address(), seg.byte_size()), (pair.address(), 8));
    assert_eq!(seg.get::<i32>(4).unwrap(), 6);
    assert_eq!(slot.get_value(&layout, 0).unwrap(), Value::Segment(seg));
    assert_eq!(
        layout
            .target_of(&Value::Address(pair.as_address()))
            .unwrap(),
        Some(seg)
    );
    assert_eq!(layout.target_of(&Value::Segment(pair)).unwrap(), Some(seg));
    // Writing the segment back writes its address (plain ADDRESS still takes addresses only).
    slot.set_value(&layout, 0, &Value::Segment(MemorySegment::NULL))
        .unwrap();
    assert_eq!(slot.get::<usize>(0).unwrap(), 0);
    // Null: never a segment that reads anything.
    assert_eq!(slot.get_target(&layout, 0).unwrap(), None);
    let null = slot.get_value(&layout, 0).unwrap().as_segment().unwrap();
    assert_eq!((null, null.address()), (MemorySegment::NULL, 0));
    assert!(null.get::<u8>(0).is_err());
    assert_eq!(
        layout
            .target_of(&Value::Address(std::ptr::null_mut()))
            .unwrap(),
        None
    );
    slot.set_value(&layout, 0, &Value::Segment(pair)).unwrap();
    assert_eq!(slot.get_address(0).unwrap(), pair.as_address());
}

#[test]
fn a_pointer_misaligned_for_its_target_is_an_error() {
    let arena = Arena::confined();
    let ints = arena.allocate_from_slice(&[0_i32, 0]).unwrap();
    let odd = ints.slice_from(1).unwrap();
    let slot = arena.allocate_from(odd.as_address()).unwrap();
    let layout = to(PointerTarget::Layout(ValueLayout::I32.into()));
    let expected = Error::MisalignedAccess {
        address: odd.address(),
        alignment: 4,
    };
    assert_eq!(slot.get_target(&layout, 0).unwrap_err(), expected);
    assert_eq!(slot.get_value(&layout, 0).unwrap_err(), expected);
    assert_eq!(
        layout.target_of(&Value::Segment(odd)).unwrap_err(),
        expected
    );
    // A 1-byte target has no alignment to miss.
    let byte = to(PointerTarget::Layout(ValueLayout::U8.into()));
    assert_eq!(slot.get_target(&byte, 0).unwrap().unwrap().byte_size(), 1);
}

#[test]
fn a_c_string_target_reads_up_to_the_first_nul_and_no_further() {
    let arena = Arena::confined();
    let text = arena.allocate_from_bytes(b"ab\0cd\0").unwrap();
    let slot = arena.allocate_from(text.as_address()).unwrap();
    let string = to(PointerTarget::CString);
    let s = slot.get_target(&string, 0).unwrap().unwrap();
    assert_eq!((s.address(), s.byte_size()), (text.address(), 3));
    assert_eq!(s.get_string(0).unwrap(), "ab");
    let second = Value::Segment(text.slice_from(3).unwrap());
    let cd = string.target_of(&second).unwrap().unwrap();
    assert_eq!((cd.byte_size(), cd.to_vec()), (3, b"cd\0".to_vec()));
    let empty = string
        .target_of(&Value::Segment(text.slice_from(2).unwrap()))
        .unwrap();
    assert_eq!(empty.unwrap().byte_size(), 1);
}

#[test]
fn an_unresolved_enclosing_target_reads_nothing() {
    let arena = Arena::confined();
    let node = arena.allocate(16, 8).unwrap();
    let slot = arena.allocate_from(node.as_address()).unwrap();
    let layout = to(PointerTarget::Enclosing("node".into()));
    let s = slot.get_target(&layout, 0).unwrap().unwrap();
    assert_eq!((s.address(), s.byte_size()), (node.address(), 0));
    assert!(s.get::<u8>(0).is_err());
}

#[test]
fn reading_a_target_needs_a_pointer_layout_with_a_target() {
    let arena = Arena::confined();
    let slot = arena.allocate(8, 8).unwrap();
    let e = slot.get_target(&ValueLayout::ADDRESS, 0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "value mismatch at offset 0: expected a pointer layout with a target, found ptr"
    );
    assert!(matches!(
        ValueLayout::ADDRESS.target_of(&Value::Address(slot.as_address())),
        Err(Error::ValueMismatch { .. })
    ));
    let string = to(PointerTarget::CString);
    assert!(matches!(
        string.target_of(&Value::I64(1)),
        Err(Error::ValueMismatch { .. })
    ));
    // A plain pointer still reads as an address.
    assert_eq!(
        slot.get_value(&ValueLayout::ADDRESS, 0).unwrap(),
        Value::Address(std::ptr::null_mut())
    );
    // Arrays need a pointer to pointers.
    assert!(matches!(
        string.null_terminated(&Value::Segment(slot)),
        Err(Error::ValueMismatch { .. })
    ));
    assert!(slot.get_target(&string, 4).is_err()); // the slot itself is misaligned
}

#[test]
fn null_terminated_arrays_stop_at_their_null_element() {
    let arena = Arena::confined();
    let (a, b) = (
        arena.allocate_from(1_i64).unwrap(),
        arena.allocate_from(2_i64).unwrap(),
    );
    let null = std::ptr::null_mut::<c_void>();
    // After the null element comes an address that must never be read through.
    let array = arena
        .allocate_from_slice(&[
            a.as_address(),
            b.as_address(),
            null,
            std::ptr::without_provenance_mut(8),
        ])
        .unwrap();
    let longs = to(PointerTarget::Layout(
        to(PointerTarget::Layout(ValueLayout::I64.into())).into(),
    ));
    let mut it = longs.null_terminated(&Value::Segment(array)).unwrap();
    let read: Vec<i64> = it
        .by_ref()
        .map(|s| s.unwrap().get::<i64>(0).unwrap())
        .collect();
    assert_eq!(read, [1, 2]);
    // Fused: nothing more after the null element.
    assert!(it.next().is_none());
    // Elements without a target: zero-length segments at their addresses.
    let voids = to(PointerTarget::Layout(ValueLayout::ADDRESS.into()));
    let segs: Vec<MemorySegment<'_>> = voids
        .null_terminated(&Value::Address(array.as_address()))
        .unwrap()
        .collect::<crate::Result<_>>()
        .unwrap();
    let shape: Vec<(usize, usize)> = segs.iter().map(|s| (s.address(), s.byte_size())).collect();
    assert_eq!(shape, [(a.address(), 0), (b.address(), 0)]);
    // A null array is empty; a misaligned one is an error.
    assert_eq!(
        longs
            .null_terminated(&Value::Address(null))
            .unwrap()
            .count(),
        0
    );
    let odd = Value::Segment(array.slice_from(4).unwrap());
    assert_eq!(
        longs.null_terminated(&odd).unwrap_err(),
        Error::MisalignedAccess {
            address: array.address() + 4,
            alignment: std::mem::align_of::<usize>(),
        }
    );
}
