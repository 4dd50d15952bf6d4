//! Compiled downcall stubs for s390x Linux (s390x ELF ABI Supplement, "Parameter Passing" and
//! "Return Values"): per-signature machine code generated from a [`CallPlan`] of the s390x
//! classifier at link time, encoded by [`super::encode`].
//!
//! A stub has two entries compiled from the same plan, both ordinary s390x functions taking
//! the same six parameters:
//!
//! | parameter | raw entry | values entry |
//! |---|---|---|
//! | `r2` | `args: *const *const u8`, argument `i`'s bytes at `args[i]` | `*const Value`: the arguments' `&[Value]` |
//! | `r3` | `ret: *mut u8`: where a struct returned in registers is stored, and the hidden return pointer (`r2` at the call) of a plan with [`CallPlan::hidden_return_pointer`] `Some(Int(0))` | the same |
//! | `r4` | `capture: *mut i32`: the capture segment's errno slot (read only by capture stubs) | the same |
//! | `r5` | the target function | the same |
//! | `r6` | `copies: *const *const u8`: the caller-made copies of the by-reference arguments ([`ArgPlan::by_reference`](crate::abi::ArgPlan::by_reference)), one pointer each in argument order | the same |
//! | `160(%r15)` | the thread's `errno` address ([`crate::os::thread_errno`]; capture stubs only) | the same |
//!
//! Both return the scalar result's bits in `r2`: an integer result is whatever the callee left
//! in `r2` (extended to 64 bits by its type, as the ABI has the callee do); a `float`/`double`
//! result is the 64-bit image of `f0` (`lgdr %r2, %f0`), so a `float` comes back in the
//! **high** word (the executor, which knows the return kind, shifts it down). A struct returned
//! in registers (none on s390x: the classifier returns every aggregate in memory) would be
//! stored at `ret` by the plan's [`ReturnMove`]s, exactly `size` bytes each. A struct returned
//! in memory is written by the callee through the hidden pointer `r2` = `ret` (the classifier
//! has already shifted the integer arguments to `r3..`).
//!
//! The values entry first checks every argument: the tag byte of `Value` `i` (offset `24 i`,
//! [`VALUE_STRIDE`]) against the scalar kind's variant ([`ArgCheck::Scalar`]), or against
//! `Value::Segment` and the segment's length (payload at [`VALUE_PAYLOAD`]) against the
//! struct's size ([`ArgCheck::Group`]) — by-reference arguments included. On a mismatch it
//! returns at once with **`r0` = 1**: nothing has been read beyond the `Value`s, nothing
//! written or called. On the normal path it returns with `r0` = 0. (`r0` is a scratch register
//! that carries no result, so only inline assembly can read the flag: `ValuesEntry::call`,
//! s390x only.) A scalar's bytes are read from the payload (its first bytes: the variant's
//! field at offset 8, in memory order), a struct's from the segment's pointer.
//!
//! # The code
//! `stmg %r6, %r15, 48(%r15)` saves the callee-saved registers in the register save area the
//! caller provides (ABI Supplement, "The Stack Frame"); the parameters move to callee-saved
//! registers that survive the call (`r7` the arguments, `r8` `ret`, `r9` `capture`, `r10` the
//! target, `r12` `copies`, `r13` the errno address, `r11` the frame pointer = `r15` at entry);
//! `r15` is lowered by the callee's register save area (160 bytes) plus the outgoing stack
//! area ([`CallPlan::stack_bytes`], at most [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES));
//! the argument moves fill r2–r6, f0/f2/f4/f6 and the slots at `160 + off(%r15)`; `basr %r14,
//! %r10` calls the target; the return moves; `lmg %r6, %r15, 48(%r11)` restores every saved
//! register (and `r15`); `br %r14` returns. `r15` stays 8-byte aligned. Nothing is ever stored
//! below `r15` (a signal handler may use that stack). A frame of a page (4096 bytes) or more is
//! made by a probing loop ([`sub_sp_probed`]: `lay %r15, -4096(%r15); stg %r1, 48(%r15);
//! brctg %r1`) that touches each page in order going down, each touch 4096 bytes below the one
//! before (the first 4096 below the `stmg` at `48(%r11)`), so a thread whose stack is too small
//! faults on its guard page (Rust's "has overflowed its stack" abort) and never writes past it.
//! Stub size is linear in the number of arguments: every argument has at most one move (an
//! aggregate not of 1, 2, 4 or 8 bytes goes by reference).
//!
//! Argument moves (as planned by the classifier): every [`ArgMove`] loads **exactly** `size`
//! bytes. A move into a general register: [`Conversion::SignExtend`] `lgb/lgh/lgf/lg`,
//! [`Conversion::Bytes`] `llgc/llgh/llgf/lg` (the bytes as a big-endian integer,
//! right-justified; 3, 5, 6 and 7 bytes by `icmy`/`icmh` into a zeroed register),
//! [`Conversion::Bool`] `llgc` + `lcgr` + `srlg 63` (0 or 1); into a floating-point register:
//! 4 bytes `ley` (the short format, the high word), 8 bytes `ldy`, [`Conversion::FloatToDouble`]
//! `ldeb`; into a stack slot: the 64-bit value through `r0` stored whole with `stg` (so a
//! narrow value is right-justified, as the ABI places it), or a widened `float` through `f1`
//! with `stdy`. A by-reference argument's location receives `copies[j]`. The hidden return
//! pointer is written to `r2` after every move.
//!
//! Capture (as the trampoline): the capture slot's value is stored to `errno` right before the
//! `basr` (after every argument is in place, so nothing can change `errno` in between) and
//! `errno` is stored back to the capture slot right after it, before anything else.
//!
//! [`path_lengths`] gives the number of instructions each entry executes on its normal path
//! (the code is straight-line apart from the values entry's checks, whose branches are not
//! taken on that path, and the probe loop, counted once per page).
//!
//! # Invariants
//! - The stub reads only `args[..n]` (raw) or the `n` `Value`s (values), the argument bytes
//!   the plan names (exactly), `copies[..by-reference arguments]`, `*capture` and `*errno`
//!   (capture stubs), its errno parameter, and its own frame; it writes only the argument
//!   registers, the caller's register save area (`stmg`), its frame and outgoing stack area,
//!   the return layout's bytes at `ret` (exactly each move's size), `*errno` and `*capture`
//!   (capture stubs).
//! - Scratch registers are `r0`, `r1`, `r14` (after it is saved) and `f1`; the callee-saved
//!   r6–r13 and r15 are saved by the `stmg` and restored by the `lmg`; the values entry's
//!   checks and rejection run before anything else, with only `r0` and `r1`. `r0` is never a
//!   base or index register.
//! - Offsets come from a plan the classifier accepted: the stack area is at most
//!   [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES) bytes; a displacement that does not
//!   fit the long (signed 20-bit) field (the outgoing stack area from 512 KiB, the `Value`s
//!   from about 21,800 arguments, the copies' array) is loaded into an index register with
//!   `lgfi` (`r14` in the body, `r1` in the checks). The checks branch to the rejection with
//!   `brcl` (±4 GiB): every stub's branches reach.

// Off s390x Linux this module is compiled for its code-generation tests only: the placing
// and calling half (`Stub`, the cache, the entries) is used by the s390x executor alone.
#![cfg_attr(not(gatun_backend = "s390x"), allow(dead_code))]

use std::ptr::NonNull;
use std::sync::Arc;

use super::encode::{self as e, Addr, Asm, Cond, FRxy, Mask, Rsy, Rxy, F, R};
use crate::abi::kinds::segment_tag;
use crate::abi::{ArgMove, CallPlan, Conversion, Location, Register, ReturnMove, ReturnPlan};
pub(crate) use crate::backend::ArgCheck;
use crate::code::compiled::{CompiledStub, StubCompiler};
use crate::error::Result;
use crate::memory::MemorySegment;
use crate::value::scalar_tag;

pub(crate) use crate::backend::{VALUE_PAYLOAD, VALUE_STRIDE};

pub(crate) use crate::backend::RawFn;

/// The rejection flag of the values entry; the value of a stack move; errno's value.
const VAL: R = R::R0;
/// The pointer to the current argument's bytes; the index of a large displacement in the
/// checks; the page count of the probe loop.
const ARG: R = R::R1;
/// The index of a large displacement in the body.
const IDX: R = R::R14;
/// The arguments (`Value`s or pointers).
const ARGS: R = R::R7;
/// `ret`.
const RET: R = R::R8;
/// The capture segment's errno slot.
const CAPTURE: R = R::R9;
/// The target.
const TARGET: R = R::R10;
/// The frame pointer: `r15` at entry.
const FP: R = R::R11;
/// `copies`.
const COPIES: R = R::R12;
/// The thread's errno address.
const ERRNO: R = R::R13;
/// The stack pointer.
const SP: R = R::R15;
/// The floating-point scratch register.
const FSCRATCH: F = F::F1;

/// The register save area a caller provides at `0(%r15)` (ABI Supplement, "The Stack Frame"):
/// stack arguments start above it.
pub(crate) const SAVE_AREA: u32 = 160;

/// How an entry finds argument bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Values,
    Raw,
}

/// The address `disp(base)` for an instruction with an index field and a long displacement:
/// directly when `disp` fits, else `lgfi idx, disp` and `0(idx, base)`.
fn addr(a: &mut Asm, base: R, disp: i64, idx: R) -> Addr {
    if e::fits_long(disp) {
        Addr::new(base, disp as i32)
    } else {
        a.emit(e::lgfi(idx, disp as i32));
        Addr::indexed(idx, base, 0)
    }
}

/// The base and displacement of `disp(base)` for an instruction without an index field (a
/// long displacement): directly when `disp` fits, else `idx` = the address (`lgfi` + `la`).
fn based(a: &mut Asm, base: R, disp: i64, idx: R) -> (R, i32) {
    if e::fits_long(disp) {
        (base, disp as i32)
    } else {
        a.emit(e::lgfi(idx, disp as i32));
        a.emit(e::la(idx, Addr::indexed(idx, base, 0)));
        (idx, 0)
    }
}

/// The distance in bytes between two stack probes: one 4 KiB page (the smallest guard page).
const PROBE_INTERVAL: u32 = 4096;

/// `r15 -= frame` touching every page of the new frame in order going down (the shape of
/// gcc's `-fstack-clash-protection`): for a frame of a page or more, `r1` = the page count,
/// then per page `lay %r15, -4096(%r15); stg %r1, 48(%r15)` (a loop of three instructions
/// ending with `brctg %r1`), then `lay` of the rest (less than a page). Each touch is 4096
/// bytes below the one before, the first below the `stmg` at `48(%r11)`; the rest lies within
/// a page of the last touch, and the callee's own `stmg` at `48(%r15)` is the next one. So a
/// stack too small for the frame faults on its guard page and nothing is written past it.
/// Returns the instructions executed beyond the ones emitted (the loop's repeats).
fn sub_sp_probed(a: &mut Asm, frame: u32) -> usize {
    let (pages, rest) = (frame / PROBE_INTERVAL, frame % PROBE_INTERVAL);
    let mut repeats = 0;
    if pages > 0 {
        // pages <= (MAX_STACK_BYTES + 160) / 4096 + 1: a 16-bit immediate
        a.emit(e::lghi(ARG, pages as i16));
        a.emit(e::rxy(
            Rxy::Lay,
            SP,
            Addr::new(SP, -(PROBE_INTERVAL as i32)),
        ));
        a.emit(e::rxy(Rxy::Stg, ARG, Addr::new(SP, 48)));
        a.emit(e::brctg(ARG, -12));
        repeats = 3 * (pages as usize - 1);
    }
    if rest > 0 {
        a.emit(e::rxy(Rxy::Lay, SP, Addr::new(SP, -(rest as i32))));
    }
    repeats
}

/// The masks of `icmh` and `icmy` (or `stcmh`, `stcmy`) for an odd size (3, 5, 6, 7 bytes):
/// the value's bytes are the low `size` bytes of the register, the first `size - 4` of them
/// (if any) in the high word.
fn odd_masks(size: u8) -> (u8, u8) {
    match size {
        3 => (0, 0b0111),
        5 => (0b0001, 0b1111),
        6 => (0b0011, 0b1111),
        _ => (0b0111, 0b1111),
    }
}

/// Loads exactly `size` bytes at `disp(base)` into `rd` as an unsigned big-endian integer,
/// right-justified (zero-extended).
fn load_bytes(a: &mut Asm, rd: R, base: R, disp: i64, size: u8, idx: R) {
    if matches!(size, 1 | 2 | 4 | 8) {
        let at = addr(a, base, disp, idx);
        return a.emit(e::rxy(Rxy::load(size, false), rd, at));
    }
    let (hi, lo) = odd_masks(size);
    let high = hi.count_ones();
    let (b, d) = based(a, base, disp + i64::from(high), idx);
    a.emit(e::lghi(rd, 0));
    if hi != 0 {
        a.emit(e::mask_op(Mask::Icmh, rd, hi, b, d - high as i32));
    }
    a.emit(e::mask_op(Mask::Icmy, rd, lo, b, d));
}

/// Stores exactly the low `size` bytes of `rs` at `disp(base)`, big-endian.
fn store_bytes(a: &mut Asm, rs: R, base: R, disp: i64, size: u8, idx: R) {
    if matches!(size, 1 | 2 | 4 | 8) {
        let at = addr(a, base, disp, idx);
        return a.emit(e::rxy(Rxy::store(size), rs, at));
    }
    let (hi, lo) = odd_masks(size);
    let high = hi.count_ones();
    let (b, d) = based(a, base, disp + i64::from(high), idx);
    if hi != 0 {
        a.emit(e::mask_op(Mask::Stcmh, rs, hi, b, d - high as i32));
    }
    a.emit(e::mask_op(Mask::Stcmy, rs, lo, b, d));
}

/// Converts and loads one move's source at `disp(base)` into the 64-bit register `rd`.
fn load_gpr(a: &mut Asm, rd: R, base: R, disp: i64, m: &ArgMove) {
    match m.conv {
        Conversion::Bytes => load_bytes(a, rd, base, disp, m.size, IDX),
        Conversion::SignExtend => {
            let at = addr(a, base, disp, IDX);
            a.emit(e::rxy(Rxy::load(m.size, true), rd, at));
        }
        Conversion::Bool => {
            let at = addr(a, base, disp, IDX);
            a.emit(e::rxy(Rxy::Llgc, rd, at));
            // 0 stays 0; 1..=255 negated has bit 63 set
            a.emit(e::lcgr(rd, rd));
            a.emit(e::srlg(rd, rd, 63));
        }
        Conversion::FloatToDouble => {
            load_widened(a, FSCRATCH, base, disp);
            a.emit(e::lgdr(rd, FSCRATCH));
        }
    }
}

/// `ldeb fd, disp(base)`: a `float` widened to a `double` (a short displacement, else through
/// the index register).
fn load_widened(a: &mut Asm, fd: F, base: R, disp: i64) {
    let at = if e::fits_short(disp) {
        Addr::new(base, disp as i32)
    } else {
        a.emit(e::lgfi(IDX, disp as i32));
        Addr::indexed(IDX, base, 0)
    };
    a.emit(e::ldeb(fd, at));
}

/// Carries out one move from `disp + m.offset(base)`.
fn emit_move(a: &mut Asm, base: R, disp: i64, m: &ArgMove) {
    let disp = disp + i64::from(m.offset);
    match m.to {
        Location::Int(n) => load_gpr(a, R::arg(n), base, disp, m),
        Location::Vector(n) => {
            let fd = F::arg(n);
            match (m.conv, m.size) {
                (Conversion::Bytes, 4) => {
                    let at = addr(a, base, disp, IDX);
                    a.emit(e::frxy(FRxy::Ley, fd, at));
                }
                (Conversion::Bytes, 8) => {
                    let at = addr(a, base, disp, IDX);
                    a.emit(e::frxy(FRxy::Ldy, fd, at));
                }
                (Conversion::FloatToDouble, _) => load_widened(a, fd, base, disp),
                _ => {
                    // Not planned by the classifier: the converted value, a 4-byte one in
                    // the high word.
                    load_gpr(a, VAL, base, disp, m);
                    if super::is_short_fpr_move(m.size, m.conv) {
                        a.emit(e::sllg(VAL, VAL, 32));
                    }
                    a.emit(e::ldgr(fd, VAL));
                }
            }
        }
        Location::Stack(off) => {
            let slot = i64::from(SAVE_AREA) + i64::from(off);
            if m.conv == Conversion::FloatToDouble {
                load_widened(a, FSCRATCH, base, disp);
                let at = addr(a, SP, slot, IDX);
                a.emit(e::frxy(FRxy::Stdy, FSCRATCH, at));
            } else {
                load_gpr(a, VAL, base, disp, m);
                let at = addr(a, SP, slot, IDX);
                a.emit(e::rxy(Rxy::Stg, VAL, at));
            }
        }
    }
}

/// Where argument `i`'s bytes are: `(base register, displacement)`, loading the argument's
/// pointer into [`ARG`] where needed. [`ARGS`] holds the entry's `r2`.
fn arg_source(a: &mut Asm, mode: Mode, i: usize, check: ArgCheck) -> (R, i64) {
    match mode {
        Mode::Raw => {
            let at = addr(a, ARGS, 8 * i as i64, IDX);
            a.emit(e::rxy(Rxy::Lg, ARG, at));
            (ARG, 0)
        }
        Mode::Values => {
            let payload = i64::from(VALUE_STRIDE) * i as i64 + i64::from(VALUE_PAYLOAD);
            match check {
                ArgCheck::Scalar(_) => (ARGS, payload),
                ArgCheck::Group(_) => {
                    let ptr = payload + MemorySegment::PTR_OFFSET as i64;
                    let at = addr(a, ARGS, ptr, IDX);
                    a.emit(e::rxy(Rxy::Lg, ARG, at));
                    (ARG, 0)
                }
            }
        }
    }
}

/// Emits every argument move and by-reference pointer.
fn emit_args(a: &mut Asm, plan: &CallPlan, checks: &[ArgCheck], mode: Mode) {
    let mut j = 0i64;
    for (i, ap) in plan.args.iter().enumerate() {
        if let Some(to) = ap.by_reference {
            // copies[j]: j counts the by-reference arguments before this one
            let at = addr(a, COPIES, 8 * j, IDX);
            j += 1;
            match to {
                Location::Int(n) => a.emit(e::rxy(Rxy::Lg, R::arg(n), at)),
                Location::Stack(off) => {
                    a.emit(e::rxy(Rxy::Lg, VAL, at));
                    let slot = i64::from(SAVE_AREA) + i64::from(off);
                    let at = addr(a, SP, slot, IDX);
                    a.emit(e::rxy(Rxy::Stg, VAL, at));
                }
                // Invariant: plans never put a pointer in an FPR. The classifier passes a
                // copy's address like any pointer (an argument GPR, else a stack slot), so
                // this arm is never taken; it emits nothing.
                Location::Vector(_) => {
                    debug_assert!(false, "a by-reference pointer planned in an FPR");
                }
            }
            continue;
        }
        if ap.moves.is_empty() {
            continue;
        }
        let (base, disp) = arg_source(a, mode, i, checks[i]);
        for m in &ap.moves {
            emit_move(a, base, disp, m);
        }
    }
}

/// The values entry's checks (first, before anything is written): each argument's tag byte,
/// and each struct segment's length, with `r0` and `r1` only. Branches to `fail` on a
/// mismatch.
fn emit_checks(a: &mut Asm, checks: &[ArgCheck], fail: e::Label) {
    for (i, check) in checks.iter().enumerate() {
        let slot = i64::from(VALUE_STRIDE) * i as i64;
        let tag = match check {
            ArgCheck::Scalar(k) => scalar_tag(*k),
            ArgCheck::Group(_) => segment_tag(),
        };
        let (b, d) = based(a, R::R2, slot, ARG);
        a.emit(e::cliy(b, d, tag));
        a.branch(Cond::Ne, fail);
        if let ArgCheck::Group(size) = *check {
            let len = slot + i64::from(VALUE_PAYLOAD) + MemorySegment::LEN_OFFSET as i64;
            let at = addr(a, R::R2, len, ARG);
            a.emit(e::rxy(Rxy::Lg, VAL, at));
            a.emit(e::clgfi(VAL, size));
            a.branch(Cond::Low, fail);
        }
    }
}

/// Stores one return move from its register into `offset(RET)`.
fn emit_return_move(a: &mut Asm, m: &ReturnMove) {
    let disp = i64::from(m.offset);
    match (m.from, m.size) {
        (Register::Int(_), size) => store_bytes(a, R::R2, RET, disp, size, IDX),
        (Register::Vector(_), 4) => {
            let at = addr(a, RET, disp, IDX);
            a.emit(e::frxy(FRxy::Stey, F::arg(0), at));
        }
        (Register::Vector(_), 8) => {
            let at = addr(a, RET, disp, IDX);
            a.emit(e::frxy(FRxy::Stdy, F::arg(0), at));
        }
        (Register::Vector(_), size) => {
            // Not planned by the classifier: the register's first `size` bytes.
            a.emit(e::lgdr(VAL, F::arg(0)));
            a.emit(e::srlg(VAL, VAL, 64 - 8 * size));
            store_bytes(a, VAL, RET, disp, size, IDX);
        }
    }
}

/// Compiles one entry; returns the number of instructions before its rejection path (values
/// entry) or its end (raw entry), and the instructions the normal path executes beyond those
/// (the stack probe's repeats).
fn compile_entry(
    a: &mut Asm,
    plan: &CallPlan,
    checks: &[ArgCheck],
    capture: bool,
    mode: Mode,
) -> (usize, usize) {
    let start = a.insns();
    let fail = a.label();
    if mode == Mode::Values {
        emit_checks(a, checks, fail);
    }
    let by_ref = plan.args.iter().any(|ap| ap.by_reference.is_some());
    let needs_ret =
        plan.hidden_return_pointer.is_some() || matches!(plan.ret, ReturnPlan::Registers(_));
    a.emit(e::rsy(Rsy::Stmg, R::R6, SP, Some(SP), 48));
    a.emit(e::lgr(FP, SP));
    a.emit(e::lgr(ARGS, R::R2));
    if needs_ret {
        a.emit(e::lgr(RET, R::R3));
    }
    if capture {
        a.emit(e::lgr(CAPTURE, R::R4));
        a.emit(e::rxy(Rxy::Lg, ERRNO, Addr::new(FP, SAVE_AREA as i32)));
    }
    a.emit(e::lgr(TARGET, R::R5));
    if by_ref {
        a.emit(e::lgr(COPIES, R::R6));
    }
    let repeats = sub_sp_probed(a, SAVE_AREA + plan.stack_bytes);
    emit_args(a, plan, checks, mode);
    if let Some(to) = plan.hidden_return_pointer {
        match to {
            Location::Int(n) => a.emit(e::lgr(R::arg(n), RET)),
            Location::Stack(off) => {
                let slot = i64::from(SAVE_AREA) + i64::from(off);
                let at = addr(a, SP, slot, IDX);
                a.emit(e::rxy(Rxy::Stg, RET, at));
            }
            Location::Vector(_) => debug_assert!(false, "a return pointer planned in an FPR"),
        }
    }
    if capture {
        // errno <- capture, right before the call
        a.emit(e::rxy(Rxy::Ly, VAL, Addr::new(CAPTURE, 0)));
        a.emit(e::rxy(Rxy::Sty, VAL, Addr::new(ERRNO, 0)));
    }
    a.emit(e::basr(R::R14, TARGET));
    if capture {
        // capture <- errno, right after the call (r2 and f0 untouched)
        a.emit(e::rxy(Rxy::Ly, VAL, Addr::new(ERRNO, 0)));
        a.emit(e::rxy(Rxy::Sty, VAL, Addr::new(CAPTURE, 0)));
    }
    match &plan.ret {
        ReturnPlan::Registers(moves) => moves.iter().for_each(|m| emit_return_move(a, m)),
        ReturnPlan::Scalar(Register::Vector(_)) => a.emit(e::lgdr(R::R2, F::arg(0))),
        _ => {}
    }
    if mode == Mode::Values {
        a.emit(e::lghi(VAL, 0));
    }
    a.emit(e::rsy(Rsy::Lmg, R::R6, SP, Some(FP), 48));
    a.emit(e::br(R::R14));
    let insns = a.insns() - start;
    if mode == Mode::Values && !checks.is_empty() {
        a.bind(fail);
        a.emit(e::lghi(VAL, 1));
        a.emit(e::br(R::R14));
    }
    (insns, repeats)
}

/// The machine code of a stub: both entries (byte offsets into `bytes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StubCode {
    /// The code bytes (instructions in the order they are fetched).
    pub bytes: Vec<u8>,
    /// Byte offset of the raw entry (0).
    pub raw: usize,
    /// Byte offset of the values entry (8-byte aligned).
    pub values: usize,
    /// Instructions executed by each entry on its normal path ([`path_lengths`]).
    pub paths: PathLengths,
}

/// The number of instructions a stub executes per call on each entry's normal path, the
/// target's own instructions not counted (the values entry's checks all pass; its rejection
/// path is not counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PathLengths {
    /// Raw entry.
    pub raw: usize,
    /// Values entry.
    pub values: usize,
}

/// Compiles the stub of `plan` (`checks[i]` describes argument `i` for the values entry's
/// checks; `checks.len() == plan.args().len()`).
pub(crate) fn compile(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> StubCode {
    debug_assert_eq!(checks.len(), plan.args.len());
    let mut a = Asm::default();
    let (raw_insns, raw_repeats) = compile_entry(&mut a, plan, checks, capture, Mode::Raw);
    a.pad(a.len().next_multiple_of(8) - a.len());
    let values = a.len();
    let (values_insns, values_repeats) = compile_entry(&mut a, plan, checks, capture, Mode::Values);
    a.pad(a.len().next_multiple_of(8) - a.len());
    StubCode {
        bytes: a.finish(),
        raw: 0,
        values,
        paths: PathLengths {
            raw: raw_insns + raw_repeats,
            values: values_insns + values_repeats,
        },
    }
}

/// The per-call instruction counts of the stub of `plan` (see [`PathLengths`]).
#[cfg(test)]
pub(crate) fn path_lengths(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> PathLengths {
    compile(plan, checks, capture).paths
}

/// The instructions of `insns`, for tests that build expected code.
#[cfg(test)]
pub(crate) fn bytes_of(insns: &[e::Insn]) -> Vec<u8> {
    insns.iter().flat_map(|i| i.bytes().to_vec()).collect()
}

/// The values entry of a placed stub (see the module documentation): called only through
/// `ValuesEntry::call` (s390x only), which reads the rejection flag in `r0`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ValuesEntry(NonNull<u8>);

// SAFETY: the entry is the address of immutable code; calling it is as thread-safe as the
// arguments passed.
unsafe impl Send for ValuesEntry {}
// SAFETY: as above.
unsafe impl Sync for ValuesEntry {}

impl ValuesEntry {
    /// Calls the values entry: `Some(r2)` when the arguments passed the checks and the target
    /// was called, `None` when they were rejected (nothing called or written).
    ///
    /// # Safety
    /// As the raw entry's call: `values` points to the stub's `n` arguments, `ret`, `capture`,
    /// `copies` and `errno_location` are what the module documentation says the plan needs,
    /// and calling `target` with the converted arguments is sound.
    #[cfg(all(target_arch = "s390x", not(miri)))]
    pub(crate) unsafe fn call(
        self,
        values: *const crate::value::Value<'_>,
        ret: *mut u8,
        capture: *mut i32,
        target: *const std::ffi::c_void,
        copies: *const *const u8,
        errno_location: *mut i32,
    ) -> Option<u64> {
        let (r2, flag): (u64, u64);
        // SAFETY: the entry is an s390x function of these six arguments (the sixth in the
        // first stack-argument slot, above the 160-byte register save area this block
        // provides; see the caller's contract); it returns with r0 = 0 or 1, clobbers only
        // call-clobbered registers and restores r15.
        unsafe {
            std::arch::asm!(
                "aghi %r15, -168",
                "stg {errno}, 160(%r15)",
                "basr %r14, {entry}",
                "aghi %r15, 168",
                entry = in(reg_addr) self.0.as_ptr(),
                errno = in(reg) errno_location,
                inlateout("r2") values => r2,
                in("r3") ret,
                in("r4") capture,
                in("r5") target,
                in("r6") copies,
                lateout("r0") flag,
                clobber_abi("C"),
            );
        }
        (flag == 0).then_some(r2)
    }
}

/// The s390x stub compiler of [`CompiledStub`]: [`compile`] and the entries it lays out.
#[derive(Debug)]
pub(crate) struct Compiler;

/// The entry points of a placed s390x stub (a [`Stub`] dereferences to them).
#[derive(Debug)]
pub(crate) struct Entries {
    /// The raw entry.
    pub raw: RawFn,
    /// The values entry.
    pub values: ValuesEntry,
}

// SAFETY: `compile` emits z/Architecture code for the plan (on other hosts it is never
// called); the raw entry is at offset 0 and the values entry at `values` (see the module
// documentation).
unsafe impl StubCompiler for Compiler {
    type Code = StubCode;
    type Entries = Entries;

    fn compile(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> StubCode {
        compile(plan, checks, capture)
    }

    fn bytes(code: &StubCode) -> &[u8] {
        &code.bytes
    }

    unsafe fn entries(code: &StubCode, base: NonNull<u8>) -> Entries {
        Entries {
            // SAFETY: offset 0 is the raw entry, a complete function with the `RawFn`
            // signature, placed for as long as the entries are called (the caller's contract).
            raw: unsafe { std::mem::transmute::<*mut u8, RawFn>(base.as_ptr()) },
            // SAFETY: `code.values` is the start of the values entry inside the placed code.
            values: ValuesEntry(unsafe { base.add(code.values) }),
        }
    }
}

/// A compiled stub in the code arena ([`crate::code`]), with its entries ([`Entries`]).
/// Immutable, `Send + Sync`; shared through `Arc` by every handle of its signature (the cache
/// holds a `Weak`, so the code is freed with the last handle).
pub(crate) type Stub = CompiledStub<Compiler>;

/// Compiles and places a stub without consulting the cache.
///
/// # Errors
/// As [`ExecutableCode::new`](crate::code::ExecutableCode::new):
/// [`crate::Error::Unsupported`] when the OS refuses executable memory.
#[cfg(any(test, feature = "internals"))]
pub(crate) fn build(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> Result<Stub> {
    Stub::build(plan, checks, capture)
}

/// The stub for this signature: a live one from the cache, or compiled, placed and cached
/// (see `crate::code::stub_cache`).
///
/// # Errors
/// As [`build`].
pub(crate) fn stub_for(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> Result<Arc<Stub>> {
    Stub::cached(plan, checks, capture)
}

#[cfg(test)]
mod tests;
