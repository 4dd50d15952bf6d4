//! The x86-64 instruction encoder shared by the System V and Win64 stub compilers: [`Asm`]
//! (the few instruction forms the stubs use, with REX/ModRM/SIB/displacement encoding), the
//! exact-size loads and stores, the conversions of an [`ArgMove`] into a GPR, an XMM register or a
//! whole 8-byte stack slot, and the stores of a [`ReturnMove`]. Pure data: it emits bytes and
//! never runs them.
//!
//! Scratch registers: rax (pieces of odd-size loads, the bool conversion), r11 (a value on its
//! way to a stack slot or an XMM register, pieces of odd-size stores) and the XMM register the
//! caller names for a float → double conversion into a GPR (SysV: xmm15; Win64: xmm5, since
//! xmm6–xmm15 are callee-saved there). Neither ABI passes arguments in rax, r11 or those XMM
//! registers, so the scratch never overwrites an argument already in place; a caller that has
//! something live in them (the SysV `%al`) sets it after the moves.
//!
//! # Invariants
//! - Every load reads exactly the bytes it names (`size` bytes at `[base + disp]`); every store
//!   writes exactly the bytes it names.
//! - Only the registers named by the caller and the scratch registers above are written.

// Compiled for the x86-64 stub compilers: the SysV one (x86-64 Linux) and the Win64 one
// (x86-64 Windows, and in tests on every host); not every helper is used by each.
#![cfg_attr(
    not(all(target_arch = "x86_64", target_os = "linux", not(miri))),
    allow(dead_code)
)]

use crate::abi::{ArgMove, Conversion, Location, Register, ReturnMove};

// Register numbers (the x86-64 encoding).
pub(crate) const RAX: u8 = 0;
pub(crate) const RCX: u8 = 1;
pub(crate) const RDX: u8 = 2;
pub(crate) const RSP: u8 = 4;
pub(crate) const RBP: u8 = 5;
pub(crate) const RSI: u8 = 6;
pub(crate) const RDI: u8 = 7;
pub(crate) const R8: u8 = 8;
pub(crate) const R9: u8 = 9;
pub(crate) const R10: u8 = 10;
pub(crate) const R11: u8 = 11;
pub(crate) const XMM14: u8 = 14;
pub(crate) const XMM15: u8 = 15;

/// A tiny x86-64 encoder for the instruction forms the stubs use.
pub(crate) struct Asm {
    /// The code emitted so far.
    pub(crate) buf: Vec<u8>,
}

impl Asm {
    pub(crate) fn byte(&mut self, b: u8) {
        self.buf.push(b);
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    fn rex(&mut self, w: bool, r: u8, b: u8, force: bool) {
        let v = 0x40 | (w as u8) << 3 | (r >> 3 & 1) << 2 | (b >> 3 & 1);
        if v != 0x40 || force {
            self.byte(v);
        }
    }

    /// ModRM (+SIB, +disp) for `[base + disp]`.
    fn modrm_mem(&mut self, reg: u8, base: u8, disp: i32) {
        let (md, n) = if disp == 0 && base & 7 != RBP {
            (0u8, 0)
        } else if i8::try_from(disp).is_ok() {
            (1, 1)
        } else {
            (2, 4)
        };
        self.byte(md << 6 | (reg & 7) << 3 | (base & 7));
        if base & 7 == RSP {
            self.byte(0x24);
        }
        self.bytes(&disp.to_le_bytes()[..n]);
    }

    /// `[prefix] [REX] opcode ModRM(reg, [base + disp])`.
    pub(crate) fn op_mem(
        &mut self,
        prefix: Option<u8>,
        w: bool,
        op: &[u8],
        reg: u8,
        base: u8,
        disp: i32,
    ) {
        if let Some(p) = prefix {
            self.byte(p);
        }
        self.rex(w, reg, base, false);
        self.bytes(op);
        self.modrm_mem(reg, base, disp);
    }

    /// `[prefix] [REX] opcode ModRM(reg, rm)` with a register operand.
    pub(crate) fn op_reg(&mut self, prefix: Option<u8>, w: bool, op: &[u8], reg: u8, rm: u8) {
        if let Some(p) = prefix {
            self.byte(p);
        }
        self.rex(w, reg, rm, false);
        self.bytes(op);
        self.byte(0xC0 | (reg & 7) << 3 | (rm & 7));
    }

    /// `mov dst, src` (64-bit).
    pub(crate) fn mov_rr(&mut self, dst: u8, src: u8) {
        self.op_reg(None, true, &[0x89], src, dst);
    }

    /// `mov dst32, imm32` (zero-extends).
    pub(crate) fn mov_imm32(&mut self, dst: u8, imm: u32) {
        self.rex(false, 0, dst, false);
        self.byte(0xB8 + (dst & 7));
        self.bytes(&imm.to_le_bytes());
    }

    /// `shl/shr r64, imm8` (`ext` 4 = shl, 5 = shr).
    pub(crate) fn shift(&mut self, ext: u8, r: u8, n: u8) {
        self.op_reg(None, true, &[0xC1], ext, r);
        self.byte(n);
    }

    /// `or dst, src` (64-bit).
    pub(crate) fn or_rr(&mut self, dst: u8, src: u8) {
        self.op_reg(None, true, &[0x09], src, dst);
    }

    /// Zero-extending load of 1, 2, 4 or 8 bytes into a GPR.
    pub(crate) fn load_zx(&mut self, dst: u8, base: u8, disp: i32, size: u8) {
        match size {
            8 => self.op_mem(None, true, &[0x8B], dst, base, disp),
            4 => self.op_mem(None, false, &[0x8B], dst, base, disp),
            2 => self.op_mem(None, false, &[0x0F, 0xB7], dst, base, disp),
            _ => self.op_mem(None, false, &[0x0F, 0xB6], dst, base, disp),
        }
    }

    /// Store of the low 1, 2, 4 or 8 bytes of a GPR.
    pub(crate) fn store(&mut self, src: u8, base: u8, disp: i32, size: u8) {
        match size {
            8 => self.op_mem(None, true, &[0x89], src, base, disp),
            4 => self.op_mem(None, false, &[0x89], src, base, disp),
            2 => self.op_mem(Some(0x66), false, &[0x89], src, base, disp),
            _ => {
                // byte store: a REX prefix selects sil/dil/r8b.. instead of ah/ch/..
                self.rex(false, src, base, src >= 4);
                self.byte(0x88);
                self.modrm_mem(src, base, disp);
            }
        }
    }

    /// `lea dst, [base + disp]` (64-bit).
    pub(crate) fn lea(&mut self, dst: u8, base: u8, disp: i32) {
        self.op_mem(None, true, &[0x8D], dst, base, disp);
    }

    /// `rep movsq`: copies `rcx` 8-byte words from `[rsi]` to `[rdi]`, upwards (the direction
    /// flag is clear at every function entry in both ABIs), leaving rsi and rdi past the
    /// words and rcx zero.
    pub(crate) fn rep_movsq(&mut self) {
        self.bytes(&[0xF3, 0x48, 0xA5]);
    }

    /// `movq xmm, r64`.
    pub(crate) fn movq_x_r(&mut self, x: u8, r: u8) {
        self.op_reg(Some(0x66), true, &[0x0F, 0x6E], x, r);
    }

    /// `movq r64, xmm`.
    pub(crate) fn movq_r_x(&mut self, r: u8, x: u8) {
        self.op_reg(Some(0x66), true, &[0x0F, 0x7E], x, r);
    }

    /// `jcc rel32` / `jmp rel32` to a label fixed up later; returns the fixup position.
    pub(crate) fn jump(&mut self, op: &[u8]) -> usize {
        self.bytes(op);
        self.bytes(&[0; 4]);
        self.buf.len() - 4
    }

    pub(crate) fn patch(&mut self, fixup: usize, target: usize) {
        let rel = (target as i64 - (fixup as i64 + 4)) as i32;
        self.buf[fixup..fixup + 4].copy_from_slice(&rel.to_le_bytes());
    }
}

/// The distance in bytes between two stack probes: one 4 KiB page, the smallest guard page
/// (Linux's default thread guard, Windows' `PAGE_GUARD` page).
pub(crate) const PROBE_INTERVAL: i32 = 4096;

/// `sub rsp, frame` touching every page of the new frame in order going down, the shape of
/// gcc's `-fstack-clash-protection` prologue: for a frame of a page or more, `counter` =
/// `frame / 4096`, then `sub rsp, 4096; or qword [rsp], 0` that many times (a loop), then
/// `sub rsp` of the rest (less than a page, so the frame's lowest byte lies within a page of a
/// touched one); a smaller frame is one `sub rsp, frame`. Every access to the frame then lies
/// within 4096 bytes below an address already touched, so a stack too small for the frame
/// faults on its guard page and nothing is ever written past it. `counter` is a scratch
/// register (clobbered); `rsp` moves with the probes, so a fault is reported at the depth of
/// the page it touches.
pub(crate) fn sub_rsp_probed(a: &mut Asm, frame: i32, counter: u8) {
    let (pages, rest) = (frame / PROBE_INTERVAL, frame % PROBE_INTERVAL);
    if pages > 0 {
        a.mov_imm32(counter, pages as u32);
        let top = a.buf.len();
        // sub rsp, 4096
        a.op_reg(None, true, &[0x81], 5, RSP);
        a.bytes(&PROBE_INTERVAL.to_le_bytes());
        // or qword [rsp], 0
        a.op_mem(None, true, &[0x83], 1, RSP, 0);
        a.byte(0);
        // dec counter; jnz top
        a.op_reg(None, true, &[0xFF], 1, counter);
        let rel = top as i64 - (a.buf.len() as i64 + 2);
        a.bytes(&[0x75, rel as i8 as u8]);
    }
    if rest > 0 || pages == 0 {
        // sub rsp, imm32
        a.op_reg(None, true, &[0x81], 5, RSP);
        a.bytes(&rest.to_le_bytes());
    }
}

/// Touches every page of the `frame` bytes below rsp in order going down, without moving rsp
/// (the shape of Windows' `__chkstk`), for a frame of a page or more; nothing for a smaller
/// one. r10 walks down from rsp a page at a time, clamped to r11 = rsp - `frame`, reading a
/// quadword at each stop (`test [r10], r10`: a read, no store) until it has read at r11:
///
/// ```text
///     mov r10, rsp ; lea r11, [rsp - frame]
/// 1:  sub r10, 4096 ; cmp r10, r11 ; cmovb r10, r11 ; test [r10], r10 ; cmp r10, r11 ; jne 1b
/// ```
///
/// Every page down to the frame's lowest byte is then committed (Windows grows a stack only
/// through its guard page, one page at a time) or, on a stack too small, the probe faults on
/// the guard page with rsp still above it (`STATUS_STACK_OVERFLOW`, reported on the
/// remaining stack); the `sub rsp, frame` that follows moves rsp over touched pages only.
/// Clobbers r10, r11 and the flags; moves no stack pointer, calls nothing, so it needs no
/// unwind information.
// The Win64 stub compiler's (on other hosts compiled for its code-shape tests only).
#[cfg_attr(not(gatun_backend = "win64"), allow(dead_code))]
pub(crate) fn probe_below_rsp(a: &mut Asm, frame: i32) {
    if frame < PROBE_INTERVAL {
        return;
    }
    a.mov_rr(R10, RSP);
    a.lea(R11, RSP, -frame);
    let top = a.buf.len();
    // sub r10, 4096
    a.op_reg(None, true, &[0x81], 5, R10);
    a.bytes(&PROBE_INTERVAL.to_le_bytes());
    // cmp r10, r11; cmovb r10, r11
    a.op_reg(None, true, &[0x39], R11, R10);
    a.op_reg(None, true, &[0x0F, 0x42], R10, R11);
    // test [r10], r10
    a.op_mem(None, true, &[0x85], R10, R10, 0);
    // cmp r10, r11; jne top
    a.op_reg(None, true, &[0x39], R11, R10);
    let rel = top as i64 - (a.buf.len() as i64 + 2);
    a.bytes(&[0x75, rel as i8 as u8]);
}

/// Loads exactly `size` bytes at `[base + disp]` into `dst` (zero-extended), using rax as
/// scratch for sizes that are not 1, 2, 4 or 8.
pub(crate) fn load_bytes(a: &mut Asm, dst: u8, base: u8, disp: i32, size: u8) {
    if matches!(size, 1 | 2 | 4 | 8) {
        return a.load_zx(dst, base, disp, size);
    }
    let mut done = 0u8;
    while done < size {
        let piece = [4u8, 2, 1]
            .into_iter()
            .find(|&p| p <= size - done)
            .unwrap_or(1);
        if done == 0 {
            a.load_zx(dst, base, disp, piece);
        } else {
            a.load_zx(RAX, base, disp + done as i32, piece);
            a.shift(4, RAX, 8 * done);
            a.or_rr(dst, RAX);
        }
        done += piece;
    }
}

/// Stores exactly the low `size` bytes of `src` at `[base + disp]`; `src` is clobbered for sizes
/// that are not 1, 2, 4 or 8.
pub(crate) fn store_bytes(a: &mut Asm, src: u8, base: u8, disp: i32, size: u8) {
    if matches!(size, 1 | 2 | 4 | 8) {
        return a.store(src, base, disp, size);
    }
    let mut done = 0u8;
    while done < size {
        let piece = [4u8, 2, 1]
            .into_iter()
            .find(|&p| p <= size - done)
            .unwrap_or(1);
        a.store(src, base, disp + done as i32, piece);
        done += piece;
        if done < size {
            a.shift(5, src, 8 * piece);
        }
    }
}

/// Converts and loads one move's source into the 64-bit GPR `dst` (`xmm_scratch`: the XMM
/// register a float → double conversion goes through).
pub(crate) fn load_gpr(a: &mut Asm, dst: u8, base: u8, disp: i32, m: &ArgMove, xmm_scratch: u8) {
    match m.conv {
        Conversion::Bytes => load_bytes(a, dst, base, disp, m.size),
        Conversion::SignExtend => match m.size {
            4 => a.op_mem(None, true, &[0x63], dst, base, disp),
            2 => a.op_mem(None, true, &[0x0F, 0xBF], dst, base, disp),
            _ => a.op_mem(None, true, &[0x0F, 0xBE], dst, base, disp),
        },
        Conversion::Bool => {
            // xor eax, eax; cmp byte [m], 0; setne al; mov dst, rax
            a.bytes(&[0x31, 0xC0]);
            a.op_mem(None, false, &[0x80], 7, base, disp);
            a.byte(0);
            a.bytes(&[0x0F, 0x95, 0xC0]);
            a.mov_rr(dst, RAX);
        }
        Conversion::FloatToDouble => {
            // cvtss2sd xmm_scratch, dword [m]; movq dst, xmm_scratch
            a.op_mem(Some(0xF3), false, &[0x0F, 0x5A], xmm_scratch, base, disp);
            a.movq_r_x(dst, xmm_scratch);
        }
    }
}

/// Carries out one argument move from `[base + disp + m.offset]`: `Location::Int(n)` is the GPR
/// `int_args[n]`, `Location::Vector(n)` is `xmmn`, `Location::Stack(off)` the whole 8-byte slot
/// at `[rsp + off]` (through r11); a float → double conversion into a GPR goes through
/// `xmm_scratch`.
pub(crate) fn emit_move(
    a: &mut Asm,
    int_args: &[u8],
    xmm_scratch: u8,
    base: u8,
    disp: i32,
    m: &ArgMove,
) {
    let disp = disp + m.offset as i32;
    match m.to {
        Location::Int(n) => load_gpr(a, int_args[n as usize], base, disp, m, xmm_scratch),
        Location::Vector(n) => match (m.conv, m.size) {
            // movq xmm, qword [m]
            (Conversion::Bytes, 8) => a.op_mem(Some(0xF3), false, &[0x0F, 0x7E], n, base, disp),
            // movd xmm, dword [m]
            (Conversion::Bytes, 4) => a.op_mem(Some(0x66), false, &[0x0F, 0x6E], n, base, disp),
            // cvtss2sd xmm, dword [m]
            (Conversion::FloatToDouble, _) => {
                a.op_mem(Some(0xF3), false, &[0x0F, 0x5A], n, base, disp)
            }
            _ => {
                load_gpr(a, R11, base, disp, m, xmm_scratch);
                a.movq_x_r(n, R11);
            }
        },
        Location::Stack(off) => {
            load_gpr(a, R11, base, disp, m, xmm_scratch);
            a.store(R11, RSP, off as i32, 8);
        }
    }
}

/// Stores one return move from its register into `[base + offset]` (`base` is not r11):
/// `Register::Int(n)` is the GPR `int_returns[n]`, `Register::Vector(n)` is `xmmn`.
pub(crate) fn emit_return_move(a: &mut Asm, int_returns: &[u8], base: u8, m: &ReturnMove) {
    let disp = m.offset as i32;
    match (m.from, m.size) {
        (Register::Int(n), 1 | 2 | 4 | 8) => a.store(int_returns[n as usize], base, disp, m.size),
        // movq qword [m], xmm
        (Register::Vector(n), 8) => a.op_mem(Some(0x66), false, &[0x0F, 0xD6], n, base, disp),
        // movd dword [m], xmm
        (Register::Vector(n), 4) => a.op_mem(Some(0x66), false, &[0x0F, 0x7E], n, base, disp),
        (from, size) => {
            match from {
                Register::Int(n) => a.mov_rr(R11, int_returns[n as usize]),
                Register::Vector(n) => a.movq_r_x(R11, n),
            }
            store_bytes(a, R11, base, disp, size);
        }
    }
}
