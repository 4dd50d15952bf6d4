//! Compiled downcall stubs for PPC64LE Linux (ELFv2 ABI 2.2 "Function Calling Sequence"):
//! per-signature machine code generated from a [`CallPlan`] of the ELFv2 classifier at link
//! time, encoded by [`super::encode`].
//!
//! A stub has two entries compiled from the same plan, both ordinary ELFv2 functions with a
//! single entry point that do not use r2, taking the same six parameters:
//!
//! | register | raw entry | values entry |
//! |---|---|---|
//! | `r3` | `args: *const *const u8`, argument `i`'s bytes at `args[i]` | `*const Value`: the arguments' `&[Value]` |
//! | `r4` | `ret: *mut u8`: where a struct returned in registers is stored, and the hidden return pointer (`r3` at the call) of a plan with [`CallPlan::hidden_return_pointer`] `Some(Int(0))` | the same |
//! | `r5` | `capture: *mut i32`: the capture segment's errno slot (read only by capture stubs) | the same |
//! | `r6` | the target function | the same |
//! | `r7` | unused (ELFv2 passes no argument by reference) | the same |
//! | `r8` | the thread's `errno` address ([`crate::os::thread_errno`]; capture stubs only) | the same |
//!
//! Both return the scalar result's bits in `r3`: an integer result is what the callee left in
//! r3 (extended to 64 bits by its type, 2.2.4 "Return Values"); a `float`/`double` result is
//! f1's 64 bits (`mfvsrd r3, f1`), a `float` in double format, which the executor converts. A
//! struct returned in registers (r3/r4 for an aggregate of at most 16 bytes, f1..f8 for a
//! homogeneous floating-point aggregate) is stored at `ret` by the plan's [`ReturnMove`]s,
//! exactly `size` bytes each (a 4-byte move from an FPR is `stfs`). A struct returned in
//! memory is written by the callee through the hidden pointer `r3` = `ret`.
//!
//! The values entry first checks every argument: the tag byte of `Value` `i` (offset `24 i`,
//! [`VALUE_STRIDE`]) against the scalar kind's variant ([`ArgCheck::Scalar`]), or against
//! `Value::Segment` and the segment's length (payload at [`VALUE_PAYLOAD`]) against the
//! struct's size ([`ArgCheck::Group`]). On a mismatch it returns at once with **`r11` = 1**:
//! nothing has been read beyond the `Value`s, nothing written or called. On the normal path it
//! returns with `r11` = 0. (`r11` is volatile, so only inline assembly can read the flag:
//! `ValuesEntry::call`, PPC64LE only.) A scalar's bytes are read from the payload (its low
//! bytes), a struct's from the segment's pointer.
//!
//! # The code
//! After the checks: LR saved at 16(r1) of the caller's frame; the callee-saved registers the
//! stub uses saved in the 288-byte protected zone below the caller's r1 (2.2.2.4) — r30 =
//! `args` always, r29 = `ret` for a struct result, r28 = `capture` and r27 = the errno address
//! for a capture stub, r26 for odd-size moves and copy loops — and the target below them;
//! then the frame: the 32-byte header, the parameter save area ([`CallPlan::stack_bytes`], at
//! least 64 bytes, rounded up to 16) and those saves, made with one `stdu` (which stores the
//! back chain) or, from a page (4096 bytes) on, a page at a time with `stdu` (whose
//! back-chain store touches each page in order going down, so a thread whose stack is too
//! small faults on its guard page and never writes past it) and the back chain set to the
//! caller's r1 after. Then the argument moves, the hidden return pointer into r3, the target
//! into r12 and CTR, r2 saved at 24(r1), `bctrl`, r2 loaded back; the return moves; r1 loaded
//! from the back chain, the saved registers and LR restored; `blr`. There is no tail form:
//! the frame always provides the parameter save area a callee may use (the stub's own caller
//! need not have made one). Stub size is linear in the number of arguments: a run of 16 or
//! more whole doublewords of one argument into consecutive doublewords of the parameter save
//! area (a large struct, `copy_runs`) is one CTR loop of `ldu` and `stdu`.
//!
//! Argument moves (as planned by the classifier): every [`ArgMove`] loads **exactly** `size`
//! bytes — 3, 5, 6 and 7 bytes are assembled from 4-, 2- and 1-byte zero-extending loads with
//! `sldi` + `or`, so no load reads past the argument's bytes. [`Conversion::SignExtend`] uses
//! `lbz` + `extsb`, `lha`, `lwa`; [`Conversion::Bytes`] `lbz/lhz/lwz/ld`;
//! [`Conversion::Bool`] `lbz`, `cntlzd`, `srdi`, `xori` (0 or 1); a 4-byte move into an FPR
//! (a `float`, [`Conversion::FloatToDouble`] in ELFv2 plans) is `lfs`, which converts it to
//! double format, an 8-byte one `lfd`; a promoted `float` in a GPR or the parameter save area
//! is `lfs` + `mfvsrd` or `stfd`. Parameter save area moves write whole doublewords at
//! `32 + off(r1)`.
//!
//! Capture (as the trampoline): the capture slot's value is stored to `errno` right before the
//! `bctrl` (after every argument is in place, so nothing can change `errno` in between) and
//! `errno` is stored back to the capture slot right after the call and r2's reload, before
//! anything else.
//!
//! # Invariants
//! - The stub reads only `args[..n]` (raw) or the `n` `Value`s (values), the argument bytes
//!   the plan names (exactly), `*capture` and `*errno` (capture stubs), and its own frame; it
//!   writes only the argument registers, its frame, the return layout's bytes at `ret`
//!   (exactly each move's size), `*errno` and `*capture` (capture stubs). r13 is never named;
//!   r2 only in the save before and the load after the call.
//! - Scratch registers are volatile ones that carry no argument: r0, r11, r12, f0 and CTR.
//!   The callee-saved r26..r30 the stub uses are saved before and restored after; the values
//!   entry's rejection path runs before anything else.
//! - Offsets come from a plan the classifier accepted: the parameter save area is at most
//!   [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES) bytes; a displacement that does
//!   not fit a load/store's signed 16-bit field (from 32 KiB on: the parameter save area, the
//!   arguments' `Value`s, the pointer array) is formed in r11 with `addis` and the access takes
//!   the low half. Conditional branches reach ±32 KiB: the values entry's checks branch to a
//!   rejection path at its end, or, when that is out of reach, to one after every
//!   [`ISLAND_CHECKS`] arguments.

// Off PPC64LE Linux this module is compiled for its code-generation tests only: the placing
// and calling half (`Stub`, the cache, the entries) is used by the PPC64LE executor alone.
#![cfg_attr(not(gatun_backend = "ppc64le"), allow(dead_code))]

use std::ptr::NonNull;
use std::sync::Arc;

use super::encode::{self as e, Asm, Cond, Load, Store, F, R};
use crate::abi::kinds::segment_tag;
use crate::abi::{ArgMove, CallPlan, Conversion, Location, Register, ReturnMove, ReturnPlan};
use crate::backend::moves::copy_runs;
pub(crate) use crate::backend::ArgCheck;
use crate::code::compiled::{CompiledStub, StubCompiler};
use crate::error::Result;
use crate::memory::MemorySegment;
use crate::value::scalar_tag;

pub(crate) use crate::backend::{RawFn, VALUE_PAYLOAD, VALUE_STRIDE};

/// The rejection flag of the values entry and the checks' scratch; displacements too large for
/// a 16-bit field on the normal path.
const FLAG: R = R::new(11);
/// The large-displacement base (the same register as [`FLAG`], whose value is set last).
const ADDR: R = R::new(11);
/// The pointer to the current argument's bytes; the target at the call.
const ARG: R = R::new(12);
/// A converted value on its way to the parameter save area or an FPR; errno's value around
/// the call.
const VAL: R = R::R0;
/// Pieces of odd-size loads and stores (callee-saved, saved by the stub).
const PIECE: R = R::new(26);
/// The thread's errno address (capture stubs).
const ERRNO: R = R::new(27);
/// The capture slot (capture stubs).
const CAPTURE: R = R::new(28);
/// `ret`.
const RET: R = R::new(29);
/// `args` (the pointer array or the `Value`s).
const BASE: R = R::new(30);
/// The stack pointer.
const SP: R = R::SP;
/// The floating-point scratch register.
const FSCRATCH: F = F::F0;

/// The parameter save area's offset from r1 (after the frame header).
const SAVE_AREA: u32 = 32;

/// How an entry finds argument bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Values,
    Raw,
}

/// One load or store of a register (the access of [`mem`]).
#[derive(Clone, Copy, Debug)]
enum Access {
    Load(Load, R),
    Store(Store, R),
    Lfs(F),
    Lfd(F),
    Stfs(F),
    Stfd(F),
}

impl Access {
    fn word(self, base: R, d: i32) -> u32 {
        match self {
            Access::Load(op, rt) => e::load(op, rt, base, d),
            Access::Store(op, rs) => e::store(op, rs, base, d),
            Access::Lfs(f) => e::lfs(f, base, d),
            Access::Lfd(f) => e::lfd(f, base, d),
            Access::Stfs(f) => e::stfs(f, base, d),
            Access::Stfd(f) => e::stfd(f, base, d),
        }
    }

    /// Whether the displacement must be a multiple of 4 (DS-form).
    fn is_ds(self) -> bool {
        match self {
            Access::Load(op, _) => op.is_ds(),
            Access::Store(op, _) => op == Store::D,
            _ => false,
        }
    }
}

/// `access` at `[base + disp]`: the 16-bit displacement form when `disp` fits it (and is a
/// multiple of 4 for a DS-form access), else `addis r11, base, ha` (and `addi r11, r11, lo`
/// for a DS-form access with an odd low half) and the access at `lo(r11)`.
fn mem(a: &mut Asm, access: Access, base: R, disp: u32) {
    let ds_ok = !access.is_ds() || disp % 4 == 0;
    if disp < 32768 && ds_ok {
        a.emit(access.word(base, disp as i32));
    } else {
        let (ha, lo) = e::split_ha_lo(disp.into());
        a.emit(e::addis(ADDR, base, ha));
        if ds_ok {
            a.emit(access.word(ADDR, lo));
        } else {
            a.emit(e::addi(ADDR, ADDR, lo));
            a.emit(access.word(ADDR, 0));
        }
    }
}

/// The distance in bytes between two stack probes: one 4 KiB page (the smallest guard page).
const PROBE_INTERVAL: u32 = 4096;

/// Makes the frame of `frame` bytes below r1 touching every page in order going down (see
/// the module documentation): one `stdu` (which stores the back chain) for a frame under a
/// page; else the caller's r1 in r12, a CTR loop of `stdu r1, -4096(r1)`, the rest, and the
/// back chain set to r12.
fn make_frame(a: &mut Asm, frame: u32) {
    let (pages, rest) = (frame / PROBE_INTERVAL, frame % PROBE_INTERVAL);
    if pages == 0 {
        a.emit(e::stdu(SP, SP, -(frame as i32)));
        return;
    }
    a.emit(e::mr(ARG, SP));
    a.emit_all(e::li32(VAL, pages));
    a.emit(e::mtctr(VAL));
    let top = a.label();
    a.bind(top);
    a.emit(e::stdu(SP, SP, -(PROBE_INTERVAL as i32)));
    a.branch(Cond::Dnz, top);
    if rest > 0 {
        a.emit(e::stdu(SP, SP, -(rest as i32)));
    }
    a.emit(e::store(Store::D, ARG, SP, 0));
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

/// Loads exactly `size` bytes at `[base + disp]` into `rt`, zero-extended (3, 5, 6, 7 bytes
/// in pieces through [`PIECE`]).
fn load_bytes(a: &mut Asm, rt: R, base: R, disp: u32, size: u8) {
    if matches!(size, 1 | 2 | 4 | 8) {
        return mem(a, Access::Load(Load::zero(size), rt), base, disp);
    }
    for (at, p) in pieces(size) {
        let load = Load::zero(p);
        if at == 0 {
            mem(a, Access::Load(load, rt), base, disp);
        } else {
            mem(a, Access::Load(load, PIECE), base, disp + u32::from(at));
            a.emit(e::sldi(PIECE, PIECE, 8 * u32::from(at)));
            a.emit(e::or(rt, rt, PIECE));
        }
    }
}

/// Stores exactly the low `size` bytes of `rs` at `[base + disp]` (3, 5, 6, 7 bytes in
/// pieces through [`PIECE`]).
fn store_bytes(a: &mut Asm, rs: R, base: R, disp: u32, size: u8) {
    if matches!(size, 1 | 2 | 4 | 8) {
        return mem(a, Access::Store(Store::of(size), rs), base, disp);
    }
    for (at, p) in pieces(size) {
        let from = if at == 0 {
            rs
        } else {
            a.emit(e::srdi(PIECE, rs, 8 * u32::from(at)));
            PIECE
        };
        mem(
            a,
            Access::Store(Store::of(p), from),
            base,
            disp + u32::from(at),
        );
    }
}

/// Converts and loads one move's source at `[base + disp]` into the 64-bit register `rt`.
fn load_gpr(a: &mut Asm, rt: R, base: R, disp: u32, m: &ArgMove) {
    match (m.conv, m.size) {
        (Conversion::Bytes, size) => load_bytes(a, rt, base, disp, size),
        (Conversion::SignExtend, 1) => {
            mem(a, Access::Load(Load::Bz, rt), base, disp);
            a.emit(e::extsb(rt, rt));
        }
        (Conversion::SignExtend, 2) => mem(a, Access::Load(Load::Ha, rt), base, disp),
        (Conversion::SignExtend, 4) => mem(a, Access::Load(Load::Wa, rt), base, disp),
        (Conversion::SignExtend, _) => mem(a, Access::Load(Load::D, rt), base, disp),
        (Conversion::Bool, _) => {
            // rt = (byte != 0): cntlzd gives 64 only for zero
            mem(a, Access::Load(Load::Bz, rt), base, disp);
            a.emit(e::cntlzd(rt, rt));
            a.emit(e::srdi(rt, rt, 6));
            a.emit(e::xori(rt, rt, 1));
        }
        (Conversion::FloatToDouble, _) => {
            mem(a, Access::Lfs(FSCRATCH), base, disp);
            a.emit(e::mfvsrd(rt, FSCRATCH));
        }
    }
}

/// Carries out one move from `[base + disp + m.offset]`.
fn emit_move(a: &mut Asm, base: R, disp: u32, m: &ArgMove) {
    let disp = disp + m.offset;
    match m.to {
        Location::Int(n) => load_gpr(a, R::arg(n), base, disp, m),
        Location::Vector(n) => {
            let f = F::arg(n);
            match (m.conv, m.size) {
                (Conversion::FloatToDouble | Conversion::Bytes, 4) => {
                    mem(a, Access::Lfs(f), base, disp)
                }
                (Conversion::Bytes, 8) => mem(a, Access::Lfd(f), base, disp),
                _ => {
                    load_gpr(a, VAL, base, disp, m);
                    a.emit(e::mtvsrd(f, VAL));
                }
            }
        }
        Location::Stack(off) => {
            let at = SAVE_AREA + off;
            if m.conv == Conversion::FloatToDouble {
                mem(a, Access::Lfs(FSCRATCH), base, disp);
                mem(a, Access::Stfd(FSCRATCH), SP, at);
            } else {
                load_gpr(a, VAL, base, disp, m);
                mem(a, Access::Store(Store::D, VAL), SP, at);
            }
        }
    }
}

/// Where argument `i`'s bytes are: `(base register, displacement)`, loading the argument's
/// pointer into [`ARG`] where needed.
fn arg_source(a: &mut Asm, mode: Mode, i: usize, check: ArgCheck) -> (R, u32) {
    match mode {
        Mode::Raw => {
            mem(a, Access::Load(Load::D, ARG), BASE, 8 * i as u32);
            (ARG, 0)
        }
        Mode::Values => {
            let payload = VALUE_STRIDE as u32 * i as u32 + VALUE_PAYLOAD as u32;
            match check {
                ArgCheck::Scalar(_) => (BASE, payload),
                ArgCheck::Group(_) => {
                    let ptr = payload + MemorySegment::PTR_OFFSET as u32;
                    mem(a, Access::Load(Load::D, ARG), BASE, ptr);
                    (ARG, 0)
                }
            }
        }
    }
}

/// Checks per rejection island of a values entry (see [`emit_checks`]): at most 8 words each,
/// so a block spans at most 8 KiB, within the ±32 KiB of a conditional branch.
const ISLAND_CHECKS: usize = 256;

/// The values entry's checks (first, before anything is written): each argument's tag byte,
/// and each struct segment's length, with r3 = the `Value`s; a mismatch branches to `fail`.
/// With `islands`, each block of [`ISLAND_CHECKS`] checks is followed by its own rejection
/// path `b over; li r11, 1; blr; over:`, which the block's checks branch to instead (for a
/// signature whose entry is too long for the checks to reach `fail` at its end).
fn emit_checks(a: &mut Asm, checks: &[ArgCheck], fail: e::Label, islands: bool) {
    let values = R::arg(0);
    let mut target = if islands { a.label() } else { fail };
    for (i, check) in checks.iter().enumerate() {
        let slot = VALUE_STRIDE as u32 * i as u32;
        let tag = match check {
            ArgCheck::Scalar(k) => scalar_tag(*k),
            ArgCheck::Group(_) => segment_tag(),
        };
        mem(a, Access::Load(Load::Bz, FLAG), values, slot);
        a.emit(e::cmpldi(FLAG, u32::from(tag)));
        a.branch(Cond::Ne, target);
        if let ArgCheck::Group(size) = *check {
            let len = slot + VALUE_PAYLOAD as u32 + MemorySegment::LEN_OFFSET as u32;
            mem(a, Access::Load(Load::D, FLAG), values, len);
            if size <= 0xFFFF {
                a.emit(e::cmpldi(FLAG, size));
            } else {
                // sizes of by-value structs are within the parameter save area's limit
                a.emit_all(e::li32(ARG, size));
                a.emit(e::cmpld(FLAG, ARG));
            }
            a.branch(Cond::Lt, target);
        }
        if islands && ((i + 1) % ISLAND_CHECKS == 0 || i + 1 == checks.len()) {
            let over = a.label();
            a.jump(over);
            a.bind(target);
            a.emit(e::addi(FLAG, R::R0, 1));
            a.emit(e::BLR);
            a.bind(over);
            target = a.label();
        }
    }
}

/// Stores one return move from its register into `[base + offset]`.
fn emit_return_move(a: &mut Asm, base: R, m: &ReturnMove) {
    match (m.from, m.size) {
        (Register::Int(n), size) => store_bytes(a, R::arg(n), base, m.offset, size),
        (Register::Vector(n), 4) => mem(a, Access::Stfs(F::arg(n)), base, m.offset),
        (Register::Vector(n), 8) => mem(a, Access::Stfd(F::arg(n)), base, m.offset),
        (Register::Vector(n), size) => {
            a.emit(e::mfvsrd(VAL, F::arg(n)));
            store_bytes(a, VAL, base, m.offset, size);
        }
    }
}

/// Whether the stub needs [`PIECE`]: odd-size argument or return moves, or a copy loop.
fn uses_piece(plan: &CallPlan) -> bool {
    let odd = |size: u8| !matches!(size, 1 | 2 | 4 | 8);
    plan.args.iter().any(|ap| {
        ap.moves
            .iter()
            .any(|m| m.conv == Conversion::Bytes && odd(m.size))
            || !copy_runs(&ap.moves).is_empty()
    }) || matches!(&plan.ret, ReturnPlan::Registers(ms) if ms.iter().any(|m| odd(m.size)))
}

/// Copies the run `moves` (whole doublewords read one after the other into consecutive
/// doublewords of the parameter save area, [`copy_runs`]) from `[base + disp]` with a CTR
/// loop: r11 and [`PIECE`] walk the source and the area, r0 carries each doubleword.
fn emit_copy_run(a: &mut Asm, base: R, disp: u32, moves: &[ArgMove]) {
    let (first, count) = (&moves[0], moves.len() as u32);
    let Location::Stack(off) = first.to else {
        unreachable!("a copy run is of parameter save area moves (`copy_runs`)")
    };
    let (ha, lo) = e::split_ha_lo(i64::from(disp + first.offset) - 8);
    a.emit(e::addis(ADDR, base, ha));
    a.emit(e::addi(ADDR, ADDR, lo));
    let (ha, lo) = e::split_ha_lo(i64::from(SAVE_AREA + off) - 8);
    a.emit(e::addis(PIECE, SP, ha));
    a.emit(e::addi(PIECE, PIECE, lo));
    a.emit_all(e::li32(VAL, count));
    a.emit(e::mtctr(VAL));
    let top = a.label();
    a.bind(top);
    a.emit(e::ldu(VAL, ADDR, 8));
    a.emit(e::stdu(VAL, PIECE, 8));
    a.branch(Cond::Dnz, top);
}

/// Compiles one entry (its rejection path, if the checks branch to one at its end, after its
/// return).
fn compile_entry(
    a: &mut Asm,
    plan: &CallPlan,
    checks: &[ArgCheck],
    capture: bool,
    mode: Mode,
    islands: bool,
) {
    let fail = a.label();
    if mode == Mode::Values {
        emit_checks(a, checks, fail, islands);
    }
    let hidden = plan.hidden_return_pointer == Some(Location::Int(0));
    let needs_ret = hidden || matches!(plan.ret, ReturnPlan::Registers(_));
    let mut saved = vec![BASE];
    if needs_ret {
        saved.push(RET);
    }
    if capture {
        saved.extend([CAPTURE, ERRNO]);
    }
    if uses_piece(plan) {
        saved.push(PIECE);
    }
    let target_slot = -8 * (saved.len() as i32 + 1);
    let saves = (8 * (saved.len() as u32 + 1)).next_multiple_of(16);
    let area = plan.stack_bytes.max(64).next_multiple_of(16);
    let frame = SAVE_AREA + area + saves;
    // the saves, in the protected zone below the caller's r1
    a.emit(e::mflr(R::R0));
    a.emit(e::store(Store::D, R::R0, SP, 16));
    for (k, &r) in saved.iter().enumerate() {
        a.emit(e::store(Store::D, r, SP, -8 * (k as i32 + 1)));
    }
    a.emit(e::store(Store::D, R::arg(3), SP, target_slot));
    a.emit(e::mr(BASE, R::arg(0)));
    if needs_ret {
        a.emit(e::mr(RET, R::arg(1)));
    }
    if capture {
        a.emit(e::mr(CAPTURE, R::arg(2)));
        a.emit(e::mr(ERRNO, R::arg(5)));
    }
    make_frame(a, frame);
    for (i, ap) in plan.args.iter().enumerate() {
        if ap.moves.is_empty() {
            continue;
        }
        let (base, disp) = arg_source(a, mode, i, checks[i]);
        let runs = copy_runs(&ap.moves);
        let mut k = 0;
        while k < ap.moves.len() {
            if let Some(run) = runs.iter().find(|r| r.start == k) {
                emit_copy_run(a, base, disp, &ap.moves[run.clone()]);
                k = run.end;
            } else {
                emit_move(a, base, disp, &ap.moves[k]);
                k += 1;
            }
        }
    }
    if hidden {
        a.emit(e::mr(R::arg(0), RET));
    }
    if capture {
        // errno <- capture, right before the call
        a.emit(e::load(Load::Wz, VAL, CAPTURE, 0));
        a.emit(e::store(Store::W, VAL, ERRNO, 0));
    }
    mem(
        a,
        Access::Load(Load::D, ARG),
        SP,
        (frame as i32 + target_slot) as u32,
    );
    a.emit(e::mtctr(ARG));
    a.emit(e::store(Store::D, R::TOC, SP, 24));
    a.emit(e::BCTRL);
    a.emit(e::load(Load::D, R::TOC, SP, 24));
    if capture {
        // capture <- errno, right after the call (r3, r4, f1..f8 untouched)
        a.emit(e::load(Load::Wz, VAL, ERRNO, 0));
        a.emit(e::store(Store::W, VAL, CAPTURE, 0));
    }
    match &plan.ret {
        ReturnPlan::Registers(moves) => moves.iter().for_each(|m| emit_return_move(a, RET, m)),
        ReturnPlan::Scalar(Register::Vector(n)) => a.emit(e::mfvsrd(R::arg(0), F::arg(*n))),
        _ => {}
    }
    if mode == Mode::Values {
        a.emit(e::addi(FLAG, R::R0, 0));
    }
    // the back chain is the caller's r1
    a.emit(e::load(Load::D, SP, SP, 0));
    for (k, &r) in saved.iter().enumerate().rev() {
        a.emit(e::load(Load::D, r, SP, -8 * (k as i32 + 1)));
    }
    a.emit(e::load(Load::D, R::R0, SP, 16));
    a.emit(e::mtlr(R::R0));
    a.emit(e::BLR);
    if mode == Mode::Values && !checks.is_empty() && !islands {
        a.bind(fail);
        a.emit(e::addi(FLAG, R::R0, 1));
        a.emit(e::BLR);
    }
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
}

/// Compiles the stub of `plan` (`checks[i]` describes argument `i` for the values entry's
/// checks; `checks.len() == plan.args().len()`): the values entry's rejection path at its end,
/// or, when a check would not reach it, after every block of checks.
pub(crate) fn compile(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> StubCode {
    debug_assert_eq!(checks.len(), plan.args.len());
    compile_with(plan, checks, capture, false)
        .or_else(|| compile_with(plan, checks, capture, true))
        .expect("every branch reaches its label with rejection islands")
}

/// [`compile`] with or without rejection islands; `None` when a branch does not reach.
fn compile_with(
    plan: &CallPlan,
    checks: &[ArgCheck],
    capture: bool,
    islands: bool,
) -> Option<StubCode> {
    let mut a = Asm::default();
    compile_entry(&mut a, plan, checks, capture, Mode::Raw, false);
    while a.len() % 4 != 0 {
        a.emit(e::TRAP);
    }
    let values = a.len();
    compile_entry(&mut a, plan, checks, capture, Mode::Values, islands);
    if !a.branches_reach() {
        return None;
    }
    let words = a.finish();
    Some(StubCode {
        bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
        raw: 0,
        values: 4 * values,
    })
}

/// The values entry of a placed stub (see the module documentation): called only through
/// `ValuesEntry::call` (PPC64LE only), which reads the rejection flag in r11.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ValuesEntry(NonNull<u8>);

// SAFETY: the entry is the address of immutable code; calling it is as thread-safe as the
// arguments passed.
unsafe impl Send for ValuesEntry {}
// SAFETY: as above.
unsafe impl Sync for ValuesEntry {}

impl ValuesEntry {
    /// Calls the values entry: `Some(r3)` when the arguments passed the checks and the target
    /// was called, `None` when they were rejected (nothing called or written).
    ///
    /// # Safety
    /// As the raw entry's call: `values` points to the stub's `n` arguments, `ret`, `capture`
    /// and `errno_location` are what the module documentation says the plan needs, and calling
    /// `target` with the converted arguments is sound.
    #[cfg(all(target_arch = "powerpc64", not(miri)))]
    pub(crate) unsafe fn call(
        self,
        values: *const crate::value::Value<'_>,
        ret: *mut u8,
        capture: *mut i32,
        target: *const std::ffi::c_void,
        errno_location: *mut i32,
    ) -> Option<u64> {
        let (r3, flag): (u64, u64);
        // SAFETY: the entry is an ELFv2 function of these six arguments (see the caller's
        // contract), called in a frame of its own (header and a 64-byte parameter save area)
        // with its address in r12 and r2 saved around it; it returns with r11 = 0 or 1 and
        // clobbers only volatile registers.
        unsafe {
            std::arch::asm!(
                "stdu 1, -96(1)",
                "std 2, 24(1)",
                "mtctr 12",
                "bctrl",
                "ld 2, 24(1)",
                "addi 1, 1, 96",
                in("r12") self.0.as_ptr(),
                inlateout("r3") values => r3,
                in("r4") ret,
                in("r5") capture,
                in("r6") target,
                in("r7") 0usize,
                in("r8") errno_location,
                lateout("r11") flag,
                out("lr") _,
                out("ctr") _,
                clobber_abi("C"),
            );
        }
        (flag == 0).then_some(r3)
    }
}

/// The PPC64LE stub compiler of [`CompiledStub`]: [`compile`] and the entries it lays out.
#[derive(Debug)]
pub(crate) struct Compiler;

/// The entry points of a placed PPC64LE stub (a [`Stub`] dereferences to them).
#[derive(Debug)]
pub(crate) struct Entries {
    /// The raw entry.
    pub raw: RawFn,
    /// The values entry.
    pub values: ValuesEntry,
}

// SAFETY: `compile` emits Power ISA (POWER8, little-endian) code for the plan (on other hosts
// it is never called); the raw entry is at offset 0 and the values entry at `values` (see the
// module documentation).
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
