//! The PPC64LE upcall entry (hand-written assembly), the per-stub code in front of it, the
//! upcall plan that names the entry's save areas, and the ELFv2 register images of upcall
//! results.
//!
//! A stub's own code is 32 bytes in an [`crate::code::ExecutableCode`] (the code arena):
//!
//! ```text
//! 0:  ld    r11, 16(r12)     ; the stub's context, which starts with its UpcallHeader
//! 4:  ld    r12, 24(r12)     ; gatun_elfv2_upcall_entry
//! 8:  mtctr r12
//! 12: bctr
//! 16: .quad <context>
//! 24: .quad gatun_elfv2_upcall_entry
//! ```
//!
//! A C caller reaches the stub through a function pointer, so r12 holds the stub's address
//! (ELFv2 ABI 2.3.6 "Function Calls": the address of a function called through a pointer is
//! in r12 at its global entry point). r11 and r12 are volatile and carry no argument (2.2.1),
//! so the caller's argument registers (r3..r10, f1..f13) and stack reach the entry untouched.
//! The entry is shared by every stub. Its frame (544 bytes, r1 stays 16-byte aligned):
//!
//! | offset | what |
//! |---|---|
//! | 0 | the frame header (back chain, CR, LR and TOC save doublewords) |
//! | 32 | the dispatcher's parameter save area (64 bytes) |
//! | 96 | the [`UpcallFrame`] (192 bytes) |
//! | 288 | [`SINGLES`]: f1..f13 stored as singles (`stfs`), one per doubleword |
//! | 392 | [`DOUBLES_HIGH`]: f9..f13 as doubles (the frame has `vector` slots for f1..f8) |
//! | 432 | [`SINGLE_HFA`]: 32 bytes for a returned aggregate of `float`s |
//! | 464 | [`DOUBLE_HFA`]: 64 bytes for a returned aggregate of `double`s |
//! | 528 | [`SINGLE_HFA_POINTER`], [`DOUBLE_HFA_POINTER`]: the addresses of those two areas |
//!
//! The entry:
//! 1. saves LR at 16(r1) of the caller's frame and makes its frame (`stdu`);
//! 2. stores r3..r10 (`gpr[0..8]`; `gpr[8]` is zeroed), f1..f8 as doubles (`vector`), f1..f13
//!    as singles and f9..f13 as doubles into its areas, the two aggregate areas' addresses,
//!    zeroes `ret_int[0]`, and sets `stack` to the address of [`SINGLES`] (the base of every
//!    `Location::Stack` of the upcall plan: the caller's parameter save area is at
//!    [`CALLER_AREA`] from it);
//! 3. calls the header's dispatcher ([`UpcallHeader::dispatch`], at offset 0) with `(header =
//!    r11, frame)`, target in r12 and CTR, r2 saved at 24(r1) and loaded back after;
//! 4. loads r3, r4 (`ret_int`) and f1..f4 (`ret_vector`); if r3 is then the address of one
//!    of the aggregate areas (the dispatcher returns a hidden-pointer result's address in
//!    `ret_int[0]`), loads f1..f8 from it (`lfs` from the `float` one, `lfd` from the
//!    `double` one); pops its frame and returns to the C caller. The callee-saved r14..r31,
//!    f14..f31 and CR2..CR4 are preserved by the dispatcher, an ordinary `extern "C"`
//!    function.
//!
//! Neither piece touches r13 (the thread pointer).
//!
//! # The upcall plan
//! The shared [`UpcallFrame`] holds eight floating-point registers as 64-bit images, and four
//! returned ones; ELFv2 passes thirteen (f1..f13) and returns up to eight (a homogeneous
//! aggregate of up to eight members, 2.2.4 "Return Values"), and a `float` in an FPR is in
//! double format. [`upcall_plan`] therefore moves, in the plan an upcall decodes with, every
//! `float` in an FPR to its single in [`SINGLES`], every `double` in f9..f13 to
//! [`DOUBLES_HIGH`], every stack location to the caller's parameter save area seen from the
//! same base ([`CALLER_AREA`]), and returns every aggregate returned in FPRs through the
//! aggregate areas (a hidden pointer the entry follows). The integer registers, the doubles in
//! f1..f8, and the results in r3/r4 and f1 are the classifier's. The dispatchers store a
//! `float` result's [`UpcallEntries::scalar_return_bits`] (its double format).
//!
//! Invariant: the offsets used below are those of [`UpcallFrame`] (0..192, at 96) and
//! [`UpcallHeader`] (0), asserted next to their definitions.

use super::Elfv2;
use crate::abi::{CallPlan, Location, Register, ReturnPlan};
#[cfg(doc)]
use crate::backend::upcall::UpcallFrame;
use crate::backend::upcall::{UpcallEntries, UpcallHeader};
use crate::code::ExecutableCode;
use crate::error::Result;
use crate::layout::ScalarKind;

/// Offset from the `stack` base of the upcall frame (the entry's singles area) of f(n+1)
/// stored as a single, one doubleword each (the single in its low-order word).
pub(crate) const SINGLES: u32 = 0;
/// Offset from the base of f9..f13 stored as doubles.
pub(crate) const DOUBLES_HIGH: u32 = 104;
/// Offset from the base of the area a returned aggregate of `float`s is written to.
pub(crate) const SINGLE_HFA: u32 = 144;
/// Offset from the base of the area a returned aggregate of `double`s is written to.
pub(crate) const DOUBLE_HFA: u32 = 176;
/// Offset from the base of the doubleword holding the address of [`SINGLE_HFA`].
pub(crate) const SINGLE_HFA_POINTER: u32 = 240;
/// Offset from the base of the doubleword holding the address of [`DOUBLE_HFA`].
pub(crate) const DOUBLE_HFA_POINTER: u32 = 248;
/// The entry's frame size.
const FRAME: u32 = 544;
/// The base's offset in the entry's frame.
const BASE: u32 = 288;
/// Offset from the base of the caller's parameter save area (32 bytes above the caller's r1,
/// which is the entry's r1 plus its frame).
pub(crate) const CALLER_AREA: u32 = FRAME + 32 - BASE;

// The offsets the entry's assembly uses (from r1): the base at 288, the aggregate areas at
// 432 and 464, their addresses at 528 and 536.
const _: () = {
    assert!(CALLER_AREA == 288);
    assert!(BASE + SINGLE_HFA == 432 && BASE + DOUBLE_HFA == 464);
    assert!(BASE + SINGLE_HFA_POINTER == 528 && BASE + DOUBLE_HFA_POINTER == 536);
    assert!(BASE + SINGLES == 288 && BASE + DOUBLES_HIGH == 392);
    assert!(DOUBLE_HFA_POINTER + 8 + BASE == FRAME);
};

asm_function!(
    "gatun_elfv2_upcall_entry",
    [
        ".cfi_startproc",
        "mflr 0",
        "std 0, 16(1)",
        "stdu 1, -544(1)",
        ".cfi_def_cfa_offset 544",
        ".cfi_offset lr, 16",
        // the UpcallFrame at 96(r1)
        "std 3, 96(1)",
        "std 4, 104(1)",
        "std 5, 112(1)",
        "std 6, 120(1)",
        "std 7, 128(1)",
        "std 8, 136(1)",
        "std 9, 144(1)",
        "std 10, 152(1)",
        "li 0, 0",
        "std 0, 160(1)",
        "std 0, 240(1)",
        "stfd 1, 168(1)",
        "stfd 2, 176(1)",
        "stfd 3, 184(1)",
        "stfd 4, 192(1)",
        "stfd 5, 200(1)",
        "stfd 6, 208(1)",
        "stfd 7, 216(1)",
        "stfd 8, 224(1)",
        "addi 0, 1, 288",
        "std 0, 232(1)",
        // f1..f13 as singles, f9..f13 as doubles
        "stfs 1, 288(1)",
        "stfs 2, 296(1)",
        "stfs 3, 304(1)",
        "stfs 4, 312(1)",
        "stfs 5, 320(1)",
        "stfs 6, 328(1)",
        "stfs 7, 336(1)",
        "stfs 8, 344(1)",
        "stfs 9, 352(1)",
        "stfs 10, 360(1)",
        "stfs 11, 368(1)",
        "stfs 12, 376(1)",
        "stfs 13, 384(1)",
        "stfd 9, 392(1)",
        "stfd 10, 400(1)",
        "stfd 11, 408(1)",
        "stfd 12, 416(1)",
        "stfd 13, 424(1)",
        "addi 0, 1, 432",
        "std 0, 528(1)",
        "addi 0, 1, 464",
        "std 0, 536(1)",
        // dispatch(header, frame)
        "mr 3, 11",
        "addi 4, 1, 96",
        "ld 12, 0(11)",
        "mtctr 12",
        "std 2, 24(1)",
        "bctrl",
        "ld 2, 24(1)",
        "ld 3, 240(1)",
        "ld 4, 248(1)",
        "lfd 1, 256(1)",
        "lfd 2, 264(1)",
        "lfd 3, 272(1)",
        "lfd 4, 280(1)",
        // an aggregate of floats or doubles returned through one of the entry's areas
        "addi 11, 1, 432",
        "cmpld 3, 11",
        "bne 1f",
        "lfs 1, 432(1)",
        "lfs 2, 436(1)",
        "lfs 3, 440(1)",
        "lfs 4, 444(1)",
        "lfs 5, 448(1)",
        "lfs 6, 452(1)",
        "lfs 7, 456(1)",
        "lfs 8, 460(1)",
        "b 2f",
        "1:",
        "addi 11, 1, 464",
        "cmpld 3, 11",
        "bne 2f",
        "lfd 1, 464(1)",
        "lfd 2, 472(1)",
        "lfd 3, 480(1)",
        "lfd 4, 488(1)",
        "lfd 5, 496(1)",
        "lfd 6, 504(1)",
        "lfd 7, 512(1)",
        "lfd 8, 520(1)",
        "2:",
        "addi 1, 1, 544",
        ".cfi_def_cfa_offset 0",
        "ld 0, 16(1)",
        "mtlr 0",
        "blr",
        ".cfi_endproc",
    ],
);

extern "C" {
    /// See the module documentation. Never called from Rust; only its address is used.
    fn gatun_elfv2_upcall_entry();
}

/// The plan an upcall of `plan` (the classifier's) decodes its arguments and encodes its
/// result with (see the module documentation): the same moves, with every `float` in an FPR,
/// every `double` in f9..f13 and every stack location named from the entry's base, and an
/// aggregate returned in FPRs returned through the entry's area for its member type.
pub(crate) fn upcall_plan(mut plan: CallPlan) -> CallPlan {
    let moved = |to: Location, size: u8| match to {
        Location::Vector(n) if size == 4 => Location::Stack(SINGLES + 8 * u32::from(n)),
        Location::Vector(n) if n >= 8 => Location::Stack(DOUBLES_HIGH + 8 * u32::from(n - 8)),
        Location::Stack(off) => Location::Stack(CALLER_AREA + off),
        other => other,
    };
    for a in &mut plan.args {
        for m in &mut a.moves {
            m.to = moved(m.to, m.size);
        }
        a.by_reference = a.by_reference.map(|at| moved(at, 8));
    }
    plan.hidden_return_pointer = plan.hidden_return_pointer.map(|at| moved(at, 8));
    if let ReturnPlan::Registers(moves) = &plan.ret {
        if let Some(m) = moves.iter().find(|m| matches!(m.from, Register::Vector(_))) {
            let area = if m.size == 4 {
                SINGLE_HFA_POINTER
            } else {
                DOUBLE_HFA_POINTER
            };
            plan.ret = ReturnPlan::InMemory;
            plan.hidden_return_pointer = Some(Location::Stack(area));
        }
    }
    plan
}

/// Length in bytes of a stub's code.
pub(crate) const STUB_LEN: usize = 32;

/// The machine code of a stub whose context is at `context` (see the module documentation).
pub(crate) fn stub_code(context: usize) -> [u8; STUB_LEN] {
    let entry = gatun_elfv2_upcall_entry as *const () as usize;
    let mut code = [0u8; STUB_LEN];
    // ld r11, 16(r12); ld r12, 24(r12); mtctr r12; bctr
    let words: [u32; 4] = [0xE96C_0010, 0xE98C_0018, 0x7D89_03A6, 0x4E80_0420];
    for (k, insn) in words.into_iter().enumerate() {
        code[4 * k..4 * k + 4].copy_from_slice(&insn.to_le_bytes());
    }
    code[16..24].copy_from_slice(&(context as u64).to_le_bytes());
    code[24..32].copy_from_slice(&(entry as u64).to_le_bytes());
    code
}

impl UpcallEntries for Elfv2 {
    fn upcall_code(header: *const UpcallHeader) -> Result<ExecutableCode> {
        // SAFETY: the stub's code loads `header` into r11 and the shared entry's address into
        // r12 and CTR and branches to the entry, which calls the header's dispatcher. Called
        // only as a function of the stub's descriptor type, through a pointer (r12 = the
        // stub's address).
        unsafe { ExecutableCode::new(&stub_code(header as usize)) }
    }

    /// A `float` in double format (its register image in f1); every other kind's bits are
    /// already its register image (narrow integers extended by their sign, as the ELFv2
    /// caller expects of r3: 2.2.4; a `bool` 0 or 1).
    #[inline(always)]
    fn scalar_return_bits(kind: ScalarKind, bits: u64) -> u64 {
        match kind {
            ScalarKind::F32 => super::single_to_double(bits),
            _ => bits,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{ArgMove, ArgPlan, Conversion, ReturnMove};

    #[test]
    fn stub_code_loads_the_context_into_r11_and_branches_to_the_entry_through_ctr() {
        let code = stub_code(0x1122_3344_5566_7788);
        let insn = |k: usize| u32::from_le_bytes(code[4 * k..4 * k + 4].try_into().unwrap());
        // the words of `powerpc64le-linux-gnu-as` for the four instructions
        assert_eq!(insn(0), 0xE96C_0010); // ld r11, 16(r12)
        assert_eq!(insn(1), 0xE98C_0018); // ld r12, 24(r12)
        assert_eq!(insn(2), 0x7D89_03A6); // mtctr r12
        assert_eq!(insn(3), 0x4E80_0420); // bctr
        assert_eq!(code[16..24], 0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(
            u64::from_le_bytes(code[24..32].try_into().unwrap()),
            gatun_elfv2_upcall_entry as *const () as usize as u64
        );
    }

    #[test]
    fn the_upcall_plan_names_singles_high_doubles_the_callers_area_and_hfa_areas() {
        let mv = |size, to| ArgMove {
            offset: 0,
            size,
            to,
            conv: Conversion::Bytes,
        };
        let plan = CallPlan {
            args: vec![
                ArgPlan {
                    moves: vec![mv(4, Location::Vector(0))],
                    by_reference: None,
                },
                ArgPlan {
                    moves: vec![mv(8, Location::Vector(1))],
                    by_reference: None,
                },
                ArgPlan {
                    moves: vec![mv(8, Location::Vector(9))],
                    by_reference: None,
                },
                ArgPlan {
                    moves: vec![mv(8, Location::Int(3)), mv(8, Location::Stack(64))],
                    by_reference: None,
                },
            ],
            ret: ReturnPlan::Registers(vec![
                ReturnMove {
                    from: Register::Vector(0),
                    offset: 0,
                    size: 8,
                },
                ReturnMove {
                    from: Register::Vector(1),
                    offset: 8,
                    size: 8,
                },
            ]),
            hidden_return_pointer: None,
            stack_bytes: 72,
            vector_registers: 3,
            first_variadic: None,
            packed_named_stack: false,
        };
        let up = upcall_plan(plan);
        let to: Vec<Vec<Location>> = up
            .args
            .iter()
            .map(|a| a.moves.iter().map(|m| m.to).collect())
            .collect();
        assert_eq!(
            to,
            [
                vec![Location::Stack(SINGLES)],
                vec![Location::Vector(1)],
                vec![Location::Stack(DOUBLES_HIGH + 8)],
                vec![Location::Int(3), Location::Stack(CALLER_AREA + 64)],
            ]
        );
        assert_eq!(up.ret, ReturnPlan::InMemory);
        assert_eq!(
            up.hidden_return_pointer,
            Some(Location::Stack(DOUBLE_HFA_POINTER))
        );
    }
}
