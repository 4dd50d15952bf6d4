//! The x86-64 System V upcall entry (hand-written assembly) and the per-stub code in front of it.
//!
//! A stub's own code is 27 bytes in an [`crate::code::ExecutableCode`] (the code arena):
//!
//! ```text
//! endbr64
//! movabs r10, <context>          ; the stub's context, which starts with its UpcallHeader
//!                                ; (r10: SysV's static-chain register)
//! movabs r11, gatun_upcall_entry
//! jmp r11
//! ```
//!
//! r10 and r11 are scratch registers that carry no argument (SysV §3.2.3), so the caller's
//! argument registers and stack reach `gatun_upcall_entry` untouched. The entry is shared by
//! every stub.
//!
//! A stub whose context has an integer-register path (`super::shape::int_register_args`:
//! every argument is a scalar in integer argument register `i` for argument `i`, at most five,
//! and the return is `void` or in rax) has no entry here: it is a [`typed_stub_code`] stub that
//! puts the context in the integer argument register after the last argument and jumps
//! straight to the Rust dispatcher, an `extern "C" fn(a0, .., context) -> u64`. A typed stub
//! (`UpcallEntries::free_register`) is the same code jumping to its trampoline.
//!
//! A stub whose context has a register-shape path (`super::shape::register_shape`: every
//! argument in argument registers, the result `void` or in rax/rdx/xmm0/xmm1) jumps to the
//! shape entry for the integer and vector argument registers its signature uses, rounded up to
//! 0, 2, 4 or 6 and 0, 2, 4 or 8, `gatun_upcall_entry_g<g>v<v>`: it reserves an
//! [`UpcallFrame`] (no frame pointer, no stack-argument address: such a signature has none),
//! stores those registers only, calls the header's shape dispatcher
//! ([`UpcallHeader::shape_dispatch`], at offset 8) with `(header = r10, frame = rsp)` and loads
//! rax, rdx, xmm0, xmm1 from the frame's return slots.
//!
//! The general entry:
//! 1. pushes rbp (the stack is then 16-byte aligned) and reserves an [`UpcallFrame`];
//! 2. stores rdi..r9, the low 64 bits of xmm0..xmm7 and the address of the caller's first
//!    stack argument (`rbp + 16`) into the frame;
//! 3. calls the header's dispatcher ([`UpcallHeader::dispatch`], at offset 0) with
//!    `(header = r10, frame = rsp)`;
//! 4. loads rax, rdx, xmm0, xmm1 from the frame's return slots, restores rsp/rbp and returns to
//!    the C caller. Callee-saved registers (rbx, r12..r15) are preserved by the dispatcher,
//!    which is an ordinary `extern "C"` function.
//!
//! The frame is the backend-neutral [`UpcallFrame`]: rdi..r9 fill `gpr[0..6]`,
//! xmm0..xmm7 `vector`, and rax, rdx, xmm0, xmm1 come from `ret_int` and `ret_vector[0..2]`.
//!
//! Invariant: the offsets used below are those of [`UpcallFrame`] (0..192) and
//! [`UpcallHeader`] (0, 8), asserted next to their definitions.

use super::SysV;
use crate::abi::CallPlan;
#[cfg(doc)]
use crate::backend::upcall::UpcallFrame;
use crate::backend::upcall::{
    RegisterShape, UpcallArgKind, UpcallEntries, UpcallHeader, UpcallRetKind,
};
use crate::code::ExecutableCode;
use crate::error::Result;
use crate::layout::FunctionDescriptor;
use crate::value::Value;

std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl gatun_upcall_entry",
    ".hidden gatun_upcall_entry",
    ".type gatun_upcall_entry,@function",
    "gatun_upcall_entry:",
    ".cfi_startproc",
    "endbr64",
    "push rbp",
    ".cfi_def_cfa_offset 16",
    ".cfi_offset rbp, -16",
    "mov rbp, rsp",
    ".cfi_def_cfa_register rbp",
    "sub rsp, 192",
    "mov qword ptr [rsp], rdi",
    "mov qword ptr [rsp + 8], rsi",
    "mov qword ptr [rsp + 16], rdx",
    "mov qword ptr [rsp + 24], rcx",
    "mov qword ptr [rsp + 32], r8",
    "mov qword ptr [rsp + 40], r9",
    "movq qword ptr [rsp + 72], xmm0",
    "movq qword ptr [rsp + 80], xmm1",
    "movq qword ptr [rsp + 88], xmm2",
    "movq qword ptr [rsp + 96], xmm3",
    "movq qword ptr [rsp + 104], xmm4",
    "movq qword ptr [rsp + 112], xmm5",
    "movq qword ptr [rsp + 120], xmm6",
    "movq qword ptr [rsp + 128], xmm7",
    "lea rax, [rbp + 16]",
    "mov qword ptr [rsp + 136], rax",
    "mov rdi, r10",
    "mov rsi, rsp",
    "call qword ptr [r10]",
    "mov rax, qword ptr [rsp + 144]",
    "mov rdx, qword ptr [rsp + 152]",
    "movq xmm0, qword ptr [rsp + 160]",
    "movq xmm1, qword ptr [rsp + 168]",
    "leave",
    ".cfi_def_cfa rsp, 8",
    "ret",
    ".cfi_endproc",
    ".size gatun_upcall_entry, . - gatun_upcall_entry",
);

/// A register-shape entry: stores the integer argument registers `$g`.. and vector argument
/// registers `$v`.. given as `$store`s into an [`UpcallFrame`] at rsp (200 bytes reserved: the
/// frame and 8 bytes that align the stack at the call), calls the word at r10 + 8 (the header's
/// shape dispatcher) with `(header = r10, frame = rsp)`, and returns rax,
/// rdx, xmm0, xmm1 from the frame's return slots.
macro_rules! shape_entry {
    ($g:literal, $v:literal, [$($store:literal),*]) => {
        std::arch::global_asm!(
            ".text",
            ".p2align 4",
            concat!(".globl gatun_upcall_entry_g", $g, "v", $v),
            concat!(".hidden gatun_upcall_entry_g", $g, "v", $v),
            concat!(".type gatun_upcall_entry_g", $g, "v", $v, ",@function"),
            concat!("gatun_upcall_entry_g", $g, "v", $v, ":"),
            ".cfi_startproc",
            "endbr64",
            "sub rsp, 200",
            ".cfi_adjust_cfa_offset 200",
            $($store,)*
            "mov rdi, r10",
            "mov rsi, rsp",
            "call qword ptr [r10 + 8]",
            "mov rax, qword ptr [rsp + 144]",
            "mov rdx, qword ptr [rsp + 152]",
            "movq xmm0, qword ptr [rsp + 160]",
            "movq xmm1, qword ptr [rsp + 168]",
            "add rsp, 200",
            ".cfi_adjust_cfa_offset -200",
            "ret",
            ".cfi_endproc",
            concat!(".size gatun_upcall_entry_g", $g, "v", $v, ", . - gatun_upcall_entry_g", $g, "v", $v),
        );
    };
}

/// The four shape entries for `$g` integer registers, `[$gstore]` storing them.
macro_rules! shape_entries {
    ($g:literal, [$($gstore:literal),*]) => {
        shape_entry!($g, 0, [$($gstore),*]);
        shape_entry!($g, 2, [$($gstore,)* "movq qword ptr [rsp + 72], xmm0", "movq qword ptr [rsp + 80], xmm1"]);
        shape_entry!($g, 4, [$($gstore,)* "movq qword ptr [rsp + 72], xmm0", "movq qword ptr [rsp + 80], xmm1", "movq qword ptr [rsp + 88], xmm2", "movq qword ptr [rsp + 96], xmm3"]);
        shape_entry!($g, 8, [$($gstore,)* "movq qword ptr [rsp + 72], xmm0", "movq qword ptr [rsp + 80], xmm1", "movq qword ptr [rsp + 88], xmm2", "movq qword ptr [rsp + 96], xmm3", "movq qword ptr [rsp + 104], xmm4", "movq qword ptr [rsp + 112], xmm5", "movq qword ptr [rsp + 120], xmm6", "movq qword ptr [rsp + 128], xmm7"]);
    };
}

shape_entries!(0, []);
shape_entries!(
    2,
    [
        "mov qword ptr [rsp + 0], rdi",
        "mov qword ptr [rsp + 8], rsi"
    ]
);
shape_entries!(
    4,
    [
        "mov qword ptr [rsp + 0], rdi",
        "mov qword ptr [rsp + 8], rsi",
        "mov qword ptr [rsp + 16], rdx",
        "mov qword ptr [rsp + 24], rcx"
    ]
);
shape_entries!(
    6,
    [
        "mov qword ptr [rsp + 0], rdi",
        "mov qword ptr [rsp + 8], rsi",
        "mov qword ptr [rsp + 16], rdx",
        "mov qword ptr [rsp + 24], rcx",
        "mov qword ptr [rsp + 32], r8",
        "mov qword ptr [rsp + 40], r9"
    ]
);

extern "C" {
    /// See the module documentation. Never called from Rust; only its address is used.
    fn gatun_upcall_entry();
    fn gatun_upcall_entry_g0v0();
    fn gatun_upcall_entry_g0v2();
    fn gatun_upcall_entry_g0v4();
    fn gatun_upcall_entry_g0v8();
    fn gatun_upcall_entry_g2v0();
    fn gatun_upcall_entry_g2v2();
    fn gatun_upcall_entry_g2v4();
    fn gatun_upcall_entry_g2v8();
    fn gatun_upcall_entry_g4v0();
    fn gatun_upcall_entry_g4v2();
    fn gatun_upcall_entry_g4v4();
    fn gatun_upcall_entry_g4v8();
    fn gatun_upcall_entry_g6v0();
    fn gatun_upcall_entry_g6v2();
    fn gatun_upcall_entry_g6v4();
    fn gatun_upcall_entry_g6v8();
}

/// The shape entries by integer registers (0, 2, 4, 6) and vector registers (0, 2, 4, 8).
const SHAPE_ENTRIES: [[unsafe extern "C" fn(); 4]; 4] = [
    [
        gatun_upcall_entry_g0v0,
        gatun_upcall_entry_g0v2,
        gatun_upcall_entry_g0v4,
        gatun_upcall_entry_g0v8,
    ],
    [
        gatun_upcall_entry_g2v0,
        gatun_upcall_entry_g2v2,
        gatun_upcall_entry_g2v4,
        gatun_upcall_entry_g2v8,
    ],
    [
        gatun_upcall_entry_g4v0,
        gatun_upcall_entry_g4v2,
        gatun_upcall_entry_g4v4,
        gatun_upcall_entry_g4v8,
    ],
    [
        gatun_upcall_entry_g6v0,
        gatun_upcall_entry_g6v2,
        gatun_upcall_entry_g6v4,
        gatun_upcall_entry_g6v8,
    ],
];

/// Length in bytes of a stub's code.
pub(crate) const STUB_LEN: usize = 27;

/// The machine code of a stub whose context is at `context` (see the module documentation).
pub(crate) fn stub_code(context: usize) -> [u8; STUB_LEN] {
    stub_code_for(context, gatun_upcall_entry as *const () as usize)
}

/// The machine code of a register-shape stub whose context is at `context`: as
/// [`stub_code`], jumping to the shape entry that stores the first `gprs` (0, 2, 4 or 6)
/// integer and `vectors` (0, 2, 4 or 8) vector argument registers.
pub(crate) fn shape_stub_code(gprs: usize, vectors: usize, context: usize) -> [u8; STUB_LEN] {
    let g = (gprs / 2).min(3);
    let v = match vectors {
        0 => 0,
        1 | 2 => 1,
        3 | 4 => 2,
        _ => 3,
    };
    stub_code_for(context, SHAPE_ENTRIES[g][v] as *const () as usize)
}

/// `endbr64; movabs r10, context; movabs r11, entry; jmp r11`.
fn stub_code_for(context: usize, entry: usize) -> [u8; STUB_LEN] {
    let mut code = [0u8; STUB_LEN];
    code[0..4].copy_from_slice(&[0xF3, 0x0F, 0x1E, 0xFA]); // endbr64
    code[4..6].copy_from_slice(&[0x49, 0xBA]); // movabs r10, imm64
    code[6..14].copy_from_slice(&(context as u64).to_le_bytes());
    code[14..16].copy_from_slice(&[0x49, 0xBB]); // movabs r11, imm64
    code[16..24].copy_from_slice(&(entry as u64).to_le_bytes());
    code[24..27].copy_from_slice(&[0x41, 0xFF, 0xE3]); // jmp r11
    code
}

/// The machine code of a free-register stub (the typed and integer-register paths): `endbr64`,
/// `movabs <int argument register n>, context`, `movabs r11, target`, `jmp r11` — the context
/// becomes the trailing pointer argument of the `extern "C"` function at `target`, in the
/// integer argument register `n` (0..6: rdi, rsi, rdx, rcx, r8, r9) that the
/// C caller's arguments leave free. The caller's own argument registers and stack are
/// untouched.
pub(crate) fn typed_stub_code(n: usize, context: usize, target: usize) -> [u8; STUB_LEN] {
    // rdi, rsi, rdx, rcx, r8, r9 as register numbers
    const REGS: [u8; 6] = [7, 6, 2, 1, 8, 9];
    let r = REGS[n];
    let mut code = [0u8; STUB_LEN];
    code[0..4].copy_from_slice(&[0xF3, 0x0F, 0x1E, 0xFA]); // endbr64
    code[4] = if r >= 8 { 0x49 } else { 0x48 }; // REX.W (+B for r8, r9)
    code[5] = 0xB8 + (r & 7); // movabs r64, imm64
    code[6..14].copy_from_slice(&(context as u64).to_le_bytes());
    code[14..16].copy_from_slice(&[0x49, 0xBB]); // movabs r11, imm64
    code[16..24].copy_from_slice(&(target as u64).to_le_bytes());
    code[24..27].copy_from_slice(&[0x41, 0xFF, 0xE3]); // jmp r11
    code
}

impl UpcallEntries for SysV {
    fn upcall_code(header: *const UpcallHeader) -> Result<ExecutableCode> {
        // SAFETY: the stub's code loads `header` into r10 and jumps to the general entry,
        // which calls the header's dispatcher; called only as a function of the stub's
        // descriptor type.
        unsafe { ExecutableCode::new(&stub_code(header as usize)) }
    }

    fn int_register_args(args: &[UpcallArgKind], ret: UpcallRetKind) -> Option<usize> {
        super::shape::int_register_args(args, ret)
    }

    fn register_shape(
        args: &[UpcallArgKind],
        ret: UpcallRetKind,
        plan: &CallPlan,
    ) -> Option<RegisterShape> {
        super::shape::register_shape(args, ret, plan)
    }

    unsafe fn shape_upcall_code(
        shape: &RegisterShape,
        header: *const UpcallHeader,
    ) -> Option<Result<ExecutableCode>> {
        // SAFETY: the caller's contract: the stub is called as a function whose arguments are
        // all in the first `gprs` integer and `vectors` vector argument registers and whose
        // result is `void` or in rax, rdx, xmm0, xmm1 (`register_shape`); the code loads
        // `header` into r10 and jumps to the shape entry storing those registers, which calls
        // the header's shape dispatcher.
        Some(unsafe {
            ExecutableCode::new(&shape_stub_code(
                shape.gprs as usize,
                shape.vectors as usize,
                header as usize,
            ))
        })
    }

    fn free_register(descriptor: &FunctionDescriptor, plan: &CallPlan) -> Option<usize> {
        super::shape::free_register(descriptor, plan)
    }

    unsafe fn free_register_code(
        n: usize,
        context: usize,
        target: usize,
    ) -> Option<Result<ExecutableCode>> {
        // SAFETY: the caller's contract: the code only adds the trailing argument in integer
        // argument register `n` and jumps to `target`, which accepts it there.
        Some(unsafe { ExecutableCode::new(&typed_stub_code(n, context, target)) })
    }

    #[inline(always)]
    unsafe fn write_segment_value(slot: *mut Value<'_>, ptr: *mut u8, len: usize) {
        // SAFETY: forwarded.
        unsafe { super::shape::write_segment_value(slot, ptr, len) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn typed_stub_code_loads_the_context_into_the_free_argument_register() {
        // movabs rsi, imm64 = 48 BE; movabs r9, imm64 = 49 B9
        let code = super::typed_stub_code(1, 0x1122_3344_5566_7788, 0x99);
        assert_eq!(code[..6], [0xF3, 0x0F, 0x1E, 0xFA, 0x48, 0xBE]);
        assert_eq!(code[6..14], 0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(code[14..24], [0x49, 0xBB, 0x99, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(code[24..], [0x41, 0xFF, 0xE3]);
        assert_eq!(super::typed_stub_code(5, 0, 0)[4..6], [0x49, 0xB9]);
        assert_eq!(super::typed_stub_code(0, 0, 0)[4..6], [0x48, 0xBF]);
    }

    #[test]
    fn stub_code_loads_the_context_into_r10_and_jumps_to_the_entry() {
        let code = super::stub_code(0x1122_3344_5566_7788);
        assert_eq!(code[..6], [0xF3, 0x0F, 0x1E, 0xFA, 0x49, 0xBA]); // endbr64; movabs r10,
        assert_eq!(code[6..14], 0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(code[14..16], [0x49, 0xBB]); // movabs r11,
        assert_ne!(u64::from_le_bytes(code[16..24].try_into().unwrap()), 0);
        assert_eq!(code[24..], [0x41, 0xFF, 0xE3]); // jmp r11
                                                    // The shape stubs differ only in the entry address, one per register count pair.
        let mut entries = std::collections::BTreeSet::new();
        for g in [0, 2, 4, 6] {
            for v in [0, 2, 4, 8] {
                let shape = super::shape_stub_code(g, v, 0x1122_3344_5566_7788);
                assert_eq!(shape[..16], code[..16]);
                assert_eq!(shape[24..], code[24..]);
                entries.insert(shape[16..24].to_vec());
            }
        }
        assert_eq!(entries.len(), 16);
        assert!(!entries.contains(&code[16..24]));
    }
}
