//! The `linker::Arguments` fast path on x86-64 Windows: a call of at most four scalar
//! arguments, not variadic, made without a stub through the slots helper, a small
//! `global_asm!` function that Rust calls as an ordinary `extern "C"` (on x86-64 Windows the
//! Microsoft x64 convention) function of the four slots (rcx, rdx, r8, r9) and the target (the
//! fifth argument, at `[rsp + 40]` on entry, above the caller's home area). The
//! convention gives argument `i < 4` the `i`-th of rcx, rdx, r8, r9 if it is an integer,
//! pointer or bool, or xmm`i` if it is a float; the helper copies rcx..r9 into xmm0..xmm3, so
//! each slot is in both (as for a variadic call), only the count matters and the callee reads
//! the register of its parameter's class. The helper reserves 40 bytes (the callee's 32-byte
//! home area and 8 bytes that make rsp 16-byte aligned at the `call`), calls the target and
//! returns with rax and xmm0 as the target left them: the label `gatun_win64_slots_int` is
//! declared to return rax, `gatun_win64_slots_float` (the same address) xmm0, so neither
//! declaration clashes with the other. The slots hold small integers extended to 64 bits and
//! a `float`'s bits in the low 32 bits; the slots past the argument count are passed as they
//! are (possibly uninitialised: the callee does not read those registers).
//!
//! The helper carries SEH unwind directives (`.seh_proc`, `.seh_stackalloc 40`,
//! `.seh_endprologue`, `.seh_endproc`), from which the assembler emits its `.pdata`/`.xdata`,
//! so stack walks from inside the callee (exceptions, debuggers, `RtlVirtualUnwind`,
//! `RtlCaptureStackBackTrace`) pass through it into the Rust caller. The Rust side has no
//! inline assembly: the call is an ordinary call, across which the compiler keeps values only
//! in registers the convention makes callee-saved, so it saves no xmm6-xmm15 for it (the
//! helper leaves them alone and the target preserves them).
//!
//! # Invariants
//! - The helper (`gatun_win64_slots_int`, the same code as `gatun_win64_slots_float`) is a
//!   Microsoft x64 function: entered with rsp 8 mod 16, it moves rsp down by exactly the 40
//!   bytes its unwind data records before the `call` (so rsp is 16-byte aligned there, with
//!   the home area at `[rsp, rsp + 32)`), changes no callee-saved register, and restores rsp
//!   before `ret`; it writes no memory but the return address the `call` pushes.
//! - [`path_of`] gives a path only to signatures this module can call: no capture, not
//!   variadic, at most four arguments, all scalars, a non-bool scalar or void return.

use std::ffi::c_void;

use crate::abi::CallPlan;
use crate::backend::{ArgKind, RetKind, Slots, SlotsPath};
use crate::layout::ScalarKind;

std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl gatun_win64_slots_int",
    ".def gatun_win64_slots_int",
    ".scl 2",
    ".type 32",
    ".endef",
    ".globl gatun_win64_slots_float",
    ".def gatun_win64_slots_float",
    ".scl 2",
    ".type 32",
    ".endef",
    "gatun_win64_slots_int:",
    "gatun_win64_slots_float:",
    ".seh_proc gatun_win64_slots_int",
    // entry rsp = 8 mod 16; 32 bytes of home area and 8 of alignment
    "sub rsp, 40",
    ".seh_stackalloc 40",
    ".seh_endprologue",
    "movq xmm0, rcx",
    "movq xmm1, rdx",
    "movq xmm2, r8",
    "movq xmm3, r9",
    // the fifth argument: 40 bytes above the return address, now 40 higher
    "call qword ptr [rsp + 80]",
    "add rsp, 40",
    "ret",
    ".seh_endproc",
);

/// One argument register's value: a slot, possibly uninitialised past the argument count
/// (the target does not read those registers; the helper only copies them).
type Reg = std::mem::MaybeUninit<u64>;

extern "C" {
    /// Calls `target` with rcx, rdx, r8, r9 = `a`..`d` and xmm0..xmm3 = the same bits;
    /// returns the target's rax (see the module documentation).
    fn gatun_win64_slots_int(a: Reg, b: Reg, c: Reg, d: Reg, target: *const c_void) -> u64;
    /// As `gatun_win64_slots_int`, returning the target's xmm0 (its low 64 bits).
    fn gatun_win64_slots_float(a: Reg, b: Reg, c: Reg, d: Reg, target: *const c_void) -> f64;
}

/// The slots path of a signature (see the module documentation).
pub(crate) fn path_of(plan: &CallPlan, args: &[ArgKind], ret: RetKind, capture: bool) -> SlotsPath {
    let scalars = args.len() <= 4 && args.iter().all(|a| matches!(a, ArgKind::Scalar(_)));
    if capture || plan.is_variadic() || !scalars {
        return SlotsPath::None;
    }
    match ret {
        RetKind::Scalar(ScalarKind::F32 | ScalarKind::F64) => SlotsPath::Float,
        RetKind::Scalar(ScalarKind::Bool) | RetKind::Group { .. } => SlotsPath::None,
        RetKind::Void | RetKind::Scalar(_) => SlotsPath::Int,
    }
}

/// Calls `target` with the first four of `slots` through `gatun_win64_slots`; returns rax
/// (`xmm0 = false`) or xmm0's low 64 bits. The slots are passed as they are: those past the
/// target's arguments may be uninitialised, so no count is computed and nothing is zeroed.
///
/// # Safety
/// `slots[i]` holds argument `i` of `target`, a function, not variadic, of at most four
/// scalar arguments, returning in rax (`xmm0 = false`: an integer, a pointer or nothing) or
/// xmm0; its contract is the caller's.
#[inline(always)]
pub(crate) unsafe fn call(slots: &Slots, target: *const c_void, xmm0: bool) -> u64 {
    let [a, b, c, d] = [slots[0], slots[1], slots[2], slots[3]];
    if xmm0 {
        // SAFETY: a Microsoft x64 call of the helper (module invariants), which calls `target`
        // with its arguments in the registers of both classes and its home area; the target
        // returns in xmm0 and reads only the registers of its (at most four) parameters, which
        // hold initialised slots (caller); it may read and write memory as its contract
        // allows.
        unsafe { gatun_win64_slots_float(a, b, c, d, target) }.to_bits()
    } else {
        // SAFETY: as above; the target returns in rax or returns nothing.
        unsafe { gatun_win64_slots_int(a, b, c, d, target) }
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::c_void;
    use std::sync::Mutex;

    use crate::layout::ValueLayout as V;
    use crate::linker::{Arguments, DowncallHandle, FunctionDescriptor as FD, Linker, Symbol};
    use crate::Value;

    /// The backtrace taken inside the callees below.
    static WALK: Mutex<String> = Mutex::new(String::new());

    fn walk() -> String {
        std::mem::take(&mut *WALK.lock().unwrap())
    }

    /// The walk passed the frame that made the call and reached the test below it.
    fn check(walk: &str) {
        let made = walk.find("invoke_in_a_frame").expect(walk);
        let test = walk.find("stack_walks_from_a_slots_path_callee_reach_the_caller");
        assert!(test.is_some_and(|t| t > made), "{walk}");
    }

    extern "C" fn sum_walking(a: i32, b: i64, c: f64, d: u8) -> i64 {
        *WALK.lock().unwrap() = std::backtrace::Backtrace::force_capture().to_string();
        a as i64 + b + c as i64 + d as i64
    }

    extern "C" fn scale_walking(a: f64, b: i32) -> f64 {
        *WALK.lock().unwrap() = std::backtrace::Backtrace::force_capture().to_string();
        a * b as f64
    }

    extern "C" fn nothing_walking() {
        *WALK.lock().unwrap() = std::backtrace::Backtrace::force_capture().to_string();
    }

    /// The compiled-stub handle of `f` (the slots path needs one).
    fn link(f: *const c_void, d: &FD) -> DowncallHandle {
        // SAFETY: `f` is a Rust function of the descriptor's C type, alive for the program.
        let sym = unsafe { Symbol::from_address(f) };
        Linker::native().downcall(&sym, d, &[]).unwrap()
    }

    /// `h.invoke_arguments(a)` from a frame of its own, so the walk must unwind the frame that
    /// made the call (not only find it by its return address) to reach the test.
    #[inline(never)]
    fn invoke_in_a_frame<const N: usize>(
        h: &DowncallHandle,
        a: &Arguments<'_, N>,
    ) -> Value<'static> {
        // SAFETY: the callers' callees have their descriptors' C types.
        unsafe { h.invoke_arguments(a) }.unwrap()
    }

    #[test]
    fn stack_walks_from_a_slots_path_callee_reach_the_caller() {
        // Integer return, four arguments of both classes: the walk taken inside the callee
        // must unwind through the slots helper back into this test's frame.
        let h = link(
            sum_walking as *const c_void,
            &FD::of(V::I64, [V::I32, V::I64, V::F64, V::U8]),
        );
        let mut a = Arguments::<4>::new();
        a.i32(-5).i64(1 << 40).f64(7.75).u8(200);
        assert!(h.takes_slots_path(&a));
        // `sum_walking` is an `int64_t (int, int64_t, double, uint8_t)`.
        let r = invoke_in_a_frame(&h, &a);
        assert_eq!(r, Value::I64(-5 + (1 << 40) + 7 + 200));
        check(&walk());
        // Float return.
        let h = link(
            scale_walking as *const c_void,
            &FD::of(V::F64, [V::F64, V::I32]),
        );
        let mut a = Arguments::<2>::new();
        a.f64(1.25).i32(-4);
        assert!(h.takes_slots_path(&a));
        // `scale_walking` is a `double (double, int)`.
        assert_eq!(invoke_in_a_frame(&h, &a), Value::F64(-5.0));
        check(&walk());
        // No arguments, void return.
        let h = link(nothing_walking as *const c_void, &FD::of_void([]));
        let a = Arguments::<1>::new();
        assert!(h.takes_slots_path(&a));
        // `nothing_walking` is a `void (void)`.
        assert_eq!(invoke_in_a_frame(&h, &a), Value::Void);
        check(&walk());
    }
}
