//! Compiled downcall stubs for the Microsoft x64 convention: per-signature machine code
//! generated from a Win64 [`CallPlan`] ([`super::classify`]) at link time, encoded by
//! `backend::x86_64_encode`. The code generation is pure data, compiled and tested for code
//! shape on every host; the placing half ([`Stub`], the cache, the unwind registration) exists
//! on x86-64 Windows only, where the executor calls it.
//!
//! # The entries
//! Both entries are Win64 functions (Rust's `extern "C"` on x86-64 Windows):
//!
//! | parameter | raw entry ([`RawFn`]) | values entry ([`ValuesFn`]) |
//! |---|---|---|
//! | 1, `rcx` | `args: *const *const u8`: argument `i`'s bytes at `args[i]` | `*const Value`: the arguments' `&[Value]` |
//! | 2, `rdx` | `ret: *mut u8`: where a struct result is written (the hidden return pointer of an in-memory result, or the store of a struct returned in `rax`) | the same |
//! | 3, `r8` | `capture: *mut i32`: the 12-byte capture buffer (`GetLastError` at 0, `WSAGetLastError` at 4, `errno` at 8; capture stubs only) | the same |
//! | 4, `r9` | the target function | the same |
//! | 5, `[rsp+40]` | `refs: *const *const u8`: the caller-made, 16-byte aligned copies of the by-reference arguments ([`ArgPlan::by_reference`](crate::abi::ArgPlan::by_reference)), one pointer each in argument order | the same |
//! | 6, `[rsp+48]` | the thread's `errno` address ([`crate::os::thread_errno`]; capture stubs only) | the same |
//! | 7, `[rsp+56]` | — | `rejected: *mut u8`: set to 1 when an argument is rejected |
//!
//! Both return the result's raw 64 bits: `rax` (a `float`/`double` result: the bits of `xmm0`;
//! an in-memory result: the address the callee returns, `ret`). A struct of 1, 2, 4 or 8 bytes
//! returned in `rax` is stored at `ret` by the plan's [`ReturnMove`], exactly its size.
//!
//! The values entry first checks every argument, before anything else: the tag byte of
//! `Value` `i` (at `24 i`, [`VALUE_STRIDE`]) against the scalar kind's variant
//! ([`ArgCheck::Scalar`]), or against `Value::Segment` and the segment's length (payload at
//! [`VALUE_PAYLOAD`]) against the struct's size ([`ArgCheck::Group`]), by-reference arguments
//! included. On a mismatch it writes 1 to `*rejected` and returns 0 at once: nothing has been
//! read beyond the `Value`s, nothing written or called. On the normal path `*rejected` is not
//! written (the caller initialises it to 0), so the entry is callable from plain Rust.
//!
//! # The bodies
//! After the checks, one of two bodies (no allocation, no classification, no branches):
//! - **tail** (no capture, nothing on the stack beyond the shadow space, a void or integer
//!   result, no hidden return pointer and no by-reference argument): the target goes to r11,
//!   the argument moves are carried out (the move into `rcx`, which holds `args`, last), and
//!   `jmp r11`. The caller's shadow space is the target's; the target returns straight to the
//!   stub's caller.
//! - **framed**: `sub rsp, F` with `F` = the plan's stack area ([`CallPlan::stack_bytes`],
//!   shadow space included, up to [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES))
//!   rounded up to 16, plus 8, so `rsp` is 16-byte aligned at the call. For `F` of a page
//!   (4096 bytes) or more, every page below rsp down to `rsp - F` is read first, in order
//!   going down, without moving rsp (`__chkstk`'s way, `encode::probe_below_rsp`): Windows
//!   commits a stack only through its guard page, one page at a time, so the area's pages are
//!   committed before the `sub`, and a stack too small for the call ends in
//!   `STATUS_STACK_OVERFLOW` with rsp still above the fault, never a write past the guard.
//!   The stub keeps what it needs after the moves in its caller's shadow space (the home slots
//!   of `rcx`, `rdx`, `r8`, `r9`, which belong to the callee): `args`, `ret`, `capture` and the
//!   target. Then the argument moves (stack arguments at `[rsp + 32 + 8k]`, written whole; a
//!   by-reference argument's location receives `refs[j]`; a variadic float is in both its XMM
//!   register and its GPR, the plan's two moves), the hidden return pointer (`ret`) into
//!   `rcx`, `call [home slot of r9]`, the result (`movq rax, xmm0` for a float; a struct
//!   returned in `rax` stored through `ret`), `add rsp, F; ret`.
//!
//! **Capture** (framed): the buffer's states are restored right after the frame is made —
//! `*errno_location = buf[2]`, `WSASetLastError(buf[1])`, `SetLastError(buf[0])` last — and
//! before the argument moves, which are plain register and memory moves and cannot change a
//! thread's error states; the call follows them. Right after the call, before anything else,
//! the result register is parked in a home slot and `buf[0] = GetLastError()`,
//! `buf[1] = WSAGetLastError()`, `buf[2] = *errno_location` are saved. The four functions are
//! called through their absolute addresses, kept in a literal pool after the code
//! (`call [rip + d]`; [`CaptureFns`]).
//!
//! # Unwind information
//! A framed entry is a function in Windows' sense: the code from its `sub rsp, F` to its `ret`
//! is described by a `RUNTIME_FUNCTION` whose `UNWIND_INFO` (version 1, no frame register, no
//! handler) has the one prologue code `UWOP_ALLOC_SMALL` (F ≤ 128) or `UWOP_ALLOC_LARGE` (F / 8
//! in the next slot up to 512 KiB - 8, else F in the next two); both entries of a stub share
//! one `UNWIND_INFO`. The checks and the stack probe before the `sub`, the rejection path and
//! the tail body move no stack pointer and call nothing, so they need none (Windows unwinds
//! code without an entry as a leaf). The table lives after the code
//! in the same allocation ([`StubCode::function_table`]); the code module registers it with
//! `RtlAddFunctionTable` when the stub is placed and deletes it before the memory is freed.
//!
//! # Invariants
//! - The stub reads only `args[..n]` (raw) or the `n` `Value`s (values), the argument bytes
//!   the plan names (exactly each move's size, never past an argument), `refs[..by-reference
//!   arguments]`, `capture[..3]` and `*errno_location` (capture stubs), its parameters and its
//!   own frame; it writes only the argument registers, its frame and outgoing stack area, its
//!   caller's shadow space (the home slots, which the convention gives to the callee), the
//!   return layout's bytes at `ret` (exactly the move's size), `capture[..3]` and
//!   `*errno_location` (capture stubs), and `*rejected` (values entry, on a mismatch only).
//! - Scratch registers are volatile ones that are not the argument registers being built: rax,
//!   r10, r11 and xmm5 (r10 and r11 also walk the stack probe, before the frame is made). No nonvolatile register (rbx, rbp, rdi, rsi, r12–r15, xmm6–xmm15) is
//!   ever written; `rsp` moves only in the framed body's prologue and epilogue, which the
//!   unwind information describes.
//! - Offsets come from a plan the classifier accepted: the stack area is at most
//!   [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES) bytes, so every displacement fits in
//!   32 bits and `F` in `UWOP_ALLOC_LARGE`'s 32-bit size.

// Off x86-64 Windows this module is compiled for its code-generation tests only.
#![cfg_attr(not(gatun_backend = "win64"), allow(dead_code))]

use std::ffi::c_void;

use crate::abi::kinds::segment_tag;
use crate::abi::{ArgMove, CallPlan, Location, Register, ReturnPlan};
use crate::backend::x86_64_encode::{self as encode, Asm, R10, R11, R8, R9, RAX, RCX, RDX, RSP};
pub(crate) use crate::backend::ArgCheck;
use crate::memory::MemorySegment;
use crate::value::{scalar_tag, Value};

pub(crate) use crate::backend::{VALUE_PAYLOAD, VALUE_STRIDE};

// The raw entry's signature is the by-reference backends' one (used where the stub is placed).
#[cfg_attr(not(gatun_backend = "win64"), allow(unused_imports))]
pub(crate) use crate::backend::RawFn;

/// The values entry's signature (see the module documentation): `*rejected` is set to 1 when
/// an argument is rejected (nothing called), and left alone otherwise.
pub(crate) type ValuesFn = unsafe extern "C" fn(
    values: *const Value<'_>,
    ret: *mut u8,
    capture: *mut i32,
    target: *const c_void,
    refs: *const *const u8,
    errno_location: *mut i32,
    rejected: *mut u8,
) -> u64;

/// Win64 integer argument registers of the four slots.
const INT_ARGS: [u8; 4] = [RCX, RDX, R8, R9];
/// The integer return register.
const INT_RETURNS: [u8; 1] = [RAX];
/// The float → double scratch for a GPR destination: volatile, not an argument register.
const XMM5: u8 = 5;

// Stack offsets of the parameters at entry (`rsp` at the first instruction; the return address
// is at 0, the home slots of the four register parameters at 8..40).
const HOME_ARGS: i32 = 8;
const HOME_RET: i32 = 16;
const HOME_CAPTURE: i32 = 24;
const HOME_TARGET: i32 = 32;
const PARAM_REFS: i32 = 40;
const PARAM_ERRNO: i32 = 48;
const PARAM_REJECTED: i32 = 56;

/// The addresses of the four functions a capture stub calls (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CaptureFns {
    /// `SetLastError(DWORD)` (kernel32).
    pub set_last_error: u64,
    /// `WSASetLastError(int)` (ws2_32).
    pub wsa_set_last_error: u64,
    /// `GetLastError() -> DWORD` (kernel32).
    pub get_last_error: u64,
    /// `WSAGetLastError() -> int` (ws2_32).
    pub wsa_get_last_error: u64,
}

impl CaptureFns {
    /// The addresses of this process's functions.
    #[cfg(gatun_backend = "win64")]
    pub(crate) fn native() -> CaptureFns {
        use super::last_error::{GetLastError, SetLastError, WSAGetLastError, WSASetLastError};
        CaptureFns {
            set_last_error: SetLastError as *const () as usize as u64,
            wsa_set_last_error: WSASetLastError as *const () as usize as u64,
            get_last_error: GetLastError as *const () as usize as u64,
            wsa_get_last_error: WSAGetLastError as *const () as usize as u64,
        }
    }

    /// The pool's entries in order.
    fn pool(&self) -> [u64; 4] {
        [
            self.set_last_error,
            self.wsa_set_last_error,
            self.get_last_error,
            self.wsa_get_last_error,
        ]
    }
}

/// Index of each function in the literal pool.
#[derive(Clone, Copy)]
enum Pooled {
    /// `SetLastError`.
    Set = 0,
    /// `WSASetLastError`.
    WsaSet = 1,
    /// `GetLastError`.
    Get = 2,
    /// `WSAGetLastError`.
    WsaGet = 3,
}

/// How an entry finds argument bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Values,
    Raw,
}

/// The code being built: the encoder and the `call [rip + d]` fixups into the literal pool.
struct Builder {
    a: Asm,
    pool_fixups: Vec<(usize, Pooled)>,
}

/// Where argument `i`'s bytes are: `(base register, displacement)`, loading the argument's
/// pointer into r10 where needed (`args` is in rcx).
fn arg_source(a: &mut Asm, mode: Mode, i: usize, check: ArgCheck) -> (u8, i32) {
    match mode {
        Mode::Raw => {
            // mov r10, [rcx + 8i]
            a.load_zx(R10, RCX, 8 * i as i32, 8);
            (R10, 0)
        }
        Mode::Values => {
            let slot = VALUE_STRIDE * i as i32;
            match check {
                ArgCheck::Scalar(_) => (RCX, slot + VALUE_PAYLOAD),
                ArgCheck::Group(_) => {
                    let ptr = slot + VALUE_PAYLOAD + MemorySegment::PTR_OFFSET as i32;
                    a.load_zx(R10, RCX, ptr, 8);
                    (R10, 0)
                }
            }
        }
    }
}

/// Writes the by-reference pointer `refs[j]` to `to` (`refs_at`: `refs`' stack offset now).
fn emit_ref(a: &mut Asm, j: usize, to: Location, refs_at: i32) {
    a.load_zx(R11, RSP, refs_at, 8);
    match to {
        Location::Int(n) => a.load_zx(INT_ARGS[n as usize], R11, 8 * j as i32, 8),
        Location::Stack(off) => {
            a.load_zx(R11, R11, 8 * j as i32, 8);
            a.store(R11, RSP, off as i32, 8);
        }
        // the classifier passes a reference in a GPR or a stack slot only
        Location::Vector(_) => {}
    }
}

/// What is deferred until every other move is done: the move into rcx (which holds `args`).
enum Deferred {
    Move(usize, ArgCheck, ArgMove),
    Ref(usize, Location),
}

/// Emits every argument move, the ones into rcx last (`refs_at`: `refs`' stack offset now).
fn emit_args(a: &mut Asm, plan: &CallPlan, checks: &[ArgCheck], mode: Mode, refs_at: i32) {
    let into_rcx = |l: Location| l == Location::Int(0);
    let mut deferred = None;
    let mut j = 0;
    for (i, (ap, check)) in plan.args.iter().zip(checks).enumerate() {
        if let Some(to) = ap.by_reference {
            if into_rcx(to) {
                deferred = Some(Deferred::Ref(j, to));
            } else {
                emit_ref(a, j, to, refs_at);
            }
            j += 1;
            continue;
        }
        let mut source = None;
        for m in &ap.moves {
            if into_rcx(m.to) {
                deferred = Some(Deferred::Move(i, *check, *m));
                continue;
            }
            let (base, disp) = *source.get_or_insert_with(|| arg_source(a, mode, i, *check));
            encode::emit_move(a, &INT_ARGS, XMM5, base, disp, m);
        }
    }
    match deferred {
        Some(Deferred::Move(i, check, m)) => {
            let (base, disp) = arg_source(a, mode, i, check);
            encode::emit_move(a, &INT_ARGS, XMM5, base, disp, &m);
        }
        Some(Deferred::Ref(j, to)) => emit_ref(a, j, to, refs_at),
        None => {}
    }
}

/// The values entry's checks, first thing in the entry (nothing is clobbered yet, so a
/// failure can return at once): every argument's tag byte, and each struct segment's length.
/// Returns the failure jumps.
fn emit_checks(a: &mut Asm, checks: &[ArgCheck]) -> Vec<usize> {
    let mut fails = Vec::new();
    for (i, check) in checks.iter().enumerate() {
        let slot = VALUE_STRIDE * i as i32;
        let tag = match check {
            ArgCheck::Scalar(k) => scalar_tag(*k),
            ArgCheck::Group(_) => segment_tag(),
        };
        // cmp byte [rcx + slot], tag; jne fail
        a.op_mem(None, false, &[0x80], 7, RCX, slot);
        a.byte(tag);
        fails.push(a.jump(&[0x0F, 0x85]));
        if let ArgCheck::Group(size) = check {
            let len = slot + VALUE_PAYLOAD + MemorySegment::LEN_OFFSET as i32;
            // cmp qword [rcx + len], size; jb fail
            a.op_mem(None, true, &[0x81], 7, RCX, len);
            a.bytes(&size.to_le_bytes());
            fails.push(a.jump(&[0x0F, 0x82]));
        }
    }
    fails
}

/// The rejection path of the values entry: `*rejected = 1`, return 0. Runs at the entry's
/// stack depth (no frame yet).
fn emit_fail_path(a: &mut Asm, fails: Vec<usize>) {
    if fails.is_empty() {
        return;
    }
    let fail = a.buf.len();
    for f in fails {
        a.patch(f, fail);
    }
    // mov rax, [rsp + 56]; mov byte [rax], 1; xor eax, eax; ret
    a.load_zx(RAX, RSP, PARAM_REJECTED, 8);
    a.op_mem(None, false, &[0xC6], 0, RAX, 0);
    a.byte(1);
    a.bytes(&[0x31, 0xC0, 0xC3]);
}

/// Whether a plan takes the tail body without capture (see the module documentation).
fn is_tail(plan: &CallPlan) -> bool {
    matches!(
        plan.ret,
        ReturnPlan::Void | ReturnPlan::Scalar(Register::Int(_))
    ) && plan.stack_bytes <= super::classify::SHADOW_SPACE_BYTES
        && plan.hidden_return_pointer.is_none()
        && plan.args.iter().all(|a| a.by_reference.is_none())
}

/// The tail body: `mov r11, r9` (the target); the argument moves (rcx's last); `jmp r11`.
fn compile_tail_body(a: &mut Asm, plan: &CallPlan, checks: &[ArgCheck], mode: Mode) {
    a.mov_rr(R11, R9);
    // no by-reference arguments in a tail plan: `refs` is never read
    emit_args(a, plan, checks, mode, PARAM_REFS);
    // jmp r11
    a.op_reg(None, false, &[0xFF], 4, R11);
}

/// The framed body's frame size: the stack area rounded up to 16, plus 8 (`rsp` ≡ 8 mod 16
/// at entry, 0 at the call).
pub(crate) fn frame_bytes(plan: &CallPlan) -> i32 {
    let area = plan.stack_bytes.max(super::classify::SHADOW_SPACE_BYTES);
    area.next_multiple_of(16) as i32 + 8
}

/// Emits `call [rip + pool entry]` (patched when the pool is placed).
fn call_pooled(b: &mut Builder, f: Pooled) {
    let fixup = b.a.jump(&[0xFF, 0x15]);
    b.pool_fixups.push((fixup, f));
}

/// The framed body; returns `(offset of the sub, offset after the ret)`.
fn compile_framed_body(
    b: &mut Builder,
    plan: &CallPlan,
    checks: &[ArgCheck],
    mode: Mode,
    capture: bool,
) -> (usize, usize) {
    let f = frame_bytes(plan);
    // A frame of a page or more: its pages touched first, at the entry's depth (rsp unmoved,
    // so outside the unwind range, like the checks).
    encode::probe_below_rsp(&mut b.a, f);
    let begin = b.a.buf.len();
    // sub rsp, imm32 (the prologue: `UWOP_ALLOC_*` of F)
    b.a.op_reg(None, true, &[0x81], 5, RSP);
    b.a.bytes(&f.to_le_bytes());
    debug_assert_eq!(b.a.buf.len() - begin, PROLOGUE_BYTES as usize);
    let needs_ret =
        plan.hidden_return_pointer.is_some() || matches!(plan.ret, ReturnPlan::Registers(_));
    if capture {
        b.a.store(RCX, RSP, f + HOME_ARGS, 8);
    }
    if needs_ret {
        b.a.store(RDX, RSP, f + HOME_RET, 8);
    }
    if capture {
        b.a.store(R8, RSP, f + HOME_CAPTURE, 8);
    }
    b.a.store(R9, RSP, f + HOME_TARGET, 8);
    if capture {
        // restore before: errno, then the Winsock error, then the last error (last)
        // mov eax, [r8 + 8]; mov r10, [rsp + F + 48]; mov [r10], eax
        b.a.load_zx(RAX, R8, 8, 4);
        b.a.load_zx(R10, RSP, f + PARAM_ERRNO, 8);
        b.a.store(RAX, R10, 0, 4);
        // mov ecx, [r8 + 4]; call WSASetLastError
        b.a.load_zx(RCX, R8, 4, 4);
        call_pooled(b, Pooled::WsaSet);
        // mov r8, [rsp + F + 24]; mov ecx, [r8]; call SetLastError
        b.a.load_zx(R8, RSP, f + HOME_CAPTURE, 8);
        b.a.load_zx(RCX, R8, 0, 4);
        call_pooled(b, Pooled::Set);
        // mov rcx, [rsp + F + 8]: `args` again
        b.a.load_zx(RCX, RSP, f + HOME_ARGS, 8);
    }
    emit_args(&mut b.a, plan, checks, mode, f + PARAM_REFS);
    if let Some(Location::Int(n)) = plan.hidden_return_pointer {
        b.a.load_zx(INT_ARGS[n as usize], RSP, f + HOME_RET, 8);
    }
    // call qword [rsp + F + 32]
    b.a.op_mem(None, false, &[0xFF], 2, RSP, f + HOME_TARGET);
    let float = matches!(plan.ret, ReturnPlan::Scalar(Register::Vector(_)));
    if capture {
        // save after, before anything else: the result parked in the home slot of `args`
        if float {
            // movq qword [rsp + F + 8], xmm0
            b.a.op_mem(Some(0x66), false, &[0x0F, 0xD6], 0, RSP, f + HOME_ARGS);
        } else {
            b.a.store(RAX, RSP, f + HOME_ARGS, 8);
        }
        call_pooled(b, Pooled::Get);
        // mov rcx, [rsp + F + 24]; mov [rcx], eax
        b.a.load_zx(RCX, RSP, f + HOME_CAPTURE, 8);
        b.a.store(RAX, RCX, 0, 4);
        call_pooled(b, Pooled::WsaGet);
        // mov rcx, [rsp + F + 24]; mov [rcx + 4], eax
        b.a.load_zx(RCX, RSP, f + HOME_CAPTURE, 8);
        b.a.store(RAX, RCX, 4, 4);
        // mov r10, [rsp + F + 48]; mov eax, [r10]; mov [rcx + 8], eax
        b.a.load_zx(R10, RSP, f + PARAM_ERRNO, 8);
        b.a.load_zx(RAX, R10, 0, 4);
        b.a.store(RAX, RCX, 8, 4);
        // the result's bits back in rax
        b.a.load_zx(RAX, RSP, f + HOME_ARGS, 8);
    } else if float {
        b.a.movq_r_x(RAX, 0);
    }
    if let ReturnPlan::Registers(moves) = &plan.ret {
        b.a.load_zx(R10, RSP, f + HOME_RET, 8);
        for m in moves {
            encode::emit_return_move(&mut b.a, &INT_RETURNS, R10, m);
        }
    }
    // add rsp, imm32; ret (the epilogue form Windows' unwinder recognises)
    b.a.op_reg(None, true, &[0x81], 0, RSP);
    b.a.bytes(&f.to_le_bytes());
    b.a.byte(0xC3);
    (begin, b.a.buf.len())
}

/// Length in bytes of the framed body's prologue (`sub rsp, imm32`).
const PROLOGUE_BYTES: u8 = 7;

/// Compiles one entry: the values entry's checks, then the tail or framed body. Returns the
/// framed body's range, if it has one.
fn compile_entry(
    b: &mut Builder,
    plan: &CallPlan,
    checks: &[ArgCheck],
    capture: bool,
    mode: Mode,
) -> Option<(usize, usize)> {
    let fails = match mode {
        Mode::Values => emit_checks(&mut b.a, checks),
        Mode::Raw => Vec::new(),
    };
    let framed = if !capture && is_tail(plan) {
        compile_tail_body(&mut b.a, plan, checks, mode);
        None
    } else {
        Some(compile_framed_body(b, plan, checks, mode, capture))
    };
    emit_fail_path(&mut b.a, fails);
    framed
}

/// The machine code of a stub: both entries, the literal pool of a capture stub, and the
/// unwind information of a framed one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StubCode {
    /// The bytes (code, pool, `UNWIND_INFO`, `RUNTIME_FUNCTION`s).
    pub bytes: Vec<u8>,
    /// Offset of the raw entry (0).
    pub raw: usize,
    /// Offset of the values entry.
    pub values: usize,
    /// End of the instructions (the pool and the unwind data follow).
    pub code_end: usize,
    /// `(offset, count)` of the `RUNTIME_FUNCTION` table (4-aligned, 12 bytes per entry, RVAs
    /// relative to the start of `bytes`); `None` for a tail stub.
    pub function_table: Option<(usize, usize)>,
}

/// `UWOP_ALLOC_LARGE`: with operation info 0 the size / 8 in the next slot (up to 512 KiB - 8),
/// with operation info 1 the size itself in the next two slots.
const UWOP_ALLOC_LARGE: u8 = 1;
/// `UWOP_ALLOC_SMALL` (size = 8 × info + 8, for 8..=128 bytes).
const UWOP_ALLOC_SMALL: u8 = 2;

/// The `UNWIND_INFO` of a framed entry with frame `f` bytes (padded to a whole number of
/// 4-byte units): version 1, no flags, prologue [`PROLOGUE_BYTES`], no frame register, one
/// allocation code at the end of the prologue.
pub(crate) fn unwind_info(f: i32) -> Vec<u8> {
    let mut codes: Vec<[u8; 2]> = if f <= 128 {
        vec![[
            PROLOGUE_BYTES,
            UWOP_ALLOC_SMALL | (((f - 8) / 8) as u8) << 4,
        ]]
    } else if let Ok(slots) = u16::try_from(f / 8) {
        vec![[PROLOGUE_BYTES, UWOP_ALLOC_LARGE], slots.to_le_bytes()]
    } else {
        let [a, b, c, d] = (f as u32).to_le_bytes();
        vec![[PROLOGUE_BYTES, UWOP_ALLOC_LARGE | 1 << 4], [a, b], [c, d]]
    };
    let count = codes.len() as u8;
    if codes.len() % 2 == 1 {
        codes.push([0, 0]);
    }
    let mut out = vec![1, PROLOGUE_BYTES, count, 0];
    out.extend(codes.iter().flatten());
    out
}

/// Compiles the stub of `plan` (`checks[i]` describes argument `i` for the values entry's
/// checks; `checks.len() == plan.args.len()`), calling `fns` for a capture stub.
pub(crate) fn compile(
    plan: &CallPlan,
    checks: &[ArgCheck],
    capture: bool,
    fns: &CaptureFns,
) -> StubCode {
    debug_assert_eq!(checks.len(), plan.args.len());
    let mut b = Builder {
        a: Asm {
            buf: Vec::with_capacity(256 + 48 * plan.args.len()),
        },
        pool_fixups: Vec::new(),
    };
    let raw_range = compile_entry(&mut b, plan, checks, capture, Mode::Raw);
    // the values entry 16-byte aligned, int3 padding
    while b.a.buf.len() % 16 != 0 {
        b.a.byte(0xCC);
    }
    let values = b.a.buf.len();
    let values_range = compile_entry(&mut b, plan, checks, capture, Mode::Values);
    let code_end = b.a.buf.len();
    if !b.pool_fixups.is_empty() {
        while b.a.buf.len() % 8 != 0 {
            b.a.byte(0xCC);
        }
        let pool = b.a.buf.len();
        for addr in fns.pool() {
            b.a.bytes(&addr.to_le_bytes());
        }
        for (fixup, f) in std::mem::take(&mut b.pool_fixups) {
            b.a.patch(fixup, pool + 8 * f as usize);
        }
    }
    let ranges: Vec<(usize, usize)> = [raw_range, values_range].into_iter().flatten().collect();
    let function_table = (!ranges.is_empty()).then(|| {
        while b.a.buf.len() % 4 != 0 {
            b.a.byte(0xCC);
        }
        let info = b.a.buf.len() as u32;
        b.a.bytes(&unwind_info(frame_bytes(plan)));
        let table = b.a.buf.len();
        for (begin, end) in &ranges {
            for rva in [*begin as u32, *end as u32, info] {
                b.a.bytes(&rva.to_le_bytes());
            }
        }
        (table, ranges.len())
    });
    StubCode {
        bytes: b.a.buf,
        raw: 0,
        values,
        code_end,
        function_table,
    }
}

#[cfg(gatun_backend = "win64")]
pub(crate) use placed::*;

/// The placing and calling half: x86-64 Windows only.
#[cfg(gatun_backend = "win64")]
mod placed {
    use std::ptr::NonNull;
    use std::sync::Arc;

    use super::*;
    use crate::code::compiled::{CompiledStub, StubCompiler};
    use crate::error::Result;

    /// The Win64 stub compiler of [`CompiledStub`]: [`compile`] with this process's
    /// [`CaptureFns`], the entries and the function table it lays out.
    #[derive(Debug)]
    pub(crate) struct Compiler;

    /// The entry points of a placed Win64 stub (a [`Stub`] dereferences to them).
    #[derive(Debug)]
    pub(crate) struct Entries {
        /// The raw entry.
        pub raw: RawFn,
        /// The values entry.
        pub values: ValuesFn,
    }

    // SAFETY: `compile` emits Win64 code for the plan, with the raw entry at `raw` and the
    // values entry at `values`, and the function table describing its framed entries (see
    // the module documentation).
    unsafe impl StubCompiler for Compiler {
        type Code = StubCode;
        type Entries = Entries;

        fn compile(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> StubCode {
            compile(plan, checks, capture, &CaptureFns::native())
        }

        fn bytes(code: &StubCode) -> &[u8] {
            &code.bytes
        }

        fn function_table(code: &StubCode) -> Option<(usize, usize)> {
            code.function_table
        }

        unsafe fn entries(code: &StubCode, base: NonNull<u8>) -> Entries {
            let at = |offset: usize| base.as_ptr().wrapping_add(offset);
            // SAFETY: `code.raw` and `code.values` are the starts of complete functions with
            // these signatures inside the placed code, which outlives the entries (the
            // caller's contract).
            unsafe {
                Entries {
                    raw: std::mem::transmute::<*mut u8, RawFn>(at(code.raw)),
                    values: std::mem::transmute::<*mut u8, ValuesFn>(at(code.values)),
                }
            }
        }
    }

    /// A compiled stub in its executable region ([`crate::code`]), with its entries
    /// ([`Entries`]) and its function table registered. Immutable, `Send + Sync`; shared
    /// through `Arc` by every handle of its signature (the cache holds a `Weak`, so the code
    /// is freed with the last handle).
    pub(crate) type Stub = CompiledStub<Compiler>;

    /// Compiles and places a stub without consulting the cache.
    ///
    /// # Errors
    /// As `ExecutableCode::with_function_table`: [`crate::Error::Unsupported`] when the OS
    /// refuses executable memory or the function table.
    #[cfg(any(test, feature = "internals"))]
    pub(crate) fn build(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> Result<Stub> {
        Stub::build(plan, checks, capture)
    }

    /// The stub for this signature: a live one from the cache, or compiled, placed and cached
    /// (see `crate::code::stub_cache`).
    ///
    /// # Errors
    /// As [`build`].
    pub(crate) fn stub_for(
        plan: &CallPlan,
        checks: &[ArgCheck],
        capture: bool,
    ) -> Result<Arc<Stub>> {
        Stub::cached(plan, checks, capture)
    }

    /// Number of live stubs of this compiler in the cache (for tests of the cache).
    #[cfg(test)]
    pub(crate) fn cached_stubs() -> usize {
        crate::code::stub_cache::live::<Stub>()
    }
}

// Not under Miri: the code-shape tests decode with iced-x86, whose decoder breaks Stacked
// Borrows (a retag in its opcode handlers); the compiler itself is safe code.
#[cfg(all(test, not(miri)))]
mod tests;
