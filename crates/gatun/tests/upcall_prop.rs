//! Property test of upcalls against C: the 1,000 signatures of the downcall property
//! test's generator (tests/prop/sigs.rs; HFAs, near-HFAs, small, large and 16-byte-aligned
//! composites, bools, up to 24 arguments, every return class) become Rust closures behind
//! upcall stubs. For each, a C checker generated at build time, `call_cb_<i>(cb)`, builds
//! arguments from constants derived from the signature's index, calls `cb` once with all of
//! them (as named arguments), and compares every leaf of the result with the value the closure
//! should return; the closure compares every leaf of every argument with the constants.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

include!("prop/sigs.rs");
include!("prop/layouts.rs");
include!("prop/upcall.rs");

use std::sync::atomic::Ordering;

use common::*;
use gatun::layout::{MemoryLayout, ScalarKind};
use gatun::linker::{FunctionDescriptor as FD, Linker};
use gatun::memory::{Arena, ConfinedArena};

/// Runs signature `i`'s upcall checker; returns what went wrong, if anything. With `confined`
/// the stub is a confined one, which always runs the general dispatcher; otherwise the linker
/// picks the path (on x86-64 System V the integer-register or register-shape path when the
/// signature has one).
fn run(i: usize, sig: &PropSig, arena: &ConfinedArena, confined: bool) -> Result<(), String> {
    let check = CbCheck::new(i, sig);
    let d = check.descriptor();
    let fail = |e: String| format!("{d}: {e}");
    let caller = link(&format!("call_cb_{i}"), &FD::of(V::I32, [V::ADDRESS]));
    let rc = {
        let (shaped, general);
        let stub: &gatun::UpcallStub<'_> = if confined {
            general = Linker::native()
                .upcall_stub_confined(d, |a| check.call(a), arena)
                .map_err(|e| fail(format!("upcall stub: {e}")))?;
            &general
        } else {
            shaped = Linker::native()
                .upcall_stub(d, |a| check.call(a), arena)
                .map_err(|e| fail(format!("upcall stub: {e}")))?;
            &shaped
        };
        // SAFETY: `int32_t call_cb_<i>(R (*)(..))` calls the stub once with the descriptor's
        // arguments; the stub lives until the end of this block.
        unsafe { caller.invoke(&[stub.as_value()]) }.map_err(|e| fail(e.to_string()))?
    };
    let errs = check.errors();
    if !errs.is_empty() {
        return Err(fail(errs));
    }
    match check.calls.load(Ordering::Relaxed) {
        1 => cb_result(rc).map_err(fail),
        c => Err(fail(format!("{c} calls, C returned {rc:?}"))),
    }
}

#[test]
fn every_signature_called_back_from_c() {
    let arena = Arena::confined();
    let sigs = prop_signatures(ABI);
    let mut failures = Vec::new();
    // Each signature through the path the linker picks and through the general dispatcher (a
    // confined stub): both must satisfy the C checker.
    for (i, sig) in sigs.iter().take(PROP_CB_SIGNATURES).enumerate() {
        for confined in [false, true] {
            if let Err(e) = run(i, sig, &arena, confined) {
                failures.push(format!("call_cb_{i} (confined: {confined}): {e}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 2 x {PROP_CB_SIGNATURES} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
