//! Compiled downcall stubs for x86-64 System V: per-signature machine code generated from a
//! [`CallPlan`] at link time, hand-encoded (see ARCHITECTURE.md, "Compiled downcall stubs").
//!
//! A stub takes the parameters `(args: *const u8, ret: *mut u8, errno: *mut i32, target:
//! *const c_void, _unused: *mut u8, errno_location: *mut i32)` in the SysV registers (rdi, rsi,
//! rdx, rcx, r8, r9; `errno`: the capture buffer and `errno_location`: the calling thread's
//! errno address, [`thread_errno`], both read only by capture stubs) and returns the raw
//! 64-bit return register (rax, or xmm0's bits for a float return). It has two entry points
//! (three with the image entry) compiled from the same plan, differing in where an argument's
//! bytes are found and in what comes back:
//! - **value entry** (`invoke`, `invoke_into`, the system-call adapter):
//!   `args` points to the caller's `&[Value]` (after the capture segment). `Value` is
//!   `#[repr(C, u8)]`, so argument `i` is at `args + i * size_of::<Value>()`, its tag byte at
//!   offset 0 and its payload at [`VALUE_PAYLOAD`]. The stub first checks every tag (and every
//!   struct segment's length); on a mismatch it returns at once with r12 set to all ones
//!   (`super::entry`'s rejection protocol — which is why a checked entry is only called from
//!   inline assembly, [`CheckedEntry`]), and the caller falls back to the checked trampoline
//!   path (which either accepts the value, e.g. a `Segment` for a pointer parameter, or reports
//!   the exact error).
//! - **raw entry** (`invoke_raw`, typed calls): `args` is an array of pointers, `args[i]`
//!   pointing to argument `i`'s bytes in its layout's representation. No checks; an ordinary
//!   `extern "C"` function ([`StubFn`]).
//! - **slots entry** (`linker::Arguments`, only for scalar signatures without capture, not
//!   variadic:
//!   [`has_slots_entry`]): `args` points to untagged 8-byte slots, argument `i` at `args + 8 *
//!   i`; no checks (the caller compared a kind string first); an ordinary SysV function
//!   (`super::slots`).
//! - **image entry** (only for a struct/union returned in registers, no capture, no stack
//!   arguments: [`has_image_entry`]): the value entry's checks and the tail body. The target
//!   returns its rax/rdx/xmm0/xmm1 straight to the stub's caller, which picks the struct's
//!   eightbytes and stores them itself (`backend::x86_64_sysv::image`, for `invoke_into` and
//!   `invoke_raw`).
//!
//! After the checks, one of three bodies (no allocation, no classification, no branches):
//! - **tail** (no capture, no stack arguments, integer or void return — or a float return on
//!   the value entry, whose callers read xmm0): the target goes to r11,
//!   every [`ArgMove`] is carried out from rdi (rdi's own argument last), `%al` is set for
//!   variadic calls, and `jmp r11`: the target returns straight to the stub's caller. A
//!   MEMORY-class return without stack arguments is a tail too: `ret` goes into rdi as the
//!   hidden pointer (parked in xmm14 while the arguments are loaded), and the callee writes
//!   the struct through it and returns to the stub's caller.
//! - **leaf** (no capture): as tail, but with a 16-byte aligned frame holding the outgoing
//!   stack arguments (up to [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES)), the target
//!   and `ret` (`call [rsp + T]`); the hidden return pointer (`ret`) into rdi; after the call
//!   `movq rax, xmm0` for a float return, or a register-returned struct stored into `ret` by
//!   its [`ReturnMove`]s (exact sizes). A frame of a page (4096 bytes) or more is made by a
//!   probing loop (`sub rsp, 4096; or qword [rsp], 0`, gcc's `-fstack-clash-protection`
//!   shape, [`encode::sub_rsp_probed`]) that touches each page in order going down, so a
//!   thread whose stack is too small faults on its guard page (Rust's "has overflowed its
//!   stack" abort) and never writes past it. A long run of whole-slot stack moves of one
//!   argument (a MEMORY-class struct of 128 bytes or more,
//!   [`copy_runs`]) is copied with `rep movsq` before the
//!   argument registers are loaded, so the code stays linear in the number of arguments,
//!   not in their bytes.
//! - **capture**: the leaf frame plus slots for the capture buffer and the thread's errno
//!   address (passed in r9 by the caller, so no call into libc): the capture buffer's errno
//!   copied into errno on entry, before the argument registers are loaded — nothing between
//!   that and the call can change errno ("restore before") —, errno copied back into the buffer
//!   right after the call, before anything else ("save after").
//!
//! No stub saves a callee-saved register: everything that must survive the call lives in the
//! stub's own frame.
//!
//! Every move loads exactly `size` bytes (never past the argument), converts them (sign
//! extension, bool normalisation, float → double) and puts them into the GPR, the XMM register
//! (via r11 when not a plain 4- or 8-byte load) or the stack slot.
//!
//! # Invariants
//! - The plan's stack offsets are below [`crate::backend::MAX_STACK_BYTES`] (checked by the linker),
//!   so every displacement fits in 32 bits.
//! - Only caller-saved registers other than the argument registers being built are used as
//!   scratch (rax before `%al` is set, r10, r11, xmm15, and xmm14 holding `ret` in a
//!   MEMORY-class tail body; rsi, rdi and rcx for the `rep movsq` copies, which come before
//!   any argument register is loaded, with `args` parked in rax); callee-saved ones are never
//!   touched,
//!   except r12 on a checked entry's rejection path, which runs before anything else.
//! - The stub never reads outside `args[..n]` and the argument bytes the plan names, and never
//!   writes outside the return layout's bytes at `ret` and its own frame.

use std::ffi::c_void;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::abi::kinds::segment_tag;
use crate::abi::{ArgMove, CallPlan, Conversion, Location, Register, ReturnMove, ReturnPlan};
use crate::backend::moves::copy_runs;
use crate::backend::x86_64_encode::{
    self as encode, Asm, R10, R11, R8, R9, RAX, RCX, RDI, RDX, RSI, RSP, XMM14, XMM15,
};
use crate::backend::x86_64_sysv::entry::CheckedEntry;
use crate::backend::x86_64_sysv::slots::SlotsEntry;
use crate::code::compiled::{CompiledStub, StubCompiler};
#[cfg(any(test, feature = "internals"))]
use crate::error::Result;

/// The signature of the raw entry (see the module documentation): an ordinary SysV function
/// returning the raw 64-bit return register (rax; a float return's xmm0 bits). The fifth
/// parameter is unused.
pub(crate) type StubFn = unsafe extern "C" fn(
    args: *const u8,
    ret: *mut u8,
    errno: *mut i32,
    target: *const c_void,
    unused: *mut u8,
    errno_location: *mut i32,
) -> u64;

pub(crate) use crate::backend::{VALUE_PAYLOAD, VALUE_STRIDE};

pub(crate) use crate::backend::ArgCheck;
pub(crate) use crate::value::scalar_tag;

/// How an entry finds argument bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Values,
    Raw,
    /// The slots entry: `args` points to untagged 8-byte slots, argument `i`'s bytes at
    /// `args + 8 * i` (scalar signatures only, see [`has_slots_entry`]).
    Slots,
}

/// SysV integer argument registers in order.
const INT_ARGS: [u8; 6] = [RDI, RSI, RDX, RCX, R8, R9];

/// SysV integer return registers in order.
const INT_RETURNS: [u8; 2] = [RAX, RDX];

/// Carries out one argument move from `[base + disp + m.offset]` into the SysV registers.
fn emit_move(a: &mut Asm, base: u8, disp: i32, m: &ArgMove) {
    encode::emit_move(a, &INT_ARGS, XMM15, base, disp, m);
}

/// Stores one return move from rax/rdx/xmm0/xmm1 into `[base + offset]` (`base` is not r11).
fn emit_return_move(a: &mut Asm, base: u8, m: &ReturnMove) {
    encode::emit_return_move(a, &INT_RETURNS, base, m);
}

/// Where argument `i`'s bytes are: `(base register, displacement)`, loading the argument's
/// pointer into r10 where needed. `args` is the register holding the entry's `args` parameter.
fn arg_source(a: &mut Asm, mode: Mode, args: u8, i: usize, check: ArgCheck) -> (u8, i32) {
    match mode {
        Mode::Raw => {
            // mov r10, [args + 8i]
            a.load_zx(R10, args, 8 * i as i32, 8);
            (R10, 0)
        }
        Mode::Slots => match check {
            ArgCheck::Scalar(_) => (args, 8 * i as i32),
            // Never emitted (`has_slots_entry`); a slot holding a group's address would be
            // read through it.
            ArgCheck::Group(_) => {
                a.load_zx(R10, args, 8 * i as i32, 8);
                (R10, 0)
            }
        },
        Mode::Values => {
            let slot = VALUE_STRIDE * i as i32;
            match check {
                ArgCheck::Scalar(_) => (args, slot + VALUE_PAYLOAD),
                ArgCheck::Group(_) => {
                    let ptr =
                        slot + VALUE_PAYLOAD + crate::memory::MemorySegment::PTR_OFFSET as i32;
                    a.load_zx(R10, args, ptr, 8);
                    (R10, 0)
                }
            }
        }
    }
}

/// The value entry's checks, first thing in the stub (nothing is clobbered yet, so a failure
/// can return at once): every argument's tag byte, and each struct segment's length. Returns
/// the failure jumps.
fn emit_checks(a: &mut Asm, checks: &[ArgCheck]) -> Vec<usize> {
    let mut fails = Vec::new();
    for (i, check) in checks.iter().enumerate() {
        let slot = VALUE_STRIDE * i as i32;
        let tag = match check {
            ArgCheck::Scalar(k) => scalar_tag(*k),
            ArgCheck::Group(_) => segment_tag(),
        };
        // cmp byte [rdi + slot], tag; jne fail
        a.op_mem(None, false, &[0x80], 7, RDI, slot);
        a.byte(tag);
        fails.push(a.jump(&[0x0F, 0x85]));
        if let ArgCheck::Group(size) = check {
            let len = slot + VALUE_PAYLOAD + crate::memory::MemorySegment::LEN_OFFSET as i32;
            // cmp qword [rdi + len], size; jb fail
            a.op_mem(None, true, &[0x81], 7, RDI, len);
            a.bytes(&size.to_le_bytes());
            fails.push(a.jump(&[0x0F, 0x82]));
        }
    }
    fails
}

/// Emits every argument move but those of `copied` (per argument, the ranges of its moves
/// already carried out by [`emit_copies`]; empty for none). With `defer_rdi` the moves into
/// rdi (which then holds `args`) are emitted last, after the argument's source is found again.
fn emit_args(
    a: &mut Asm,
    plan: &CallPlan,
    checks: &[ArgCheck],
    mode: Mode,
    args: u8,
    defer_rdi: bool,
    copied: &[Vec<Range<usize>>],
) {
    let is_rdi = |m: &ArgMove| defer_rdi && m.to == Location::Int(0);
    let mut deferred = None;
    for (i, (ap, check)) in plan.args.iter().zip(checks).enumerate() {
        let all_deferred = !ap.moves.is_empty() && ap.moves.iter().all(is_rdi);
        if all_deferred {
            deferred = Some((i, *check, ap.moves[0]));
            continue;
        }
        let runs = copied.get(i).map_or(&[][..], |r| &r[..]);
        let is_copied = |k: usize| runs.iter().any(|r| r.contains(&k));
        if !runs.is_empty() && (0..ap.moves.len()).all(is_copied) {
            continue;
        }
        let (base, disp) = arg_source(a, mode, args, i, *check);
        for (k, m) in ap.moves.iter().enumerate() {
            if is_rdi(m) {
                deferred = Some((i, *check, *m));
            } else if !is_copied(k) {
                emit_move(a, base, disp, m);
            }
        }
    }
    if let Some((i, check, m)) = deferred {
        let (base, disp) = arg_source(a, mode, args, i, check);
        emit_move(a, base, disp, &m);
    }
}

/// The runs of whole-slot stack moves of each argument that the leaf body copies with
/// `rep movsq` ([`copy_runs`]): one list per argument, all empty for most plans.
fn copied_runs(plan: &CallPlan) -> Vec<Vec<Range<usize>>> {
    plan.args.iter().map(|ap| copy_runs(&ap.moves)).collect()
}

/// Copies each run of `copied` (see [`copied_runs`]) into its stack slots with `rep movsq`
/// (rsi the source, rdi the first slot, rcx the count): before any argument register is
/// loaded, since rdi, rsi and rcx are argument registers. `args` (rdi) waits in rax, which is
/// free until the moves' scratch and `%al` use it, and is back in rdi afterwards. The caller
/// has saved what it needs of rsi (`ret`) and rcx (the target). Stub size stays linear in the
/// number of arguments however large a struct is; nothing but the runs' bytes is read or
/// written.
fn emit_copies(
    a: &mut Asm,
    plan: &CallPlan,
    checks: &[ArgCheck],
    mode: Mode,
    copied: &[Vec<Range<usize>>],
) {
    if copied.iter().all(|r| r.is_empty()) {
        return;
    }
    a.mov_rr(RAX, RDI);
    for (i, runs) in copied.iter().enumerate() {
        for run in runs {
            let first = plan.args[i].moves[run.start];
            let Location::Stack(to) = first.to else {
                continue; // never: a run is of stack moves (`copy_runs`)
            };
            let (base, disp) = arg_source(a, mode, RAX, i, checks[i]);
            a.lea(RSI, base, disp + first.offset as i32);
            a.lea(RDI, RSP, to as i32);
            a.mov_imm32(RCX, run.len() as u32);
            a.rep_movsq();
        }
    }
    a.mov_rr(RDI, RAX);
}

/// Patches the checked entries' failure jumps to `or r12, -1; ret`: the rejection protocol of
/// `super::entry` (r12 is callee-saved, so on every other path the caller gets its own value
/// back). The checks come before anything else, so nothing has been written or called.
fn emit_fail_path(a: &mut Asm, fails: Vec<usize>) {
    if fails.is_empty() {
        return;
    }
    let fail = a.buf.len();
    for f in fails {
        a.patch(f, fail);
    }
    // or r12, -1; ret (see `super::entry`: r12 = all ones reports the rejection)
    a.bytes(&[0x49, 0x83, 0xCC, 0xFF, 0xC3]);
}

/// Whether a leaf plan can tail-jump to the target: no stack arguments (the target's return
/// address is then the stub caller's), an integer or void return without hidden pointer
/// (nothing to do after the call), and every vector move a direct load (r11 keeps the target).
fn is_tail(plan: &CallPlan) -> bool {
    matches!(
        plan.ret,
        ReturnPlan::Void | ReturnPlan::Scalar(Register::Int(_))
    ) && tail_arguments(plan)
}

/// Whether a plan's arguments allow a tail jump: no stack arguments, no hidden return pointer,
/// and every vector move a direct load (r11 keeps the target).
fn tail_arguments(plan: &CallPlan) -> bool {
    plan.stack_bytes == 0
        && plan.hidden_return_pointer.is_none()
        && plan.args.iter().flat_map(|a| &a.moves).all(|m| match m.to {
            Location::Vector(_) => matches!(
                (m.conv, m.size),
                (Conversion::Bytes, 4 | 8) | (Conversion::FloatToDouble, _)
            ),
            _ => true,
        })
}

/// Whether a MEMORY-class return can tail-jump to the target: the hidden return pointer goes
/// in rdi (SysV AMD64 §3.2.3: the callee writes the struct through it and returns the same
/// address in rax, so nothing is left to do after the call) and the arguments allow a tail
/// jump otherwise (no stack arguments, vector moves direct loads).
fn is_memory_tail(plan: &CallPlan) -> bool {
    matches!(plan.ret, ReturnPlan::InMemory)
        && plan.hidden_return_pointer == Some(Location::Int(0))
        && plan.stack_bytes == 0
        && plan.args.iter().flat_map(|a| &a.moves).all(|m| match m.to {
            Location::Vector(_) => matches!(
                (m.conv, m.size),
                (Conversion::Bytes, 4 | 8) | (Conversion::FloatToDouble, _)
            ),
            _ => true,
        })
}

/// The tail body: `mov r11, rcx` (the target); arguments loaded from rdi (rdi's own move
/// last); `%al`; `jmp r11`. The target returns straight to the stub's caller.
///
/// For a MEMORY-class return ([`is_memory_tail`]) `ret` (rsi) is parked in xmm14 (caller-saved,
/// not an argument register, not a scratch register of the moves) while the arguments are
/// loaded from rdi (none goes to rdi, which is the hidden pointer's), then moved into rdi.
/// Without arguments it is only `mov rdi, rsi` and `jmp rcx`.
fn compile_tail_body(a: &mut Asm, plan: &CallPlan, checks: &[ArgCheck], mode: Mode) {
    let memory = matches!(plan.ret, ReturnPlan::InMemory);
    if memory && plan.args.is_empty() {
        // No argument to load: `mov rdi, rsi` (the hidden pointer), `%al`, `jmp rcx`.
        a.mov_rr(RDI, RSI);
        if plan.is_variadic() {
            a.mov_imm32(RAX, plan.vector_registers as u32);
        }
        // jmp rcx
        a.op_reg(None, false, &[0xFF], 4, RCX);
        return;
    }
    a.mov_rr(R11, RCX);
    if memory {
        a.movq_x_r(XMM14, RSI);
    }
    emit_args(a, plan, checks, mode, RDI, !memory, &[]);
    if memory {
        a.movq_r_x(RDI, XMM14);
    }
    if plan.is_variadic() {
        a.mov_imm32(RAX, plan.vector_registers as u32);
    }
    // jmp r11
    a.op_reg(None, false, &[0xFF], 4, R11);
}

/// The leaf frame: `sub rsp, F` (16-byte aligned at the call); the target and `ret` saved in
/// the frame; arguments loaded from rdi (rdi's own move last); the hidden return pointer;
/// `call [rsp + T]`; a register-returned struct stored through `ret` reloaded into r10, or
/// `movq rax, xmm0` for a float; `add rsp, F`; `ret`.
///
/// With `capture` the frame also holds the capture buffer (rdx) and the thread's errno address
/// (r9, the `errno_location` parameter): the buffer's errno is copied into errno on entry,
/// before any argument register is loaded ("restore before": only register and stack moves
/// follow until the call, none of which can change errno), and errno is copied back into the
/// buffer right after the call, before anything else ("save after").
fn compile_leaf_body(a: &mut Asm, plan: &CallPlan, checks: &[ArgCheck], mode: Mode, capture: bool) {
    let area = plan.stack_bytes.next_multiple_of(16) as i32;
    let needs_ret = !matches!(plan.ret, ReturnPlan::Void | ReturnPlan::Scalar(_));
    let target = area;
    let ret = area + 8;
    let first_capture = if needs_ret { area + 16 } else { area + 8 };
    let (buf, loc) = (first_capture, first_capture + 8);
    let slots = 1 + needs_ret as i32 + 2 * capture as i32;
    // rsp ≡ 8 (mod 16) at entry: an odd number of 8-byte slots above the area
    let frame = area + 8 * (slots | 1);
    // sub rsp, F, probing every page of a frame of a page or more (r11 is free here)
    encode::sub_rsp_probed(a, frame, R11);
    a.store(RCX, RSP, target, 8);
    if needs_ret {
        a.store(RSI, RSP, ret, 8);
    }
    if capture {
        a.store(RDX, RSP, buf, 8);
        a.store(R9, RSP, loc, 8);
        // restore before: *errno_location = buf->errno
        a.load_zx(R11, RDX, 0, 4);
        a.store(R11, R9, 0, 4);
    }
    let copied = copied_runs(plan);
    emit_copies(a, plan, checks, mode, &copied);
    emit_args(a, plan, checks, mode, RDI, true, &copied);
    match plan.hidden_return_pointer {
        Some(Location::Int(n)) => a.load_zx(INT_ARGS[n as usize], RSP, ret, 8),
        Some(Location::Stack(off)) => {
            a.load_zx(R11, RSP, ret, 8);
            a.store(R11, RSP, off as i32, 8);
        }
        Some(Location::Vector(_)) | None => {}
    }
    if plan.is_variadic() {
        a.mov_imm32(RAX, plan.vector_registers as u32);
    }
    // call qword [rsp + target]
    a.op_mem(None, false, &[0xFF], 2, RSP, target);
    if capture {
        // save after: buf->errno = *errno_location (rax, rdx, xmm0, xmm1 untouched)
        a.load_zx(R10, RSP, loc, 8);
        a.load_zx(R11, R10, 0, 4);
        a.load_zx(R10, RSP, buf, 8);
        a.store(R11, R10, 0, 4);
    }
    match &plan.ret {
        ReturnPlan::Registers(moves) => {
            a.load_zx(R10, RSP, ret, 8);
            moves.iter().for_each(|m| emit_return_move(a, R10, m));
        }
        ReturnPlan::Scalar(Register::Vector(n)) => a.movq_r_x(RAX, *n),
        _ => {}
    }
    // add rsp, imm32
    a.op_reg(None, true, &[0x81], 0, RSP);
    a.bytes(&frame.to_le_bytes());
    a.byte(0xC3);
}

/// Compiles one entry point: the value entry's checks, then the tail, leaf or capture body.
fn compile_entry(a: &mut Asm, plan: &CallPlan, checks: &[ArgCheck], capture: bool, mode: Mode) {
    let fails = match mode {
        Mode::Values => emit_checks(a, checks),
        Mode::Raw | Mode::Slots => Vec::new(),
    };
    // The value and slots entries also tail-jump for a float return (their callers read xmm0,
    // see `super::entry` and `super::slots`); the raw entry's callers read rax, so it keeps the
    // leaf's `movq rax, xmm0`.
    let float_tail = mode != Mode::Raw
        && matches!(plan.ret, ReturnPlan::Scalar(Register::Vector(_)))
        && tail_arguments(plan);
    if !capture && (is_tail(plan) || float_tail || is_memory_tail(plan)) {
        compile_tail_body(a, plan, checks, mode);
    } else {
        compile_leaf_body(a, plan, checks, mode, capture);
    }
    emit_fail_path(a, fails);
}

/// The machine code of a stub: both entries, the raw entry at offset 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StubCode {
    /// The code bytes.
    pub bytes: Vec<u8>,
    /// Offset of the value entry.
    pub value_entry: usize,
    /// Offset of the image entry ([`has_image_entry`]), if the plan has one.
    pub image_entry: Option<usize>,
    /// Offset of the slots entry ([`has_slots_entry`]), if the plan has one.
    pub slots_entry: Option<usize>,
}

/// Compiles the stub of `plan` (`checks[i]` describes argument `i` for the value entry's
/// checks).
pub(crate) fn compile(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> StubCode {
    let mut a = Asm {
        buf: Vec::with_capacity(256 + 48 * plan.args.len()),
    };
    compile_entry(&mut a, plan, checks, capture, Mode::Raw);
    // align the second entry to 16 bytes with int3 padding
    while a.buf.len() % 16 != 0 {
        a.byte(0xCC);
    }
    let value_entry = a.buf.len();
    compile_entry(&mut a, plan, checks, capture, Mode::Values);
    let image_entry = has_image_entry(plan, capture).then(|| {
        while a.buf.len() % 16 != 0 {
            a.byte(0xCC);
        }
        let entry = a.buf.len();
        let fails = emit_checks(&mut a, checks);
        compile_tail_body(&mut a, plan, checks, Mode::Values);
        emit_fail_path(&mut a, fails);
        entry
    });
    let slots_entry = has_slots_entry(plan, checks, capture).then(|| {
        while a.buf.len() % 16 != 0 {
            a.byte(0xCC);
        }
        let entry = a.buf.len();
        compile_entry(&mut a, plan, checks, capture, Mode::Slots);
        entry
    });
    StubCode {
        bytes: a.buf,
        value_entry,
        image_entry,
        slots_entry,
    }
}

/// Whether a stub gets the **slots entry** (`linker::Arguments`): no capture, not variadic,
/// every argument a scalar, a scalar or void return. It is the value entry without the checks (the caller
/// compared the arguments' kinds with the descriptor's before calling) reading argument `i`
/// from the 8-byte slot at `args + 8 * i`; an ordinary SysV function of `(args, _, _,
/// target)` returning rax, or xmm0 for a float return (it tail-jumps where the value entry
/// does).
pub(crate) fn has_slots_entry(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> bool {
    !capture
        && !plan.is_variadic()
        && checks.iter().all(|c| matches!(c, ArgCheck::Scalar(_)))
        && matches!(plan.ret, ReturnPlan::Void | ReturnPlan::Scalar(_))
}

/// Whether a stub gets the **image entry**: a struct or union returned in registers
/// (rax/rdx/xmm0/xmm1, SysV AMD64 ABI §3.2.3), no capture, and arguments that allow a tail
/// jump ([`tail_arguments`]). The image entry is the value entry's checks followed by the tail
/// body: the target returns its register image straight to the stub's caller, which stores
/// the struct's bytes itself (see `linker::handle`, `ImageEntry`). This saves the leaf frame,
/// one call/return pair and the reload of `ret` on the most common struct-return shape.
pub(crate) fn has_image_entry(plan: &CallPlan, capture: bool) -> bool {
    !capture && matches!(plan.ret, ReturnPlan::Registers(_)) && tail_arguments(plan)
}

/// The System V stub compiler of [`CompiledStub`]: [`compile`] and the entries it lays out.
#[derive(Debug)]
pub(crate) struct Compiler;

/// The entry points of a placed System V stub (a [`Stub`] dereferences to them).
#[derive(Debug)]
pub(crate) struct Entries {
    /// The raw entry (`args` = array of argument pointers).
    pub raw: StubFn,
    /// The value entry (`args` = `&[Value]`); called through [`CheckedEntry::call`].
    pub values: CheckedEntry,
    /// The image entry ([`has_image_entry`]): as the value entry, but the target's return
    /// registers come back to the caller unchanged and `ret` is not used (called through
    /// `backend::x86_64_sysv::image`).
    pub image: Option<CheckedEntry>,
    /// The slots entry ([`has_slots_entry`]; called through `super::slots`).
    pub slots: Option<SlotsEntry>,
}

// SAFETY: `compile` emits x86-64 SysV code for the plan; the entries are the offsets it
// reports, each the start of the entry of that type (see the module documentation).
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
        // SAFETY: every offset `compile` reports lies inside the placed code (the caller's
        // contract).
        let at = |offset: usize| unsafe { base.add(offset) };
        // SAFETY: the offset is the start of a checked entry, placed for as long as the
        // entries are called (the caller's contract).
        let checked = |offset: usize| unsafe { CheckedEntry::new(at(offset)) };
        // SAFETY: the offset is the start of the slots entry (as above).
        let slots = |offset: usize| unsafe { SlotsEntry::new(at(offset)) };
        Entries {
            // SAFETY: offset 0 is the raw entry, a complete function with the `StubFn`
            // signature.
            raw: unsafe { std::mem::transmute::<*mut u8, StubFn>(base.as_ptr()) },
            values: checked(code.value_entry),
            image: code.image_entry.map(checked),
            slots: code.slots_entry.map(slots),
        }
    }
}

/// A compiled stub in the code arena ([`crate::code`]), with its entry points ([`Entries`]).
/// Immutable, `Send + Sync`. Shared through `Arc` by every handle of its signature; the stub
/// cache holds only a `Weak`, so the code is freed when the last handle drops (and the cache
/// entry with it).
pub(crate) type Stub = CompiledStub<Compiler>;

/// Compiles and maps a stub without consulting the cache (for compile-time measurements).
///
/// # Errors
/// [`crate::Error::Unsupported`] when the OS refuses executable memory.
#[cfg(any(test, feature = "internals"))]
pub(crate) fn build(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> Result<Stub> {
    Stub::build(plan, checks, capture)
}

/// The stub for this signature: a live one from the cache, or compiled and cached (see
/// `crate::code::stub_cache`). `None` when no executable memory can be had (the handle then
/// uses the trampoline).
pub(crate) fn stub_for(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> Option<Arc<Stub>> {
    Stub::cached(plan, checks, capture).ok()
}

/// Number of live stubs of this compiler in the cache (for tests of the cache).
#[cfg(test)]
pub(crate) fn cached_stubs() -> usize {
    crate::code::stub_cache::live::<Stub>()
}

#[cfg(test)]
mod tests;
