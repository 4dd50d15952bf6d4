//! Property test of upcalls against C: the 1,000 signatures of the downcall property
//! test's generator (tests/prop/sigs.rs; HFAs, near-HFAs, small, large and 16-byte-aligned
//! composites, bools, up to 24 arguments, every return class) become Rust closures behind
//! upcall stubs. For each, a C checker generated at build time, `call_cb_<i>(cb)`, builds
//! arguments from constants derived from the signature's index, calls `cb` once with all of
//! them (as named arguments), and compares every leaf of the result with the value the closure
//! should return; the closure compares every leaf of every argument with the constants.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(
    any(
        all(
            any(target_arch = "x86_64", target_arch = "aarch64"),
            target_os = "linux"
        ),
        all(target_arch = "x86_64", windows)
    ),
    not(miri)
))]

mod common;

include!("prop/sigs.rs");

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use common::*;
use gatun::layout::{MemoryLayout, ScalarKind};
use gatun::linker::{FunctionDescriptor as FD, Linker};
use gatun::memory::{Arena, ConfinedArena};
use gatun::Value;

include!("prop/layouts.rs");

/// The payload bits of a scalar `Value` (floats as their bits, a bool as 0 or 1).
fn bits(v: &Value) -> Option<u64> {
    Some(match *v {
        Value::Bool(b) => b as u64,
        Value::I8(x) => x as u8 as u64,
        Value::I16(x) => x as u16 as u64,
        Value::I32(x) => x as u32 as u64,
        Value::I64(x) => x as u64,
        Value::U8(x) => x as u64,
        Value::U16(x) => x as u64,
        Value::U32(x) => x as u64,
        Value::U64(x) => x,
        Value::F32(x) => x.to_bits() as u64,
        Value::F64(x) => x.to_bits(),
        Value::Address(p) => p as usize as u64,
        _ => return None,
    })
}

/// The low `n` bytes of `x`.
fn low(x: u64, n: usize) -> u64 {
    if n == 8 {
        x
    } else {
        x & ((1u64 << (8 * n)) - 1)
    }
}

/// Gives a closure the higher-ranked upcall signature.
fn upcall_fn<F>(f: F) -> F
where
    F: for<'a> Fn(&gatun::UpcallArgs<'a>) -> gatun::Result<Value<'a>>,
{
    f
}

/// Runs signature `i`'s upcall checker; returns what went wrong, if anything. With `confined`
/// the stub is a confined one, which always runs the general dispatcher; otherwise the linker
/// picks the path (on x86-64 System V the integer-register or register-shape path when the
/// signature has one).
fn run(i: usize, sig: &PropSig, arena: &ConfinedArena, confined: bool) -> Result<(), String> {
    let shaped = |t: &PropTy| {
        let l = layout(t);
        let mut leaves = Vec::new();
        leaf_offsets(&l, t, 0, &mut leaves);
        (l, leaves)
    };
    let args: Vec<_> = sig.args.iter().map(shaped).collect();
    let ret = sig.ret.as_ref().map(shaped);
    let arg_layouts = args.iter().map(|(l, _)| l.clone());
    let d = match &ret {
        Some((l, _)) => FD::of(l.clone(), arg_layouts),
        None => FD::of_void(arg_layouts),
    };
    let (ha, hr) = (prop_cb_arg_base(i), prop_cb_ret_base(i));
    let fail = |e: String| format!("{d}: {e}");
    let errors = Mutex::new(Vec::<String>::new());
    let calls = AtomicUsize::new(0);
    let closure = upcall_fn(|a| {
        calls.fetch_add(1, Ordering::Relaxed);
        let mut errs = errors.lock().unwrap();
        if a.len() != args.len() {
            errs.push(format!("{} arguments, want {}", a.len(), args.len()));
            return Ok(Value::Void);
        }
        let mut n = 0;
        for (j, (l, leaves)) in args.iter().enumerate() {
            if let MemoryLayout::Value(v) = l {
                let k = leaves[0].1;
                let want = low(ret_leaf(ha, n, k), v.byte_size());
                n += 1;
                let got = bits(&a[j]);
                if a[j].scalar_kind() != Some(v.kind()) || got != Some(want) {
                    errs.push(format!("argument {j}: got {:?}, want {:#x}", a[j], want));
                }
                continue;
            }
            let seg = match a.segment(j) {
                Ok(s) => s,
                Err(e) => {
                    errs.push(format!("argument {j}: {e}"));
                    return Ok(Value::Void);
                }
            };
            if seg.byte_size() != l.byte_size() {
                errs.push(format!(
                    "argument {j}: {} bytes, want {}",
                    seg.byte_size(),
                    l.byte_size()
                ));
                return Ok(Value::Void);
            }
            for &(off, k) in leaves {
                let size = KINDS[k].byte_size();
                let mut b = [0u8; 8];
                seg.copy_to_slice(off, &mut b[..size]).unwrap();
                let want = low(ret_leaf(ha, n, k), size);
                if u64::from_le_bytes(b) != want {
                    errs.push(format!(
                        "argument {j}, leaf {n} ({}) at byte {off}: got {:?}, want {want:#x}",
                        PROP_C_TYPES[k],
                        &b[..size]
                    ));
                }
                n += 1;
            }
        }
        Ok(match &ret {
            None => Value::Void,
            Some((MemoryLayout::Value(v), leaves)) => {
                value_from_bits(v.kind(), ret_leaf(hr, 0, leaves[0].1))
            }
            Some((_, leaves)) => {
                let out = a.return_segment().expect("a struct return segment");
                out.fill(0);
                for (idx, &(off, k)) in leaves.iter().enumerate() {
                    let size = KINDS[k].byte_size();
                    out.copy_from_slice(off, &ret_leaf(hr, idx, k).to_le_bytes()[..size])?;
                }
                Value::Void
            }
        })
    });
    let caller = link(&format!("call_cb_{i}"), &FD::of(V::I32, [V::ADDRESS]));
    let rc = {
        let (shaped, general);
        let stub: &gatun::UpcallStub<'_> = if confined {
            general = Linker::native()
                .upcall_stub_confined(&d, closure, arena)
                .map_err(|e| fail(format!("upcall stub: {e}")))?;
            &general
        } else {
            shaped = Linker::native()
                .upcall_stub(&d, closure, arena)
                .map_err(|e| fail(format!("upcall stub: {e}")))?;
            &shaped
        };
        // SAFETY: `int32_t call_cb_<i>(R (*)(..))` calls the stub once with the descriptor's
        // arguments; the stub lives until the end of this block.
        unsafe { caller.invoke(&[stub.as_value()]) }.map_err(|e| fail(e.to_string()))?
    };
    let errs = errors.into_inner().unwrap();
    if !errs.is_empty() {
        return Err(fail(errs.join("; ")));
    }
    match (calls.load(Ordering::Relaxed), rc) {
        (1, Value::I32(0)) => Ok(()),
        (1, Value::I32(leaf)) => Err(fail(format!("C saw a wrong return leaf {}", leaf - 1))),
        (c, rc) => Err(fail(format!("{c} calls, C returned {rc:?}"))),
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
