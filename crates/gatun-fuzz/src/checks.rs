//! Invariants shared by the fuzz checks: the shape of a layout, its classification, a call
//! plan, and the size of error messages. Each function panics with a message naming the
//! offending value when an invariant does not hold.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use gatun::abi::sysv::{self as sysv_x64, ArgClass, Classification};
use gatun::abi::{CallPlan, Location, Register, ReturnPlan};
use gatun::layout::MemoryLayout;
use gatun::FunctionDescriptor;

/// How many layout nodes [`layout_shape`] visits at most (shared sub-layouts are visited once
/// per path to them, so the walk is cut off rather than made exponential by the check itself).
pub const SHAPE_VISITS: usize = 2_000;

/// `text`'s length is within [`crate::message_limit`] of an input of `input_len` bytes.
pub fn bounded_message(what: &str, text: &str, input_len: usize) {
    let limit = crate::message_limit(input_len);
    assert!(
        text.len() <= limit,
        "{what}: a message of {} bytes for an input of {input_len} bytes (limit {limit}); it starts: {:?}",
        text.len(),
        text.chars().take(300).collect::<String>()
    );
}

fn hash_of<T: Hash>(value: &T) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

/// Size, alignment and member placement of `layout` and (within [`SHAPE_VISITS`]) of the
/// layouts inside it. (A member's alignment may exceed its group's: a packed group lowers the
/// alignment at which a member is placed, not the member's own inner layout.)
pub fn layout_shape(layout: &MemoryLayout) {
    let mut budget = SHAPE_VISITS;
    shape_at(layout, &mut budget);
}

fn shape_at(layout: &MemoryLayout, budget: &mut usize) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    let size = layout.byte_size();
    let align = layout.byte_alignment();
    assert!(
        align.is_power_of_two(),
        "alignment {align} of a layout is not a power of two"
    );
    assert!(
        size <= isize::MAX as usize,
        "a layout of {size} bytes is larger than isize::MAX"
    );
    match layout {
        MemoryLayout::Value(v) => {
            assert_eq!(v.byte_size(), v.kind().byte_size(), "value layout size");
            if let Some(t) = v.target() {
                shape_at(t, budget);
            }
        }
        MemoryLayout::Struct(s) => {
            assert_eq!(
                s.members().len(),
                s.offsets().len(),
                "a struct has one offset per member"
            );
            let mut previous = 0;
            for (i, (off, m)) in s.fields().enumerate() {
                assert!(
                    off >= previous,
                    "struct member #{i} at offset {off} is placed before the end of the previous one ({previous})"
                );
                let end = off.checked_add(m.byte_size()).unwrap_or_else(|| {
                    panic!("struct member #{i} at offset {off} overflows usize")
                });
                assert!(
                    end <= size,
                    "struct member #{i} ends at byte {end}, beyond the struct's size {size}"
                );
                assert_eq!(
                    off % m.byte_alignment(),
                    0,
                    "struct member #{i} at offset {off} is not at a multiple of its alignment {}",
                    m.byte_alignment()
                );
                previous = end;
                shape_at(m, budget);
            }
        }
        MemoryLayout::Union(u) => {
            for (i, m) in u.members().iter().enumerate() {
                assert!(
                    m.byte_size() <= size,
                    "union member #{i} of {} bytes is larger than the union ({size})",
                    m.byte_size()
                );
                shape_at(m, budget);
            }
        }
        MemoryLayout::Sequence(s) => {
            let expected = s.element().byte_size().checked_mul(s.count());
            assert_eq!(
                Some(size),
                expected,
                "a sequence of {} x {} bytes",
                s.count(),
                s.element().byte_size()
            );
            shape_at(s.element(), budget);
        }
        MemoryLayout::Padding(p) => {
            assert_eq!(
                align,
                1,
                "padding of {} bytes has alignment {align}",
                p.byte_size()
            );
        }
    }
}

/// Equal layouts (a clone) compare and hash equal; the formatted layout is not empty.
pub fn layout_identity(layout: &MemoryLayout) -> String {
    let copy = layout.clone();
    assert!(copy == *layout, "a layout differs from its clone");
    assert_eq!(
        hash_of(&copy),
        hash_of(layout),
        "a layout and its clone hash differently"
    );
    let text = layout.to_string();
    assert!(!text.is_empty(), "a layout formats as the empty string");
    text
}

/// The SysV x86-64 classification of `layout` is well formed: one class per eightbyte (at
/// most two) for values in registers, MEMORY for anything over 16 bytes.
pub fn classification(layout: &MemoryLayout) -> Classification {
    let c = sysv_x64::classify(layout);
    match (&c, layout) {
        (Classification::Eightbytes(classes), MemoryLayout::Value(_)) => {
            assert_eq!(classes.len(), 1, "a scalar has one eightbyte: {classes:?}");
            assert_ne!(
                classes[0],
                ArgClass::NoClass,
                "a scalar classified NO_CLASS"
            );
        }
        (Classification::Eightbytes(classes), _) => {
            let size = layout.byte_size();
            assert!(
                size <= 16,
                "a {size}-byte aggregate classified in registers"
            );
            assert_eq!(
                classes.len(),
                size.div_ceil(8),
                "a {size}-byte aggregate has {} eightbyte classes",
                classes.len()
            );
            assert!(
                !classes.contains(&ArgClass::Memory),
                "MEMORY inside an eightbyte list: {classes:?}"
            );
        }
        (Classification::Memory, MemoryLayout::Value(_)) => {
            panic!("a scalar classified MEMORY")
        }
        (Classification::Memory, _) => {}
    }
    c
}

/// `plan` is a well-formed plan of `descriptor`: one argument plan per argument, moves of 1 to
/// 8 bytes to existing registers or 8-byte stack slots within `stack_bytes`.
pub fn call_plan(plan: &CallPlan, descriptor: &FunctionDescriptor, first_variadic: Option<usize>) {
    let args = descriptor.argument_layouts();
    assert_eq!(
        plan.args().len(),
        args.len(),
        "a plan of {} arguments for {descriptor}",
        plan.args().len()
    );
    assert_eq!(
        plan.first_variadic(),
        first_variadic,
        "variadic index of the plan"
    );
    assert_eq!(
        plan.stack_bytes() % 8,
        0,
        "stack bytes {} not a multiple of 8",
        plan.stack_bytes()
    );
    assert!(
        usize::from(plan.vector_registers()) <= usize::from(sysv_x64::VECTOR_ARG_REGS),
        "{} vector registers used",
        plan.vector_registers()
    );
    for (i, (a, layout)) in plan.args().iter().zip(args).enumerate() {
        let mut covered = 0usize;
        for m in &a.moves {
            assert!(
                (1..=8).contains(&m.size),
                "argument {i}: a move of {} bytes",
                m.size
            );
            let end = m.offset as usize + usize::from(m.size);
            assert!(
                end <= layout.byte_size(),
                "argument {i}: a move of bytes {}..{end} of a {}-byte argument",
                m.offset,
                layout.byte_size()
            );
            covered += usize::from(m.size);
            match m.to {
                Location::Int(r) => {
                    assert!(r < sysv_x64::INT_ARG_REGS, "argument {i}: int register {r}")
                }
                Location::Vector(r) => {
                    assert!(
                        r < sysv_x64::VECTOR_ARG_REGS,
                        "argument {i}: vector register {r}"
                    )
                }
                Location::Stack(off) => {
                    assert_eq!(off % 8, 0, "argument {i}: stack offset {off}");
                    assert!(
                        off + 8 <= plan.stack_bytes(),
                        "argument {i}: stack slot {off} beyond {} stack bytes",
                        plan.stack_bytes()
                    );
                }
            }
        }
        assert!(
            covered <= layout.byte_size(),
            "argument {i}: {covered} bytes moved of a {}-byte argument",
            layout.byte_size()
        );
    }
    match (&plan.ret(), descriptor.return_layout()) {
        (ReturnPlan::Void, None) | (ReturnPlan::Scalar(_), Some(MemoryLayout::Value(_))) => {}
        (ReturnPlan::Registers(moves), Some(r)) => {
            for m in moves {
                assert!((1..=8).contains(&m.size), "return move of {} bytes", m.size);
                assert!(
                    m.offset as usize + usize::from(m.size) <= r.byte_size(),
                    "return move beyond the {}-byte result",
                    r.byte_size()
                );
                let ok = match m.from {
                    Register::Int(n) | Register::Vector(n) => n < 2,
                };
                assert!(ok, "return register {:?}", m.from);
            }
        }
        (ReturnPlan::InMemory, Some(r)) => {
            assert!(r.is_group(), "a scalar returned in memory");
            assert!(
                plan.hidden_return_pointer().is_some(),
                "an in-memory return without a pointer"
            );
        }
        (p, r) => panic!(
            "return plan {p:?} for a return layout of {:?} bytes",
            r.map(MemoryLayout::byte_size)
        ),
    }
}
