//! The emitted code's shape, on every host: the registers every word names (never r13; r2
//! only to save it before and load it after the call), the entries' layout, the rejection
//! islands of long argument lists, and displacements beyond 16 bits. The code's behaviour is
//! checked by executing it on PPC64LE (`backend/ppc64le/tests.rs`, stub against trampoline).

use super::*;
use crate::abi::kinds::ArgKind;
use crate::layout::{FunctionDescriptor as FD, MemoryLayout, ValueLayout as V};

fn stub_of(d: &FD, variadic: Option<usize>, capture: bool) -> (CallPlan, StubCode) {
    let plan = crate::abi::ppc64le::plan(d, variadic).unwrap();
    let kinds: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
    let checks: Vec<ArgCheck> = kinds.iter().map(|k| ArgCheck::of(*k)).collect();
    let code = compile(&plan, &checks, capture);
    (plan, code)
}

fn words(code: &StubCode) -> Vec<u32> {
    code.bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The GPR numbers a word names (its RT/RS, RA and RB fields where they are GPRs).
fn gprs(w: u32) -> Vec<u32> {
    let (op, f1, f2, f3) = (w >> 26, (w >> 21) & 31, (w >> 16) & 31, (w >> 11) & 31);
    let xo = (w >> 1) & 0x3FF;
    match op {
        16 | 18 | 19 => vec![],
        48..=55 | 10 => vec![f2],
        31 if matches!(xo, 51 | 179) => vec![f2],
        // mflr, mtlr, mtctr: the second and third fields are the SPR number
        31 if matches!(xo, 339 | 467) => vec![f1],
        31 => vec![f1, f2, f3],
        30 => vec![f1, f2],
        _ => vec![f1, f2],
    }
}

fn mixed_descriptors() -> Vec<(FD, Option<usize>)> {
    let hfa = MemoryLayout::c_struct([V::F32; 8]).unwrap();
    let odd = MemoryLayout::c_struct([V::U8, V::U8, V::U8, V::U8, V::U8, V::U8, V::U8]).unwrap();
    let big = MemoryLayout::c_struct([V::I64; 5]).unwrap();
    let mut many: Vec<MemoryLayout> = vec![V::F64.into(); 14];
    many.extend([
        hfa.clone(),
        odd.clone(),
        big.clone(),
        V::I8.into(),
        V::BOOL.into(),
    ]);
    vec![
        (FD::of(V::I32, [V::I32, V::F32, V::U16]), None),
        (FD::of(&hfa, [hfa.clone(), hfa.clone()]), None),
        (FD::of(&big, many.clone()), None),
        (FD::of(&odd, [odd.clone()]), None),
        (FD::of(V::F64, [V::I32, V::F32, V::F64, V::F32]), Some(1)),
    ]
}

#[test]
fn no_word_names_r13_and_r2_only_around_the_call() {
    for (d, variadic) in mixed_descriptors() {
        for capture in [false, true] {
            let (_, code) = stub_of(&d, variadic, capture);
            let ws = words(&code);
            for (k, &w) in ws.iter().enumerate() {
                let regs = gprs(w);
                assert!(!regs.contains(&13), "{d}: word {k} {w:#010x} names r13");
                if regs.contains(&2) {
                    assert!(
                        w == e::store(Store::D, R::TOC, SP, 24)
                            || w == e::load(Load::D, R::TOC, SP, 24),
                        "{d}: word {k} {w:#010x} names r2"
                    );
                }
            }
            // two calls (one per entry), each between the save and the load of r2
            let calls: Vec<usize> = (0..ws.len()).filter(|&k| ws[k] == e::BCTRL).collect();
            assert_eq!(calls.len(), 2, "{d}");
            for k in calls {
                assert_eq!(ws[k - 1], e::store(Store::D, R::TOC, SP, 24), "{d}");
                assert_eq!(ws[k + 1], e::load(Load::D, R::TOC, SP, 24), "{d}");
            }
        }
    }
}

#[test]
fn the_values_entry_is_16_aligned_and_both_entries_save_lr_and_return() {
    for (d, variadic) in mixed_descriptors() {
        let (_, code) = stub_of(&d, variadic, false);
        assert_eq!(code.raw, 0);
        assert_eq!(code.values % 16, 0, "{d}");
        let ws = words(&code);
        assert_eq!(
            ws[0],
            e::mflr(R::R0),
            "{d}: the raw entry starts with the frame"
        );
        assert_eq!(*ws.last().unwrap(), e::BLR);
        assert_eq!(ws[code.values / 4 - 1..code.values / 4].len(), 1);
        // the raw entry's last word before the padding is its return
        let raw_end = (0..code.values / 4)
            .rev()
            .find(|&k| ws[k] != e::TRAP)
            .unwrap();
        assert_eq!(ws[raw_end], e::BLR, "{d}");
    }
}

#[test]
fn long_argument_lists_get_a_rejection_path_every_block_of_checks() {
    let n = 2 * ISLAND_CHECKS + 10;
    let d = FD::of_void(vec![V::I64; n]);
    let (_, code) = stub_of(&d, None, false);
    let ws = words(&code);
    let rejections = ws
        .windows(2)
        .filter(|w| w[0] == e::addi(FLAG, R::R0, 1) && w[1] == e::BLR)
        .count();
    // short lists: one rejection path at the end of the values entry
    assert_eq!(rejections, 1);
    // 5,000 arguments: the entry's end is beyond 32 KiB of its first checks
    let d = FD::of_void(vec![V::I64; 5000]);
    let (_, code) = stub_of(&d, None, false);
    let ws = words(&code);
    let rejections = ws
        .windows(2)
        .filter(|w| w[0] == e::addi(FLAG, R::R0, 1) && w[1] == e::BLR)
        .count();
    assert_eq!(rejections, 5000usize.div_ceil(ISLAND_CHECKS));
}

#[test]
fn displacements_beyond_16_bits_go_through_addis() {
    // 5000 doublewords of parameter save area: offsets up to 40 KiB from r1, and `Value`s
    // beyond 32 KiB
    let d = FD::of_void(vec![V::I64; 5000]);
    let (_, code) = stub_of(&d, None, false);
    let ws = words(&code);
    assert!(
        ws.iter().any(|&w| w >> 26 == 15 && (w >> 16) & 31 == 1),
        "addis r11, r1"
    );
    assert!(
        ws.iter().any(|&w| w >> 26 == 15 && (w >> 16) & 31 == 30),
        "addis r11, r30"
    );
    // the frame is made a page at a time: a CTR loop of stdu -4096
    assert!(ws.contains(&e::stdu(SP, SP, -4096)));
}

#[test]
fn a_large_struct_is_copied_by_one_loop() {
    let take = |n: usize| FD::of_void([MemoryLayout::c_struct(vec![V::I64; n]).unwrap()]);
    let (_, small) = stub_of(&take(512), None, false);
    let (_, big) = stub_of(&take(8192), None, false);
    // the length check of 65,536 bytes takes two words more than 4,096's; the frame's page
    // loop a few
    assert!(
        big.bytes.len() <= small.bytes.len() + 64,
        "{} vs {}",
        big.bytes.len(),
        small.bytes.len()
    );
    assert!(words(&big).contains(&e::ldu(R::R0, ADDR, 8)));
}
