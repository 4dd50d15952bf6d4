//! Compiled downcall stubs for AArch64 (AAPCS64 on Linux, and Apple arm64): per-signature
//! machine code generated from a [`CallPlan`] of [`super::classify`] at link time, encoded by
//! [`super::encode`]. The code depends on the plan only (the flavour is in the plan: an Apple
//! plan's packed stack arguments and variadics); on Apple it is compiled but not executed by
//! gatun's tests.
//!
//! A stub has two entries compiled from the same plan, both ordinary AAPCS64 functions taking
//! the same six parameters:
//!
//! | register | raw entry | values entry |
//! |---|---|---|
//! | `x0` | `args: *const *const u8`, argument `i`'s bytes at `args[i]` | `*const Value`: the arguments' `&[Value]` |
//! | `x1` | `ret: *mut u8`: where a struct returned in registers is stored, and the indirect-result address (`x8`) of a plan with [`CallPlan::hidden_return_pointer`] `Some(Int(8))` | the same |
//! | `x2` | `capture: *mut i32`: the capture segment's errno slot (read only by capture stubs) | the same |
//! | `x3` | the target function | the same |
//! | `x4` | `copies: *const *const u8`: the caller-made copies of the by-reference arguments ([`ArgPlan::by_reference`](crate::abi::ArgPlan::by_reference)), one pointer each in argument order | the same |
//! | `x5` | the thread's `errno` address ([`crate::os::thread_errno`]; capture stubs only) | the same |
//!
//! Both return the scalar result's bits in `x0` (a `float`/`double` result: `fmov x0, d0`, the
//! bits of `d0`; the upper bits of a narrow integer are whatever the callee left, as for any
//! AAPCS64 result). A struct returned in registers (§6.9: an HFA in `v0..v3`, another
//! composite of at most 16 bytes in `x0`, `x1`) is stored at `ret` by the plan's
//! [`ReturnMove`]s, exactly `size` bytes each. A struct returned in memory is written by the
//! callee through `x8` = `ret`.
//!
//! The values entry first checks every argument: the tag byte of `Value` `i` (offset `24 i`,
//! [`VALUE_STRIDE`]) against the scalar kind's variant ([`ArgCheck::Scalar`]), or against
//! `Value::Segment` and the segment's length (payload at [`VALUE_PAYLOAD`]) against the
//! struct's size ([`ArgCheck::Group`]) — by-reference arguments included (the executor checks
//! them before making the copies; the stub checks them again, which costs six instructions
//! each and keeps the entry safe on its own). On a mismatch it returns at once with **`x9` = 1**:
//! nothing has been read beyond the `Value`s, nothing written or called. On the normal path it
//! returns with `x9` = 0. (`x9` is a caller-saved temporary, so only inline assembly can read
//! the flag: `ValuesEntry::call` (AArch64 only).) A scalar's bytes are read from the payload (its low
//! bytes), a struct's from the segment's pointer.
//!
//! # The code
//! Each entry starts with `bti c` (so it can be called from BTI-guarded code). Then, unless the
//! raw entry can jump straight to the target (below): a frame record (`stp x29, x30, [sp,
//! #-16]!; mov x29, sp`), `sp` lowered by the outgoing stack area rounded up to 16 bytes
//! ([`CallPlan::stack_bytes`], at most [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES))
//! plus the stub's own slots below `x29` (`capture` and the errno address for a capture
//! stub, `ret` for a struct returned in registers); the argument moves; `blr` the target;
//! the return moves; the frame popped; `ret`. `sp` is 16-byte aligned at the call. A frame of
//! a page (4096 bytes) or more is made by a probing loop ([`sub_sp_probed`]: `sub sp, sp, #1,
//! lsl #12; str xzr, [sp]` per page, counted in `x17`) that touches each page in order going
//! down, so a thread whose stack is too small faults on its guard page (Rust's "has
//! overflowed its stack" abort) and never writes past it. Stub size is linear in the number
//! of arguments: a composite over 16 bytes goes by reference, so no argument has more than
//! four stack moves (an HFA).
//!
//! The **tail** form (raw entry only: no capture, no stack arguments, a void, integer or
//! in-memory result, so nothing is left to do after the call) has no frame: the argument
//! moves, then `br x16` with the target in `x16` (a `bti c` landing pad accepts `br` only from
//! `x16`/`x17`). The target returns straight to the stub's caller.
//!
//! Argument moves (AAPCS64 §6.8.2, as planned by the classifier): every [`ArgMove`] loads
//! **exactly** `size` bytes — 3, 5, 6 and 7 bytes are assembled from 4-, 2- and 1-byte loads
//! with `orr ..., lsl`, so no load reads past the argument's bytes. [`Conversion::SignExtend`]
//! uses `ldrsb/ldrsh/ldrsw`, [`Conversion::Bool`] `cmp` + `cset` (0 or 1),
//! [`Conversion::FloatToDouble`] `fcvt`; a 4-byte vector move is `ldr s`, an 8-byte one
//! `ldr d` (the rest of the register zeroed). Stack moves write whole 8-byte slots (Linux,
//! C.12–C.15; an Apple plan's [`CallPlan::stack_write_bytes`] is honoured too). A
//! by-reference argument's location receives `copies[j]`. The moves into `x0` (which holds
//! `args`) are emitted last.
//!
//! Capture (as the trampoline): the capture slot's value is stored to `errno` right before the
//! `blr` (after every argument is in place, so nothing can change `errno` in between) and
//! `errno` is stored back to the capture slot right after it, before anything else.
//!
//! [`path_lengths`] gives the number of instructions each entry executes on its normal path
//! (the code is straight-line apart from the values entry's checks, whose branches are not
//! taken on that path).
//!
//! # Invariants
//! - The stub reads only `args[..n]` (raw) or the `n` `Value`s (values), the argument bytes
//!   the plan names (exactly), `copies[..by-reference arguments]`, `*capture` and `*errno`
//!   (capture stubs), and its own frame; it writes only the argument registers, its frame and
//!   outgoing stack area, the return layout's bytes at `ret` (exactly each move's size),
//!   `*errno` and `*capture` (capture stubs). `x18` is never named.
//! - Scratch registers are caller-saved temporaries: `x9`–`x17` and `v16` (`x17` only as the
//!   probe's page count, before any argument register is loaded). The only
//!   callee-saved registers touched are `x29`/`x30`, saved and restored by the frame record;
//!   the values entry's rejection path runs before anything else.
//! - Offsets come from a plan the classifier accepted: the stack area is at most
//!   [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES) bytes, so the probe's page count
//!   is one 16-bit immediate and the rest of the frame one 12-bit immediate; a displacement
//!   that does not fit a load/store's scaled 12-bit field (from 4096 bytes for a byte access,
//!   32 KiB for an 8-byte one, up to the 1 MiB stack area and the arguments' `Value`s) is put
//!   in `x15` with `movz`/`movk` and used as a register offset (`[sp, x15]`, `[x0, x15]`).

// Off AArch64 Linux and Apple arm64 this module is compiled for its code-generation tests
// only: the placing and calling half (`Stub`, the cache, the entries) is used by the AArch64
// executor alone.
#![cfg_attr(not(gatun_backend = "aarch64"), allow(dead_code))]

use std::ptr::NonNull;
use std::sync::Arc;

use super::encode::{self as e, Asm, Cond, MemOp, PairMode, Width, FP, LR, SP};
use crate::abi::kinds::segment_tag;
use crate::abi::{ArgMove, CallPlan, Conversion, Location, Register, ReturnMove, ReturnPlan};
pub(crate) use crate::backend::ArgCheck;
use crate::code::compiled::{CompiledStub, StubCompiler};
use crate::error::Result;
use crate::memory::MemorySegment;
use crate::value::scalar_tag;

pub(crate) use crate::backend::{VALUE_PAYLOAD, VALUE_STRIDE};

pub(crate) use crate::backend::RawFn;

// Scratch registers (caller-saved temporaries).
/// The rejection flag of the values entry, and the checks' scratch.
const FLAG: u8 = 9;
/// `copies` when `x4` is an argument register of the plan.
const COPIES: u8 = 10;
/// The pointer to the current argument's bytes.
const ARG: u8 = 11;
/// Pieces of odd-size loads; the capture slot's address around the call; `ret` after it.
const PIECE: u8 = 12;
/// The errno address around the call.
const ERRNO: u8 = 13;
/// A converted value on its way to a stack slot or vector register.
const VAL: u8 = 14;
/// Displacements too large for a load/store's immediate field.
const ADDR: u8 = 15;
/// The target when `x3` is an argument register (and always in the tail form).
const TARGET: u8 = 16;
/// The page count of the stack probe in the prologue (before `TARGET` is loaded).
const PROBES: u8 = 17;
/// The floating-point scratch register `v16`.
const VSCRATCH: u8 = 16;
/// The indirect-result register.
const X8: u8 = 8;

/// How an entry finds argument bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Values,
    Raw,
}

/// A load or store of `w` at `[base + disp]`: the scaled 12-bit immediate form when `disp`
/// fits it, else `disp` in [`ADDR`] and the register-offset form.
fn mem(a: &mut Asm, op: MemOp, w: Width, rt: u8, base: u8, disp: u32) {
    if disp % w.bytes() == 0 && disp / w.bytes() < 4096 {
        a.emit(e::mem_imm(op, w, rt, base, disp));
    } else {
        load_imm(a, ADDR, u64::from(disp));
        a.emit(e::mem_reg(op, w, rt, base, ADDR));
    }
}

/// The distance in bytes between two stack probes: one 4 KiB page (the smallest guard page).
const PROBE_INTERVAL: u32 = 4096;

/// `sub sp, sp, #frame` touching every page of the new frame in order going down (gcc's
/// `-fstack-clash-protection` shape on AArch64): for a frame of a page or more, [`PROBES`] =
/// `frame / 4096`, then `sub sp, sp, #1, lsl #12; str xzr, [sp]` that many times (a loop of
/// four words), then `sub sp` of the rest (less than a page, one 12-bit immediate); a smaller
/// frame is one `sub sp, sp, #frame`, whose bytes lie within a page of the frame record just
/// stored. Every access to the frame then lies within 4096 bytes below an address already
/// touched, so a stack too small for the frame faults on its guard page and nothing is ever
/// written past it. Returns the words executed beyond the ones emitted (the loop's repeats).
fn sub_sp_probed(a: &mut Asm, frame: u32) -> usize {
    let (pages, rest) = (frame / PROBE_INTERVAL, frame % PROBE_INTERVAL);
    let mut repeats = 0;
    if pages > 0 {
        // pages <= MAX_STACK_BYTES / 4096 + 1: one 16-bit immediate
        a.emit(e::movz(PROBES, pages as u16, 0));
        a.emit(e::sub_imm(SP, SP, 1, true));
        a.emit(e::mem_imm(MemOp::Store, Width::X, e::ZR, SP, 0));
        a.emit(e::sub_imm(PROBES, PROBES, 1, false));
        a.emit(e::cbnz(true, PROBES, -3));
        repeats = 4 * (pages as usize - 1);
    }
    if rest > 0 {
        a.emit(e::sub_imm(SP, SP, rest, false));
    }
    repeats
}

/// `rd = imm` with `movz` + `movk`s (only the non-zero 16-bit pieces after the first).
fn load_imm(a: &mut Asm, rd: u8, imm: u64) {
    a.emit(e::movz(rd, imm as u16, 0));
    for hw in 1..4u8 {
        let piece = (imm >> (16 * hw)) as u16;
        if piece != 0 {
            a.emit(e::movk(rd, piece, hw));
        }
    }
}

/// The pieces (4, 2, 1 bytes) an odd size is assembled from: `(offset, width)`.
fn pieces(size: u8) -> impl Iterator<Item = (u8, u8)> {
    let mut done = 0u8;
    std::iter::from_fn(move || {
        if done >= size {
            return None;
        }
        let p = [4u8, 2, 1].into_iter().find(|&p| p <= size - done)?;
        let at = done;
        done += p;
        Some((at, p))
    })
}

/// Loads exactly `size` bytes at `[base + disp]` into `xd`, zero-extended (3, 5, 6, 7 bytes
/// in pieces through [`PIECE`]).
fn load_bytes(a: &mut Asm, rd: u8, base: u8, disp: u32, size: u8) {
    if matches!(size, 1 | 2 | 4 | 8) {
        return mem(a, MemOp::Load, Width::of(size), rd, base, disp);
    }
    for (at, p) in pieces(size) {
        if at == 0 {
            mem(a, MemOp::Load, Width::of(p), rd, base, disp);
        } else {
            mem(
                a,
                MemOp::Load,
                Width::of(p),
                PIECE,
                base,
                disp + u32::from(at),
            );
            a.emit(e::orr_lsl(rd, rd, PIECE, 8 * at));
        }
    }
}

/// Stores exactly the low `size` bytes of `xs` at `[base + disp]` (3, 5, 6, 7 bytes in pieces;
/// `xs` is then shifted, so clobbered).
fn store_bytes(a: &mut Asm, rs: u8, base: u8, disp: u32, size: u8) {
    if matches!(size, 1 | 2 | 4 | 8) {
        return mem(a, MemOp::Store, Width::of(size), rs, base, disp);
    }
    let mut last = 0u8;
    for (at, p) in pieces(size) {
        if at > last {
            a.emit(e::lsr(rs, rs, 8 * (at - last)));
            last = at;
        }
        mem(
            a,
            MemOp::Store,
            Width::of(p),
            rs,
            base,
            disp + u32::from(at),
        );
    }
}

/// Converts and loads one move's source at `[base + disp]` into the 64-bit register `xd`.
fn load_gpr(a: &mut Asm, rd: u8, base: u8, disp: u32, m: &ArgMove) {
    match m.conv {
        Conversion::Bytes => load_bytes(a, rd, base, disp, m.size),
        Conversion::SignExtend => mem(a, MemOp::LoadSigned, Width::of(m.size), rd, base, disp),
        Conversion::Bool => {
            mem(a, MemOp::Load, Width::B, rd, base, disp);
            a.emit(e::cmp_imm(false, rd, 0));
            a.emit(e::cset(rd, Cond::Ne));
        }
        Conversion::FloatToDouble => {
            mem(a, MemOp::LoadFp, Width::W, VSCRATCH, base, disp);
            a.emit(e::fcvt_d_s(VSCRATCH, VSCRATCH));
            a.emit(e::fmov_x_d(rd, VSCRATCH));
        }
    }
}

/// Carries out one move of argument `arg` from `[base + disp + m.offset]`.
fn emit_move(a: &mut Asm, plan: &CallPlan, arg: usize, base: u8, disp: u32, m: &ArgMove) {
    let disp = disp + m.offset;
    match m.to {
        Location::Int(n) => load_gpr(a, n, base, disp, m),
        Location::Vector(n) => match (m.conv, m.size) {
            (Conversion::Bytes, 4 | 8) => mem(a, MemOp::LoadFp, Width::of(m.size), n, base, disp),
            (Conversion::FloatToDouble, _) => {
                mem(a, MemOp::LoadFp, Width::W, n, base, disp);
                a.emit(e::fcvt_d_s(n, n));
            }
            _ => {
                load_gpr(a, VAL, base, disp, m);
                a.emit(e::fmov_d_x(n, VAL));
            }
        },
        Location::Stack(off) => {
            let bytes = plan.stack_write_bytes(arg, m) as u8;
            if m.conv == Conversion::FloatToDouble && bytes == 8 {
                mem(a, MemOp::LoadFp, Width::W, VSCRATCH, base, disp);
                a.emit(e::fcvt_d_s(VSCRATCH, VSCRATCH));
                mem(a, MemOp::StoreFp, Width::X, VSCRATCH, SP, off);
            } else {
                load_gpr(a, VAL, base, disp, m);
                store_bytes(a, VAL, SP, off, bytes);
            }
        }
    }
}

/// Where argument `i`'s bytes are: `(base register, displacement)`, loading the argument's
/// pointer into [`ARG`] where needed. `args` holds the entry's `x0`.
fn arg_source(a: &mut Asm, mode: Mode, args: u8, i: usize, check: ArgCheck) -> (u8, u32) {
    match mode {
        Mode::Raw => {
            mem(a, MemOp::Load, Width::X, ARG, args, 8 * i as u32);
            (ARG, 0)
        }
        Mode::Values => {
            let payload = VALUE_STRIDE as u32 * i as u32 + VALUE_PAYLOAD as u32;
            match check {
                ArgCheck::Scalar(_) => (args, payload),
                ArgCheck::Group(_) => {
                    let ptr = payload + MemorySegment::PTR_OFFSET as u32;
                    mem(a, MemOp::Load, Width::X, ARG, args, ptr);
                    (ARG, 0)
                }
            }
        }
    }
}

/// Whether any argument move or by-reference pointer of `plan` writes `x{n}`.
fn writes_int(plan: &CallPlan, n: u8) -> bool {
    plan.args.iter().any(|ap| {
        ap.by_reference == Some(Location::Int(n))
            || ap.moves.iter().any(|m| m.to == Location::Int(n))
    })
}

/// Emits every argument move and by-reference pointer. The argument with a move into `x0`
/// (which holds `args` until then) comes last, and its `x0` move last within it, so its
/// source is found once. `copies` holds the entry's `x4`.
fn emit_args(a: &mut Asm, plan: &CallPlan, checks: &[ArgCheck], mode: Mode, copies: u8) {
    const X0: Location = Location::Int(0);
    let into_x0 = |i: usize| {
        let ap = &plan.args[i];
        ap.by_reference == Some(X0) || ap.moves.iter().any(|m| m.to == X0)
    };
    let last = (0..plan.args.len()).find(|&i| into_x0(i));
    let order = (0..plan.args.len())
        .filter(|&i| Some(i) != last)
        .chain(last);
    for i in order {
        let ap = &plan.args[i];
        if let Some(to) = ap.by_reference {
            // copies[j]: j counts the by-reference arguments before this one
            let j = plan.args[..i]
                .iter()
                .filter(|x| x.by_reference.is_some())
                .count() as u32;
            match to {
                Location::Int(n) => mem(a, MemOp::Load, Width::X, n, copies, 8 * j),
                Location::Stack(off) => {
                    mem(a, MemOp::Load, Width::X, VAL, copies, 8 * j);
                    mem(a, MemOp::Store, Width::X, VAL, SP, off);
                }
                // Invariant: plans never put a pointer in a v register. The classifier passes
                // a copy's address like any pointer (C.7 GPR, else a C.12–C.15 stack
                // slot), so this arm is never taken; it emits nothing.
                Location::Vector(_) => {
                    debug_assert!(false, "a by-reference pointer planned in a v register");
                }
            }
            continue;
        }
        if ap.moves.is_empty() {
            continue;
        }
        let (base, disp) = arg_source(a, mode, 0, i, checks[i]);
        let moves = ap.moves.iter().filter(|m| m.to != X0);
        for m in moves.chain(ap.moves.iter().filter(|m| m.to == X0)) {
            emit_move(a, plan, i, base, disp, m);
        }
    }
}

/// Checks per rejection island in a values entry whose branches to the entry's end would not
/// reach (see [`emit_checks`]): at most 12 words each, so a block spans well under the ±1 MiB
/// of `b.cond`.
const ISLAND_CHECKS: usize = 4096;

/// The values entry's checks (right after `bti c`, before anything is written): each
/// argument's tag byte, and each struct segment's length. Branches to `fail` on a mismatch.
///
/// With `islands` (a signature so large that `fail`, after the argument moves, is beyond the
/// ±1 MiB a `b.cond` reaches: tens of thousands of arguments), each block of
/// [`ISLAND_CHECKS`] checks is followed by its own rejection path, `b over; movz x9, #1; ret;
/// over:`, which its checks branch to instead (the checks run before the frame is made, so
/// the rejection is the same anywhere among them). Returns the number of islands (one `b`
/// each on the normal path).
fn emit_checks(a: &mut Asm, checks: &[ArgCheck], fail: e::Label, islands: bool) -> usize {
    let mut target = if islands { a.label() } else { fail };
    let mut count = 0;
    for (i, check) in checks.iter().enumerate() {
        let slot = VALUE_STRIDE as u32 * i as u32;
        let tag = match check {
            ArgCheck::Scalar(k) => scalar_tag(*k),
            ArgCheck::Group(_) => segment_tag(),
        };
        mem(a, MemOp::Load, Width::B, FLAG, 0, slot);
        a.emit(e::cmp_imm(false, FLAG, u32::from(tag)));
        a.b_cond(Cond::Ne, target);
        if let ArgCheck::Group(size) = *check {
            let len = slot + VALUE_PAYLOAD as u32 + MemorySegment::LEN_OFFSET as u32;
            mem(a, MemOp::Load, Width::X, FLAG, 0, len);
            if size < 4096 {
                a.emit(e::cmp_imm(true, FLAG, size));
            } else {
                load_imm(a, ADDR, u64::from(size));
                a.emit(e::cmp_reg(true, FLAG, ADDR));
            }
            a.b_cond(Cond::Lo, target);
        }
        if islands && ((i + 1) % ISLAND_CHECKS == 0 || i + 1 == checks.len()) {
            let over = a.label();
            a.b(over);
            a.bind(target);
            a.emit(e::movz(FLAG, 1, 0));
            a.emit(e::ret());
            a.bind(over);
            target = a.label();
            count += 1;
        }
    }
    count
}

/// Whether the raw entry can jump straight to the target (see the module documentation).
fn is_tail(plan: &CallPlan, capture: bool) -> bool {
    !capture
        && plan.stack_bytes == 0
        && matches!(
            plan.ret,
            ReturnPlan::Void | ReturnPlan::Scalar(Register::Int(_)) | ReturnPlan::InMemory
        )
}

/// Stores one return move from its register into `[base + offset]`.
fn emit_return_move(a: &mut Asm, base: u8, m: &ReturnMove) {
    match (m.from, m.size) {
        (Register::Int(n), 1 | 2 | 4 | 8) => store_bytes(a, n, base, m.offset, m.size),
        (Register::Vector(n), 4 | 8) => {
            mem(a, MemOp::StoreFp, Width::of(m.size), n, base, m.offset)
        }
        (from, size) => {
            match from {
                Register::Int(n) => a.emit(e::mov(VAL, n)),
                Register::Vector(n) => a.emit(e::fmov_x_d(VAL, n)),
            }
            store_bytes(a, VAL, base, m.offset, size);
        }
    }
}

/// Compiles one entry; returns the word index where its rejection path starts (values entry)
/// or its end (raw entry), so the normal path is the words before it, and the words the normal
/// path executes beyond those (the stack probe's repeats, [`sub_sp_probed`]).
fn compile_entry(
    a: &mut Asm,
    plan: &CallPlan,
    checks: &[ArgCheck],
    capture: bool,
    mode: Mode,
    islands: bool,
) -> (usize, usize) {
    a.emit(e::bti_c());
    let fail = a.label();
    let island_jumps = match mode {
        Mode::Values => emit_checks(a, checks, fail, islands),
        Mode::Raw => 0,
    };
    let by_ref = plan.args.iter().any(|ap| ap.by_reference.is_some());
    let copies = if by_ref && writes_int(plan, 4) {
        COPIES
    } else {
        4
    };
    let hidden = plan.hidden_return_pointer == Some(Location::Int(X8));
    if mode == Mode::Raw && is_tail(plan, capture) {
        a.emit(e::mov(TARGET, 3));
        if hidden {
            a.emit(e::mov(X8, 1));
        }
        if copies == COPIES {
            a.emit(e::mov(COPIES, 4));
        }
        emit_args(a, plan, checks, mode, copies);
        a.emit(e::br(TARGET));
        return (a.len(), 0);
    }
    let needs_ret = matches!(plan.ret, ReturnPlan::Registers(_));
    let area = plan.stack_bytes.next_multiple_of(16);
    let own = (16 * capture as u32 + 8 * needs_ret as u32).next_multiple_of(16);
    let frame = area + own;
    let ret_slot = -(16 * capture as i32) - 8;
    a.emit(e::stp(PairMode::Pre, FP, LR, SP, -16));
    a.emit(e::add_imm(FP, SP, 0, false));
    let repeats = island_jumps + sub_sp_probed(a, frame);
    if capture {
        a.emit(e::stp(PairMode::Offset, 2, 5, FP, -16));
    }
    if needs_ret {
        a.emit(e::mem_unscaled(MemOp::Store, Width::X, 1, FP, ret_slot));
    }
    if hidden {
        a.emit(e::mov(X8, 1));
    }
    let target = if writes_int(plan, 3) {
        a.emit(e::mov(TARGET, 3));
        TARGET
    } else {
        3
    };
    if copies == COPIES {
        a.emit(e::mov(COPIES, 4));
    }
    emit_args(a, plan, checks, mode, copies);
    if capture {
        // errno <- capture, right before the call
        a.emit(e::ldp(PairMode::Offset, PIECE, ERRNO, FP, -16));
        a.emit(e::mem_imm(MemOp::Load, Width::W, VAL, PIECE, 0));
        a.emit(e::mem_imm(MemOp::Store, Width::W, VAL, ERRNO, 0));
    }
    a.emit(e::blr(target));
    if capture {
        // capture <- errno, right after the call (x0, x1, v0..v3 untouched)
        a.emit(e::ldp(PairMode::Offset, PIECE, ERRNO, FP, -16));
        a.emit(e::mem_imm(MemOp::Load, Width::W, VAL, ERRNO, 0));
        a.emit(e::mem_imm(MemOp::Store, Width::W, VAL, PIECE, 0));
    }
    match &plan.ret {
        ReturnPlan::Registers(moves) => {
            a.emit(e::mem_unscaled(MemOp::Load, Width::X, PIECE, FP, ret_slot));
            moves.iter().for_each(|m| emit_return_move(a, PIECE, m));
        }
        ReturnPlan::Scalar(Register::Vector(n)) => a.emit(e::fmov_x_d(0, *n)),
        _ => {}
    }
    if mode == Mode::Values {
        a.emit(e::movz(FLAG, 0, 0));
    }
    if frame > 0 {
        a.emit(e::add_imm(SP, FP, 0, false));
    }
    a.emit(e::ldp(PairMode::Post, FP, LR, SP, 16));
    a.emit(e::ret());
    let end = a.len();
    if mode == Mode::Values && !checks.is_empty() && !islands {
        a.bind(fail);
        a.emit(e::movz(FLAG, 1, 0));
        a.emit(e::ret());
    }
    (end, repeats)
}

/// The machine code of a stub: both entries (byte offsets into `bytes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StubCode {
    /// The code bytes (little-endian instruction words).
    pub bytes: Vec<u8>,
    /// Byte offset of the raw entry (0).
    pub raw: usize,
    /// Byte offset of the values entry (16-byte aligned).
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

/// `udf #0`: the padding between the entries (never executed).
const PADDING: u32 = 0;

/// Compiles the stub of `plan` (`checks[i]` describes argument `i` for the values entry's
/// checks; `checks.len() == plan.args().len()`).
pub(crate) fn compile(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> StubCode {
    debug_assert_eq!(checks.len(), plan.args.len());
    compile_with(plan, checks, capture, false)
        .or_else(|| compile_with(plan, checks, capture, true))
        .expect("every branch reaches its label with rejection islands")
}

/// [`compile`] with or without rejection islands ([`emit_checks`]); `None` when a check's
/// branch does not reach its rejection path.
fn compile_with(
    plan: &CallPlan,
    checks: &[ArgCheck],
    capture: bool,
    islands: bool,
) -> Option<StubCode> {
    let mut a = Asm::default();
    let (raw_end, raw_repeats) = compile_entry(&mut a, plan, checks, capture, Mode::Raw, false);
    while a.len() % 4 != 0 {
        a.emit(PADDING);
    }
    let values = a.len();
    let (values_end, values_repeats) =
        compile_entry(&mut a, plan, checks, capture, Mode::Values, islands);
    if !a.branches_reach() {
        return None;
    }
    let words = a.finish();
    Some(StubCode {
        bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
        raw: 0,
        values: 4 * values,
        paths: PathLengths {
            raw: raw_end + raw_repeats,
            values: values_end - values + values_repeats,
        },
    })
}

/// The per-call instruction counts of the stub of `plan` (see [`PathLengths`]).
#[cfg(test)]
pub(crate) fn path_lengths(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> PathLengths {
    compile(plan, checks, capture).paths
}

/// The values entry of a placed stub (see the module documentation): called only through
/// `ValuesEntry::call` (AArch64 only), which reads the rejection flag in `x9`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ValuesEntry(NonNull<u8>);

// SAFETY: the entry is the address of immutable code; calling it is as thread-safe as the
// arguments passed.
unsafe impl Send for ValuesEntry {}
// SAFETY: as above.
unsafe impl Sync for ValuesEntry {}

impl ValuesEntry {
    /// Calls the values entry: `Some(x0)` when the arguments passed the checks and the target
    /// was called, `None` when they were rejected (nothing called or written).
    ///
    /// # Safety
    /// As the raw entry's call: `values` points to the stub's `n` arguments, `ret`, `capture`,
    /// `copies` and `errno_location` are what the module documentation says the plan needs,
    /// and calling `target` with the converted arguments is sound.
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    pub(crate) unsafe fn call(
        self,
        values: *const crate::value::Value<'_>,
        ret: *mut u8,
        capture: *mut i32,
        target: *const std::ffi::c_void,
        copies: *const *const u8,
        errno_location: *mut i32,
    ) -> Option<u64> {
        let (x0, flag): (u64, u64);
        // SAFETY: the entry is an AAPCS64 function of these six arguments (see the caller's
        // contract); it returns with x9 = 0 or 1 and clobbers only caller-saved registers.
        unsafe {
            std::arch::asm!(
                "blr {entry}",
                entry = in(reg) self.0.as_ptr(),
                inlateout("x0") values => x0,
                in("x1") ret,
                in("x2") capture,
                in("x3") target,
                in("x4") copies,
                in("x5") errno_location,
                lateout("x9") flag,
                clobber_abi("C"),
            );
        }
        (flag == 0).then_some(x0)
    }
}

/// The AArch64 stub compiler of [`CompiledStub`]: [`compile`] and the entries it lays out.
#[derive(Debug)]
pub(crate) struct Compiler;

/// The entry points of a placed AArch64 stub (a [`Stub`] dereferences to them).
#[derive(Debug)]
pub(crate) struct Entries {
    /// The raw entry.
    pub raw: RawFn,
    /// The values entry.
    pub values: ValuesEntry,
}

// SAFETY: `compile` emits AArch64 code for the plan (on other hosts it is never called); the
// raw entry is at offset 0 and the values entry at `values` (see the module documentation).
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
