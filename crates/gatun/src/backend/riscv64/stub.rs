//! Compiled downcall stubs for RISC-V 64 Linux (LP64D, RISC-V psABI "Integer Calling
//! Convention" and "Hardware Floating-point Calling Convention"): per-signature machine code
//! generated from a [`CallPlan`] of the RISC-V classifier at link time, encoded by
//! [`super::encode`] (uncompressed RV64GC instructions only; `gp` and `tp` are never named).
//!
//! A stub has two entries compiled from the same plan, both ordinary LP64D functions taking
//! the same six parameters:
//!
//! | register | raw entry | values entry |
//! |---|---|---|
//! | `a0` | `args: *const *const u8`, argument `i`'s bytes at `args[i]` | `*const Value`: the arguments' `&[Value]` |
//! | `a1` | `ret: *mut u8`: where a struct returned in registers is stored, and the hidden return pointer (`a0` at the call) of a plan with [`CallPlan::hidden_return_pointer`] `Some(Int(0))` | the same |
//! | `a2` | `capture: *mut i32`: the capture segment's errno slot (read only by capture stubs) | the same |
//! | `a3` | the target function | the same |
//! | `a4` | `copies: *const *const u8`: the caller-made copies of the by-reference arguments ([`ArgPlan::by_reference`](crate::abi::ArgPlan::by_reference)), one pointer each in argument order | the same |
//! | `a5` | the thread's `errno` address ([`crate::os::thread_errno`]; capture stubs only) | the same |
//!
//! Both return the scalar result's bits in `a0` (a `float`/`double` result: `fmv.x.d a0, fa0`,
//! the 64 bits of `fa0`, so a `float` comes back NaN-boxed: its bits in the low 32, ones
//! above; an integer result is whatever the callee left in `a0`, which the psABI has sign- or
//! zero-extended to 64 bits by its type). A struct returned in registers (psABI: at most two
//! XLEN or FLEN parts, in `a0`/`a1`, `fa0`/`fa1` or one of each) is stored at `ret` by the
//! plan's [`ReturnMove`]s, exactly `size` bytes each (a 4-byte move from an FPR is `fsw`). A
//! struct returned in memory is written by the callee through the hidden pointer `a0` = `ret`
//! (the classifier has already shifted the integer arguments to `a1..`).
//!
//! The values entry first checks every argument: the tag byte of `Value` `i` (offset `24 i`,
//! [`VALUE_STRIDE`]) against the scalar kind's variant ([`ArgCheck::Scalar`]), or against
//! `Value::Segment` and the segment's length (payload at [`VALUE_PAYLOAD`]) against the
//! struct's size ([`ArgCheck::Group`]) — by-reference arguments included (the executor checks
//! them before making the copies; the stub checks them again, which keeps the entry safe on
//! its own). On a mismatch it returns at once with **`t0` = 1**: nothing has been read beyond
//! the `Value`s, nothing written or called. On the normal path it returns with `t0` = 0. (`t0`
//! is a caller-saved temporary, so only inline assembly can read the flag:
//! `ValuesEntry::call`, RISC-V only.) A scalar's bytes are read from the payload (its low
//! bytes), a struct's from the segment's pointer.
//!
//! # The code
//! Unless the raw entry can jump straight to the target (below): a frame record (`addi sp, sp,
//! -16; sd ra, 8(sp); sd s0, 0(sp); addi s0, sp, 16`: `s0` is the frame pointer, the `sp` at
//! entry), `sp` lowered by the outgoing stack area rounded up to 16 bytes
//! ([`CallPlan::stack_bytes`], at most [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES))
//! plus the stub's own slots below the record (`capture` and the errno address for a capture
//! stub, `ret` for a struct returned in registers); the argument moves; `jalr ra` to the
//! target; the return moves; the frame popped; `ret`. `sp` is 16-byte aligned at the call
//! (psABI "Integer Calling Convention": the stack pointer is 16-byte aligned on procedure
//! entry). Nothing is ever stored below `sp` (Linux has no red zone: a signal handler may use
//! it). A frame of a page (4096 bytes) or more is made by a probing loop ([`sub_sp_probed`]:
//! `sub sp, sp, t6; sd zero, 0(sp); bne sp, t0, loop` with `t6` = 4096) that touches each
//! page in order going down, so a thread whose stack is too small faults on its guard page
//! (Rust's "has overflowed its stack" abort) and never writes past it. Stub size is linear in
//! the number of arguments: a composite over 16 bytes goes by reference, so no argument has
//! more than two moves.
//!
//! The **tail** form (raw entry only: no capture, no stack arguments, a void, integer or
//! in-memory result, so nothing is left to do after the call) has no frame: the argument
//! moves, then `jalr zero, 0(a3)` (or `t1` holding the target when `a3` is an argument
//! register). Neither register is a link register, so the jump is no call or return for the
//! return-address predictor. The target returns straight to the stub's caller.
//!
//! Argument moves (as planned by the classifier): every [`ArgMove`] loads **exactly** `size`
//! bytes — 3, 5, 6 and 7 bytes are assembled from 4-, 2- and 1-byte zero-extending loads with
//! `slli` + `or`, so no load reads past the argument's bytes. [`Conversion::SignExtend`] uses
//! `lb/lh/lw`, [`Conversion::Bytes`] `lbu/lhu/lwu/ld`, [`Conversion::Bool`] `lbu` + `snez` (0
//! or 1), [`Conversion::FloatToDouble`] `flw` + `fcvt.d.s`; a 4-byte move into an FPR is `flw`
//! (which NaN-boxes the single, as the psABI requires of a `float` in a 64-bit FPR), an 8-byte
//! one `fld`. Stack moves write whole 8-byte slots ([`CallPlan::stack_write_bytes`] is
//! honoured). A by-reference argument's location receives `copies[j]`. The moves into `a0`
//! (which holds `args`) are emitted last; the hidden return pointer is written to `a0` after
//! them.
//!
//! Capture (as the trampoline): the capture slot's value is stored to `errno` right before the
//! `jalr` (after every argument is in place, so nothing can change `errno` in between) and
//! `errno` is stored back to the capture slot right after it, before anything else.
//!
//! [`path_lengths`] gives the number of instructions each entry executes on its normal path
//! (the code is straight-line apart from the values entry's checks, whose branches are not
//! taken on that path, and the probe loop, counted once per page).
//!
//! # Invariants
//! - The stub reads only `args[..n]` (raw) or the `n` `Value`s (values), the argument bytes
//!   the plan names (exactly), `copies[..by-reference arguments]`, `*capture` and `*errno`
//!   (capture stubs), and its own frame; it writes only the argument registers, its frame and
//!   outgoing stack area, the return layout's bytes at `ret` (exactly each move's size),
//!   `*errno` and `*capture` (capture stubs). `gp` and `tp` are never named.
//! - Scratch registers are caller-saved temporaries: `t0`..`t6` and `ft0`. The only
//!   callee-saved register touched is `s0`, saved and restored (with `ra`) by the frame
//!   record; the values entry's rejection path runs before anything else.
//! - Offsets come from a plan the classifier accepted: the stack area is at most
//!   [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES) bytes, so the probe's end is one
//!   `lui` and the rest of the frame one or two `addi`; a displacement that does not fit a
//!   load/store's signed 12-bit field (from 2048 bytes on: the outgoing stack area, the
//!   arguments' `Value`s, the copies' array) is formed in `t6` with `lui` + `add` and the
//!   access takes the low 12 bits. Conditional branches reach ±4 KiB only: the values entry's
//!   checks branch to rejection islands every [`ISLAND_CHECKS`] arguments when the entry's
//!   end is out of reach.

// Off RISC-V 64 Linux this module is compiled for its code-generation tests only: the placing
// and calling half (`Stub`, the cache, the entries) is used by the RISC-V executor alone.
#![cfg_attr(not(gatun_backend = "riscv64"), allow(dead_code))]

use std::ptr::NonNull;
use std::sync::Arc;

use super::encode::{self as e, Asm, Cond, FWidth, Load, Store, F, X};
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
/// The rejection flag of the values entry and the checks' scratch; the probe loop's end in the
/// prologue; `ret` during the argument moves of a hidden-pointer plan that writes `a1`.
const FLAG: X = X::T0;
/// The target when `a3` is an argument register.
const TARGET: X = X::T1;
/// `copies` when `a4` is an argument register of the plan.
const COPIES: X = X::T2;
/// The pointer to the current argument's bytes.
const ARG: X = X::T3;
/// Pieces of odd-size loads; the capture slot's address around the call; `ret` after it.
const PIECE: X = X::T4;
/// A converted value on its way to a stack slot or FPR; errno's value around the call.
const VAL: X = X::T5;
/// Displacements too large for a 12-bit field; the page size in the probe loop; the errno
/// address around the call.
const ADDR: X = X::T6;
/// The floating-point scratch register `ft0`.
const FSCRATCH: F = F::FT0;
/// The stack pointer.
const SP: X = X::SP;
/// The frame pointer.
const FP: X = X::S0;

/// Frame-pointer offsets of the stub's own slots (below the frame record at `s0 - 16`).
const CAPTURE_SLOT: i32 = -24;
const ERRNO_SLOT: i32 = -32;

/// How an entry finds argument bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Values,
    Raw,
}

/// One load or store of a register (the access of [`mem`]).
#[derive(Clone, Copy, Debug)]
enum Access {
    Load(Load, X),
    Store(Store, X),
    FLoad(FWidth, F),
    FStore(FWidth, F),
}

impl Access {
    fn word(self, base: X, offset: i32) -> u32 {
        match self {
            Access::Load(op, rd) => e::load(op, rd, base, offset),
            Access::Store(op, rs) => e::store(op, rs, base, offset),
            Access::FLoad(w, rd) => e::fload(w, rd, base, offset),
            Access::FStore(w, rs) => e::fstore(w, rs, base, offset),
        }
    }
}

/// `access` at `[base + disp]`: the 12-bit offset form when `disp` fits it, else `lui t6,
/// hi; add t6, t6, base` and the access at `lo(t6)` (`disp` below 2^31 − 2048).
fn mem(a: &mut Asm, access: Access, base: X, disp: u32) {
    if disp < 2048 {
        a.emit(access.word(base, disp as i32));
    } else {
        let (hi, lo) = e::split_hi_lo(disp.into());
        a.emit(e::lui(ADDR, hi));
        a.emit(e::add(ADDR, ADDR, base));
        a.emit(access.word(ADDR, lo));
    }
}

/// The distance in bytes between two stack probes: one 4 KiB page (the smallest guard page).
const PROBE_INTERVAL: u32 = 4096;

/// `sp -= frame` touching every page of the new frame in order going down (gcc's
/// `-fstack-clash-protection` shape): for a frame of a page or more, [`ADDR`] = 4096 and
/// [`FLAG`] = `sp - pages × 4096`, then `sub sp, sp, t6; sd zero, 0(sp)` per page (a loop of
/// three words ending with `bne sp, t0`), then `addi sp` of the rest (less than a page: one
/// or two `addi`); a smaller frame is one or two `addi sp`, whose bytes lie within a page of
/// the frame record just stored. Every access to the frame then lies within 4096 bytes below
/// an address already touched, so a stack too small for the frame faults on its guard page
/// and nothing is ever written past it. Returns the words executed beyond the ones emitted
/// (the loop's repeats).
fn sub_sp_probed(a: &mut Asm, frame: u32) -> usize {
    let (pages, rest) = (frame / PROBE_INTERVAL, frame % PROBE_INTERVAL);
    let mut repeats = 0;
    if pages > 0 {
        // pages <= MAX_STACK_BYTES / 4096 + 1: `lui` of the page count is the bytes
        a.emit(e::lui(ADDR, 1));
        a.emit(e::lui(FLAG, pages));
        a.emit(e::sub(FLAG, SP, FLAG));
        a.emit(e::sub(SP, SP, ADDR));
        a.emit(e::store(Store::D, X::ZERO, SP, 0));
        a.emit(e::branch(Cond::Ne, SP, FLAG, -8));
        repeats = 3 * (pages as usize - 1);
    }
    if rest > 0 {
        a.emit_all(e::add_large(SP, SP, -i64::from(rest), ADDR));
    }
    repeats
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

/// Loads exactly `size` bytes at `[base + disp]` into `rd`, zero-extended (3, 5, 6, 7 bytes
/// in pieces through [`PIECE`]; `rd` is not `base`).
fn load_bytes(a: &mut Asm, rd: X, base: X, disp: u32, size: u8) {
    if matches!(size, 1 | 2 | 4 | 8) {
        return mem(a, Access::Load(Load::of(size, false), rd), base, disp);
    }
    debug_assert!(rd != base);
    for (at, p) in pieces(size) {
        let load = Load::of(p, false);
        if at == 0 {
            mem(a, Access::Load(load, rd), base, disp);
        } else {
            mem(a, Access::Load(load, PIECE), base, disp + u32::from(at));
            a.emit(e::slli(PIECE, PIECE, 8 * at));
            a.emit(e::or(rd, rd, PIECE));
        }
    }
}

/// Stores exactly the low `size` bytes of `rs` at `[base + disp]` (3, 5, 6, 7 bytes in pieces;
/// `rs` is then shifted, so clobbered).
fn store_bytes(a: &mut Asm, rs: X, base: X, disp: u32, size: u8) {
    if matches!(size, 1 | 2 | 4 | 8) {
        return mem(a, Access::Store(Store::of(size), rs), base, disp);
    }
    let mut last = 0u8;
    for (at, p) in pieces(size) {
        if at > last {
            a.emit(e::srli(rs, rs, 8 * (at - last)));
            last = at;
        }
        mem(
            a,
            Access::Store(Store::of(p), rs),
            base,
            disp + u32::from(at),
        );
    }
}

/// Converts and loads one move's source at `[base + disp]` into the 64-bit register `rd`.
fn load_gpr(a: &mut Asm, rd: X, base: X, disp: u32, m: &ArgMove) {
    match m.conv {
        Conversion::Bytes => load_bytes(a, rd, base, disp, m.size),
        Conversion::SignExtend => mem(a, Access::Load(Load::of(m.size, true), rd), base, disp),
        Conversion::Bool => {
            mem(a, Access::Load(Load::Bu, rd), base, disp);
            a.emit(e::sltu(rd, X::ZERO, rd));
        }
        Conversion::FloatToDouble => {
            mem(a, Access::FLoad(FWidth::S, FSCRATCH), base, disp);
            a.emit(e::fcvt_d_s(FSCRATCH, FSCRATCH));
            a.emit(e::fmv_x_d(rd, FSCRATCH));
        }
    }
}

/// Carries out one move of argument `arg` from `[base + disp + m.offset]`.
fn emit_move(a: &mut Asm, plan: &CallPlan, arg: usize, base: X, disp: u32, m: &ArgMove) {
    let disp = disp + m.offset;
    match m.to {
        Location::Int(n) => load_gpr(a, X::a(n), base, disp, m),
        Location::Vector(n) => {
            let fa = F::fa(n);
            match (m.conv, m.size) {
                (Conversion::Bytes, 4 | 8) => {
                    mem(a, Access::FLoad(FWidth::of(m.size), fa), base, disp)
                }
                (Conversion::FloatToDouble, _) => {
                    mem(a, Access::FLoad(FWidth::S, fa), base, disp);
                    a.emit(e::fcvt_d_s(fa, fa));
                }
                _ => {
                    load_gpr(a, VAL, base, disp, m);
                    a.emit(e::fmv_d_x(fa, VAL));
                }
            }
        }
        Location::Stack(off) => {
            let bytes = plan.stack_write_bytes(arg, m) as u8;
            if m.conv == Conversion::FloatToDouble && bytes == 8 {
                mem(a, Access::FLoad(FWidth::S, FSCRATCH), base, disp);
                a.emit(e::fcvt_d_s(FSCRATCH, FSCRATCH));
                mem(a, Access::FStore(FWidth::D, FSCRATCH), SP, off);
            } else {
                load_gpr(a, VAL, base, disp, m);
                store_bytes(a, VAL, SP, off, bytes);
            }
        }
    }
}

/// Where argument `i`'s bytes are: `(base register, displacement)`, loading the argument's
/// pointer into [`ARG`] where needed. The entry's `a0` holds `args`.
fn arg_source(a: &mut Asm, mode: Mode, i: usize, check: ArgCheck) -> (X, u32) {
    match mode {
        Mode::Raw => {
            mem(a, Access::Load(Load::D, ARG), X::A0, 8 * i as u32);
            (ARG, 0)
        }
        Mode::Values => {
            let payload = VALUE_STRIDE as u32 * i as u32 + VALUE_PAYLOAD as u32;
            match check {
                ArgCheck::Scalar(_) => (X::A0, payload),
                ArgCheck::Group(_) => {
                    let ptr = payload + MemorySegment::PTR_OFFSET as u32;
                    mem(a, Access::Load(Load::D, ARG), X::A0, ptr);
                    (ARG, 0)
                }
            }
        }
    }
}

/// Whether any argument move or by-reference pointer of `plan` writes `a{n}`.
fn writes_int(plan: &CallPlan, n: u8) -> bool {
    plan.args.iter().any(|ap| {
        ap.by_reference == Some(Location::Int(n))
            || ap.moves.iter().any(|m| m.to == Location::Int(n))
    })
}

/// Emits every argument move and by-reference pointer. The argument with a move into `a0`
/// (which holds `args` until then) comes last, and its `a0` move last within it, so its
/// source is found once. `copies` holds the entry's `a4`.
fn emit_args(a: &mut Asm, plan: &CallPlan, checks: &[ArgCheck], mode: Mode, copies: X) {
    const A0: Location = Location::Int(0);
    let into_a0 = |i: usize| {
        let ap = &plan.args[i];
        ap.by_reference == Some(A0) || ap.moves.iter().any(|m| m.to == A0)
    };
    let last = (0..plan.args.len()).find(|&i| into_a0(i));
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
                Location::Int(n) => mem(a, Access::Load(Load::D, X::a(n)), copies, 8 * j),
                Location::Stack(off) => {
                    mem(a, Access::Load(Load::D, VAL), copies, 8 * j);
                    mem(a, Access::Store(Store::D, VAL), SP, off);
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
        let moves = ap.moves.iter().filter(|m| m.to != A0);
        for m in moves.chain(ap.moves.iter().filter(|m| m.to == A0)) {
            emit_move(a, plan, i, base, disp, m);
        }
    }
}

/// Checks per rejection island in a values entry whose branches to the entry's end would not
/// reach (see [`emit_checks`]): at most 12 words each (a tag load at a large displacement,
/// `xori`, `bne`; a length load, `li` of the size, `bltu`), so a block spans at most 3 KiB,
/// within the ±4 KiB of a conditional branch.
const ISLAND_CHECKS: usize = 64;

/// The values entry's checks (first, before anything is written): each argument's tag byte,
/// and each struct segment's length. Branches to `fail` on a mismatch.
///
/// With `islands` (a signature whose `fail`, after the argument moves, is beyond the ±4 KiB a
/// conditional branch reaches: from about a hundred arguments), each block of
/// [`ISLAND_CHECKS`] checks is followed by its own rejection path, `j over; li t0, 1; ret;
/// over:`, which its checks branch to instead (the checks run before the frame is made, so
/// the rejection is the same anywhere among them). Returns the number of islands (one `j`
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
        mem(a, Access::Load(Load::Bu, FLAG), X::A0, slot);
        a.emit(e::xori(FLAG, FLAG, i32::from(tag)));
        a.branch(Cond::Ne, FLAG, X::ZERO, target);
        if let ArgCheck::Group(size) = *check {
            let len = slot + VALUE_PAYLOAD as u32 + MemorySegment::LEN_OFFSET as u32;
            mem(a, Access::Load(Load::D, FLAG), X::A0, len);
            if size < 2048 {
                a.emit(e::sltiu(FLAG, FLAG, size as i32));
                a.branch(Cond::Ne, FLAG, X::ZERO, target);
            } else {
                a.emit_all(e::li(ADDR, size.into()));
                a.branch(Cond::Ltu, FLAG, ADDR, target);
            }
        }
        if islands && ((i + 1) % ISLAND_CHECKS == 0 || i + 1 == checks.len()) {
            let over = a.label();
            a.jump(over);
            a.bind(target);
            a.emit(e::addi(FLAG, X::ZERO, 1));
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
fn emit_return_move(a: &mut Asm, base: X, m: &ReturnMove) {
    match (m.from, m.size) {
        (Register::Int(n), 1 | 2 | 4 | 8) => store_bytes(a, X::a(n), base, m.offset, m.size),
        (Register::Vector(n), 4 | 8) => mem(
            a,
            Access::FStore(FWidth::of(m.size), F::fa(n)),
            base,
            m.offset,
        ),
        (from, size) => {
            match from {
                Register::Int(n) => a.emit(e::mv(VAL, X::a(n))),
                Register::Vector(n) => a.emit(e::fmv_x_d(VAL, F::fa(n))),
            }
            store_bytes(a, VAL, base, m.offset, size);
        }
    }
}

/// Compiles one entry; returns the word index where its rejection path starts (values entry)
/// or its end (raw entry), so the normal path is the words before it, and the words the normal
/// path executes beyond those (the stack probe's repeats, [`sub_sp_probed`], and the islands'
/// jumps).
fn compile_entry(
    a: &mut Asm,
    plan: &CallPlan,
    checks: &[ArgCheck],
    capture: bool,
    mode: Mode,
    islands: bool,
) -> (usize, usize) {
    let fail = a.label();
    let island_jumps = match mode {
        Mode::Values => emit_checks(a, checks, fail, islands),
        Mode::Raw => 0,
    };
    let by_ref = plan.args.iter().any(|ap| ap.by_reference.is_some());
    let copies = if by_ref && writes_int(plan, 4) {
        COPIES
    } else {
        X::A4
    };
    let hidden = plan.hidden_return_pointer == Some(Location::Int(0));
    // `ret` (a1) survives the moves in FLAG when an argument goes to a1.
    let hidden_from = if hidden && writes_int(plan, 1) {
        FLAG
    } else {
        X::A1
    };
    let target = if writes_int(plan, 3) { TARGET } else { X::A3 };
    let setup = |a: &mut Asm| {
        if hidden_from == FLAG {
            a.emit(e::mv(FLAG, X::A1));
        }
        if target == TARGET {
            a.emit(e::mv(TARGET, X::A3));
        }
        if copies == COPIES {
            a.emit(e::mv(COPIES, X::A4));
        }
    };
    let args = |a: &mut Asm| {
        emit_args(a, plan, checks, mode, copies);
        if hidden {
            a.emit(e::mv(X::A0, hidden_from));
        }
    };
    if mode == Mode::Raw && is_tail(plan, capture) {
        setup(a);
        args(a);
        a.emit(e::jalr(X::ZERO, target, 0));
        return (a.len(), 0);
    }
    let needs_ret = matches!(plan.ret, ReturnPlan::Registers(_));
    let area = plan.stack_bytes.next_multiple_of(16);
    let own = (16 * capture as u32 + 8 * needs_ret as u32).next_multiple_of(16);
    let frame = area + own;
    let ret_slot = -16 - 16 * capture as i32 - 8;
    a.emit(e::addi(SP, SP, -16));
    a.emit(e::store(Store::D, X::RA, SP, 8));
    a.emit(e::store(Store::D, FP, SP, 0));
    a.emit(e::addi(FP, SP, 16));
    let repeats = island_jumps + sub_sp_probed(a, frame);
    if capture {
        a.emit(e::store(Store::D, X::A2, FP, CAPTURE_SLOT));
        a.emit(e::store(Store::D, X::A5, FP, ERRNO_SLOT));
    }
    if needs_ret {
        a.emit(e::store(Store::D, X::A1, FP, ret_slot));
    }
    setup(a);
    args(a);
    if capture {
        // errno <- capture, right before the call
        a.emit(e::load(Load::D, PIECE, FP, CAPTURE_SLOT));
        a.emit(e::load(Load::D, ADDR, FP, ERRNO_SLOT));
        a.emit(e::load(Load::W, VAL, PIECE, 0));
        a.emit(e::store(Store::W, VAL, ADDR, 0));
    }
    a.emit(e::jalr(X::RA, target, 0));
    if capture {
        // capture <- errno, right after the call (a0, a1, fa0, fa1 untouched)
        a.emit(e::load(Load::D, PIECE, FP, CAPTURE_SLOT));
        a.emit(e::load(Load::D, ADDR, FP, ERRNO_SLOT));
        a.emit(e::load(Load::W, VAL, ADDR, 0));
        a.emit(e::store(Store::W, VAL, PIECE, 0));
    }
    match &plan.ret {
        ReturnPlan::Registers(moves) => {
            a.emit(e::load(Load::D, PIECE, FP, ret_slot));
            moves.iter().for_each(|m| emit_return_move(a, PIECE, m));
        }
        ReturnPlan::Scalar(Register::Vector(n)) => a.emit(e::fmv_x_d(X::A0, F::fa(*n))),
        _ => {}
    }
    if mode == Mode::Values {
        a.emit(e::addi(FLAG, X::ZERO, 0));
    }
    if frame > 0 {
        a.emit(e::addi(SP, FP, -16));
    }
    a.emit(e::load(Load::D, X::RA, SP, 8));
    a.emit(e::load(Load::D, FP, SP, 0));
    a.emit(e::addi(SP, SP, 16));
    a.emit(e::ret());
    let end = a.len();
    if mode == Mode::Values && !checks.is_empty() && !islands {
        a.bind(fail);
        a.emit(e::addi(FLAG, X::ZERO, 1));
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

/// The 32-bit `unimp` (`csrrw zero, cycle, zero`: a write to a read-only CSR, an illegal
/// instruction): the padding between the entries (never executed).
const PADDING: u32 = e::UNIMP;

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
/// `ValuesEntry::call` (RISC-V only), which reads the rejection flag in `t0`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ValuesEntry(NonNull<u8>);

// SAFETY: the entry is the address of immutable code; calling it is as thread-safe as the
// arguments passed.
unsafe impl Send for ValuesEntry {}
// SAFETY: as above.
unsafe impl Sync for ValuesEntry {}

impl ValuesEntry {
    /// Calls the values entry: `Some(a0)` when the arguments passed the checks and the target
    /// was called, `None` when they were rejected (nothing called or written).
    ///
    /// # Safety
    /// As the raw entry's call: `values` points to the stub's `n` arguments, `ret`, `capture`,
    /// `copies` and `errno_location` are what the module documentation says the plan needs,
    /// and calling `target` with the converted arguments is sound.
    #[cfg(all(target_arch = "riscv64", not(miri)))]
    pub(crate) unsafe fn call(
        self,
        values: *const crate::value::Value<'_>,
        ret: *mut u8,
        capture: *mut i32,
        target: *const std::ffi::c_void,
        copies: *const *const u8,
        errno_location: *mut i32,
    ) -> Option<u64> {
        let (a0, flag): (u64, u64);
        // SAFETY: the entry is an LP64D function of these six arguments (see the caller's
        // contract); it returns with t0 = 0 or 1 and clobbers only caller-saved registers.
        unsafe {
            std::arch::asm!(
                "jalr ra, 0({entry})",
                entry = in(reg) self.0.as_ptr(),
                inlateout("a0") values => a0,
                in("a1") ret,
                in("a2") capture,
                in("a3") target,
                in("a4") copies,
                in("a5") errno_location,
                lateout("t0") flag,
                clobber_abi("C"),
            );
        }
        (flag == 0).then_some(a0)
    }
}

/// The RISC-V 64 stub compiler of [`CompiledStub`]: [`compile`] and the entries it lays out.
#[derive(Debug)]
pub(crate) struct Compiler;

/// The entry points of a placed RISC-V 64 stub (a [`Stub`] dereferences to them).
#[derive(Debug)]
pub(crate) struct Entries {
    /// The raw entry.
    pub raw: RawFn,
    /// The values entry.
    pub values: ValuesEntry,
}

// SAFETY: `compile` emits RV64GC code for the plan (on other hosts it is never called); the
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
