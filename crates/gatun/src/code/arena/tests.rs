//! The allocator on every system with an arena (Linux natively and under `qemu-aarch64`,
//! Windows under Wine): neighbours share a chunk and survive each other's frees, large code
//! gets a chunk of its own, and granules reused for new code run the new code. On AArch64
//! under `qemu-aarch64` (user mode) the reuse tests fail unless reused granules get their
//! read-execute page mapped again (qemu neither sees the write through the read-write view nor
//! acts on `__clear_cache`); natively on x86-64 they check the same reuse pattern.

use crate::code::{Backing, ExecutableCode, CHUNK_BYTES};

/// A function returning `v` after `pad` no-op instructions (`nop`s then `movz w0, #v; ret`
/// on AArch64, `nop`s then `lui a0; addiw a0; ret` on RISC-V 64, `nopr`s then `llill %r2, v;
/// br %r14` on s390x, `nop`s then `li r3; ori r3; blr` on PowerPC 64, `nop`s then `mov eax,
/// v; ret` on x86-64).
fn returning(v: u16, pad: usize) -> Vec<u8> {
    #[cfg(target_arch = "aarch64")]
    {
        let nop = 0xD503_201Fu32;
        let movz = 0x5280_0000u32 | (u32::from(v) << 5);
        let ret = 0xD65F_03C0u32;
        std::iter::repeat_n(nop, pad)
            .chain([movz, ret])
            .flat_map(u32::to_le_bytes)
            .collect()
    }
    #[cfg(target_arch = "riscv64")]
    {
        // `lui a0, hi; addiw a0, a0, lo` (hi << 12 plus the sign-extended 12-bit lo is v)
        let v = u32::from(v);
        let lo = ((v & 0xFFF) ^ 0x800).wrapping_sub(0x800);
        let hi = v.wrapping_sub(lo) >> 12;
        let nop = 0x0000_0013u32; // addi zero, zero, 0
        let lui = (hi << 12) | (10 << 7) | 0x37;
        let addiw = (lo << 20) | (10 << 15) | (10 << 7) | 0x1B;
        let ret = 0x0000_8067u32; // jalr zero, 0(ra)
        std::iter::repeat_n(nop, pad)
            .chain([lui, addiw, ret])
            .flat_map(u32::to_le_bytes)
            .collect()
    }
    #[cfg(target_arch = "s390x")]
    {
        // `nopr %r7` (bcr 0, %r7); `llill %r2, v` (v zero-extended into the whole register);
        // `br %r14`
        let [hi, lo] = v.to_be_bytes();
        [0x07u8, 0x07]
            .repeat(pad)
            .into_iter()
            .chain([0xA5, 0x2F, hi, lo, 0x07, 0xFE])
            .collect()
    }
    #[cfg(target_arch = "powerpc64")]
    {
        // `li r3, 0; ori r3, r3, v; blr` (Power ISA Book I, D-form `addi`/`ori`, XL-form `bclr`)
        let nop = 0x6000_0000u32; // ori r0, r0, 0
        let li = 0x3860_0000u32;
        let ori = 0x6063_0000u32 | u32::from(v);
        let blr = 0x4E80_0020u32;
        let word = |w: u32| {
            if cfg!(target_endian = "little") {
                w.to_le_bytes()
            } else {
                w.to_be_bytes()
            }
        };
        std::iter::repeat_n(nop, pad)
            .chain([li, ori, blr])
            .flat_map(word)
            .collect()
    }
    #[cfg(target_arch = "x86_64")]
    {
        let [lo, hi] = v.to_le_bytes();
        std::iter::repeat_n(0x90u8, pad)
            .chain([0xB8, lo, hi, 0, 0, 0xC3])
            .collect()
    }
}

fn place(v: u16, pad: usize) -> ExecutableCode {
    // SAFETY: a complete `extern "C" fn() -> i32` (see `returning`), called as one.
    unsafe { ExecutableCode::new(&returning(v, pad)) }.unwrap()
}

fn call(c: &ExecutableCode) -> i32 {
    // SAFETY: the code is a complete `extern "C" fn() -> i32` and lives across the call.
    let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(c.entry()) };
    f()
}

#[test]
fn neighbours_share_a_chunk_and_survive_each_other() {
    let codes: Vec<ExecutableCode> = (0..100).map(|v| place(v, 0)).collect();
    assert!(codes
        .iter()
        .all(|c| matches!(c.backing, Backing::Arena { .. })));
    // other tests allocate concurrently, but 100 pieces of 16 bytes fit in few chunks
    assert!(super::chunks() < 20);
    let near = codes
        .windows(2)
        .filter(|w| (w[1].entry() as usize).abs_diff(w[0].entry() as usize) < CHUNK_BYTES)
        .count();
    assert!(near > 50, "{near}");
    let (even, odd): (Vec<_>, Vec<_>) =
        codes.into_iter().enumerate().partition(|(i, _)| i % 2 == 0);
    drop(odd);
    for (i, c) in &even {
        assert_eq!(call(c), *i as i32);
    }
    // freed granules are reused, and the neighbours keep running
    let again: Vec<ExecutableCode> = (0..50).map(|v| place(v + 100, 0)).collect();
    for (i, c) in again.iter().enumerate() {
        assert_eq!(call(c), i as i32 + 100);
    }
    for (i, c) in &even {
        assert_eq!(call(c), *i as i32);
    }
}

#[test]
fn large_code_gets_its_own_chunk() {
    // no-op instructions past the chunk size (4 bytes each on AArch64, 1 on x86-64)
    let bytes = returning(7, CHUNK_BYTES + 100);
    // SAFETY: a complete `extern "C" fn() -> i32` (see `returning`), called as one.
    let code = unsafe { ExecutableCode::new(&bytes) }.unwrap();
    assert!(matches!(code.backing, Backing::Arena { .. }));
    assert_eq!(call(&code), 7);
    assert_eq!(code.bytes(), bytes);
}

/// Places code returning `a`, calls it, frees it, places code returning `b` of the same
/// size and calls that: `true` if the second landed at the first one's address. Every
/// call must return its own code's value wherever it landed.
fn replace_once(a: u16, b: u16, pad: usize) -> bool {
    let first = place(a, pad);
    assert_eq!(call(&first), i32::from(a), "pad {pad}");
    // translated more than once, as a hot stub is
    assert_eq!(call(&first), i32::from(a), "pad {pad}");
    let at = first.entry();
    drop(first);
    let second = place(b, pad);
    let same = second.entry() == at;
    assert_eq!(
        call(&second),
        i32::from(b),
        "pad {pad}, {} address",
        if same { "same" } else { "another" }
    );
    same
}

/// Other tests allocate from the arena concurrently and can take the freed granule first;
/// a size counts once code returning the second value ran at the first one's address.
#[test]
fn a_reused_granule_runs_the_new_code() {
    for pad in 0..64 {
        let hit = (0..50u16).any(|round| replace_once(1 + 2 * round, 2 + 2 * round, pad));
        assert!(hit, "pad {pad}: the freed granule was never reused");
    }
    // x86's instruction fetch is coherent: nothing is mapped again there
    #[cfg(target_os = "linux")]
    assert_eq!(super::memfd::remaps() > 0, super::memfd::REMAP_REUSED);
}

/// After `fork`, the child's chunks are its own copies: a granule it frees and reuses runs
/// the child's new code (its pages are mapped again from the child's memfd, not the
/// parent's), and the parent's code in that granule is untouched.
#[cfg(target_os = "linux")]
#[test]
fn a_forked_child_reuses_granules_of_its_own_copy() {
    let kept = place(11, 0);
    let freed = place(12, 3);
    assert_eq!(call(&freed), 12);
    // SAFETY: the child only calls into the arena (whose fork handlers leave it usable)
    // and leaves through `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // single-threaded here: holding every piece placed, first fit reaches the freed
        // granule after at most the other free runs of the chunks
        let at = freed.entry();
        drop(freed);
        let mut held = Vec::new();
        let mut status = 2;
        for round in 0..20_000u32 {
            let v = 100 + (round % 1000) as u16;
            let again = place(v, 3);
            if call(&again) != i32::from(v) || call(&kept) != 11 {
                status = 1;
                break;
            }
            if again.entry() == at {
                status = 0;
                break;
            }
            held.push(again);
        }
        // SAFETY: ends the child without running the parent's test harness.
        unsafe { libc::_exit(status) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child status {status:#x}"
    );
    assert_eq!(call(&freed), 12);
    assert_eq!(call(&kept), 11);
}

/// The same from four threads at once, each also keeping one piece of code placed and
/// calling it between its replacements (its neighbours' pages are mapped again while it
/// runs).
#[test]
fn reused_granules_run_the_new_code_across_threads() {
    let hits: usize = std::thread::scope(|s| {
        let threads: Vec<_> = (0..4u16)
            .map(|t| {
                s.spawn(move || {
                    let kept = place(1000 + t, 0);
                    let mut hits = 0;
                    for round in 0..200u16 {
                        let v = 2000 + 100 * t + 2 * (round % 50);
                        if replace_once(v, v + 1, usize::from(round % 7)) {
                            hits += 1;
                        }
                        assert_eq!(call(&kept), i32::from(1000 + t));
                    }
                    hits
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).sum()
    });
    assert!(hits > 0, "no freed granule was reused");
}
