//! Memory behaviour of compiled stubs and upcall stubs (the code arena, `gatun::code`), on
//! Linux and on x86-64 Windows (under Wine in CI): a stub is freed with its last handle; stubs
//! share 64 KiB chunks; chunks whose stubs are all gone are unmapped; linking is safe from many
//! threads at once; on Linux, after `fork` each process has its own chunks, and repeated forks
//! map no new ones. The code memory is measured through gatun's counter
//! (`gatun::code::mapped_code_bytes`) and checked against what the system shows
//! ([`code_maps_bytes`]).
//!
//! The signatures are `snprintf` (`_snprintf` in Windows' C runtime) with different variadic
//! arguments (what an interpreter calling `printf` produces): each distinct list of variadic
//! kinds is a distinct stub.
//!
//! The tests in this file run one at a time (`SERIAL`), since they measure the process's
//! executable memory.
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use std::sync::Mutex;

use common::*;
use gatun::code::mapped_code_bytes;
use gatun::linker::{DowncallHandle, FunctionDescriptor as FD, Linker, LinkerOption, Symbol};

use gatun::memory::{Arena, MemorySegment, SegmentAllocator};
use gatun::{MemoryLayout, Value};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn snprintf() -> Symbol {
    gatun::linker::SymbolLookup::default_lookup()
        .find(if cfg!(windows) {
            "_snprintf"
        } else {
            "snprintf"
        })
        .unwrap()
}

/// The variadic kinds of shape `n`: `n` in bijective base 4, so every `n` is a distinct list
/// (0: none; 1-4: one kind; 5-20: two; ...).
fn kinds(mut n: usize) -> Vec<usize> {
    let mut k = Vec::new();
    while n > 0 {
        n -= 1;
        k.push(n % 4);
        n /= 4;
    }
    k
}

/// A non-variadic signature `n` over the twelve scalar kinds (bijective base 12, so distinct
/// for distinct `n`): the small stubs of ordinary C functions.
fn plain_descriptor(mut n: usize) -> FD {
    const KINDS: [V; 12] = [
        V::BOOL,
        V::I8,
        V::U8,
        V::I16,
        V::U16,
        V::I32,
        V::U32,
        V::I64,
        V::U64,
        V::F32,
        V::F64,
        V::ADDRESS,
    ];
    let mut args = Vec::new();
    while n > 0 {
        n -= 1;
        args.push(KINDS[n % 12].clone());
        n /= 12;
    }
    FD::of(V::I64, args)
}

/// The snprintf descriptor for a shape: `int snprintf(char *, size_t, const char *, ...)`.
fn descriptor(kinds: &[usize]) -> FD {
    let mut args: Vec<MemoryLayout> = vec![V::ADDRESS.into(), V::U64.into(), V::ADDRESS.into()];
    args.extend(kinds.iter().map(|&k| -> MemoryLayout {
        match k {
            0 => V::I32.into(),
            1 => V::I64.into(),
            2 => V::F64.into(),
            _ => V::ADDRESS.into(),
        }
    }));
    FD::of(V::I32, args)
}

fn link(kinds: &[usize]) -> DowncallHandle {
    Linker::native()
        .downcall(
            &snprintf(),
            &descriptor(kinds),
            &[LinkerOption::FirstVariadicArg(3)],
        )
        .unwrap()
}

/// Calls a shape's handle with values derived from `seed` and checks the formatted output.
fn call_and_check(h: &DowncallHandle, kinds: &[usize], seed: i64) {
    let arena = Arena::confined();
    let buf = arena.allocate(256, 1).unwrap();
    let word = arena.allocate_c_string("w").unwrap();
    let mut fmt = String::new();
    let mut want = String::new();
    let mut args = vec![
        Value::Segment(buf),
        Value::U64(256),
        Value::Segment(MemorySegment::NULL),
    ];
    for (i, &k) in kinds.iter().enumerate() {
        let x = seed * 10 + i as i64;
        match k {
            0 => {
                fmt.push_str("%d ");
                want.push_str(&format!("{} ", -x));
                args.push(Value::I32(-x as i32));
            }
            1 => {
                fmt.push_str("%lld ");
                want.push_str(&format!("{} ", x << 33));
                args.push(Value::I64(x << 33));
            }
            2 => {
                fmt.push_str("%.1f ");
                want.push_str(&format!("{:.1} ", x as f64 + 0.5));
                args.push(Value::F64(x as f64 + 0.5));
            }
            _ => {
                fmt.push_str("%s ");
                want.push_str("w ");
                args.push(Value::Segment(word));
            }
        }
    }
    let fmt = arena.allocate_c_string(&fmt).unwrap();
    args[2] = Value::Segment(fmt);
    // SAFETY: snprintf into a 256-byte buffer with a format matching the arguments.
    let n = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(buf.get_string(0).unwrap(), want, "kinds {kinds:?}");
    assert_eq!(n, Value::I32(want.len() as i32));
}

/// Bytes of this process's read-execute `memfd:gatun-code` mappings, from `/proc/self/maps`.
#[cfg(target_os = "linux")]
fn code_maps_bytes() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter(|l| l.contains(" r-x") && l.contains("gatun-code"))
        .map(|l| {
            let (range, _) = l.split_once(' ').unwrap();
            let (s, e) = range.split_once('-').unwrap();
            usize::from_str_radix(e, 16).unwrap() - usize::from_str_radix(s, 16).unwrap()
        })
        .sum()
}

/// Bytes of this process's execute-read views of sections (the code arena's chunks), from
/// `VirtualQuery`.
#[cfg(windows)]
fn code_maps_bytes() -> usize {
    windows_memory::execute_read_view_bytes()
}

#[test]
fn twenty_thousand_dropped_stubs_leave_at_most_one_mib() {
    let _g = serial();
    // a handle that stays alive (and is called) while everything around it is freed
    let keep_shape = 30;
    let keep_kinds = kinds(keep_shape);
    let keep = link(&keep_kinds);
    call_and_check(&keep, &keep_kinds, 1);
    let mut peak = 0;
    for batch in 0..20 {
        let shapes: Vec<usize> = (batch * 1000 + 100..batch * 1000 + 1100).collect();
        assert!(!shapes.contains(&keep_shape));
        let handles: Vec<DowncallHandle> = shapes.iter().map(|&n| link(&kinds(n))).collect();
        assert!(handles.iter().all(DowncallHandle::uses_compiled_stub));
        peak = peak.max(mapped_code_bytes());
        // spot checks: a few of the batch really run
        for (h, &n) in handles.iter().zip(&shapes).step_by(97) {
            call_and_check(h, &kinds(n), n as i64);
        }
        drop(handles);
        call_and_check(&keep, &keep_kinds, batch as i64);
    }
    let after = mapped_code_bytes();
    let maps = code_maps_bytes();
    eprintln!("peak {peak} bytes with 1,000 live stubs; after dropping 20,000: {after} bytes ({maps} in the system's mappings)");
    assert!(after <= 1 << 20, "{after} bytes of executable memory left");
    assert!(maps <= 1 << 20, "{maps} bytes of gatun-code mappings left");
    assert!(maps <= after, "{maps} mapped vs {after} counted");
    call_and_check(&keep, &keep_kinds, 7);
}

/// Code bytes, arena bytes mapped for them, and stubs, for handles linked from `descriptors`
/// (all kept alive until the measurement is taken).
fn live_cost(descriptors: &[(FD, Vec<LinkerOption>)], sym: &Symbol) -> (usize, usize, usize) {
    let before = mapped_code_bytes();
    let code: usize = descriptors
        .iter()
        .map(|(d, o)| Linker::native().stub_code(d, o).unwrap().len())
        .sum();
    let handles: Vec<DowncallHandle> = descriptors
        .iter()
        .map(|(d, o)| Linker::native().downcall(sym, d, o).unwrap())
        .collect();
    let grown = mapped_code_bytes() - before;
    // re-linking live signatures shares their stubs: no new code
    let again: Vec<DowncallHandle> = descriptors
        .iter()
        .map(|(d, o)| Linker::native().downcall(sym, d, o).unwrap())
        .collect();
    assert_eq!(mapped_code_bytes() - before, grown);
    drop((handles, again));
    assert!(mapped_code_bytes() <= before + 64 * 1024);
    (code, grown, descriptors.len())
}

#[test]
fn live_stubs_take_at_most_256_bytes_each() {
    let _g = serial();
    // 10,000 ordinary signatures of up to four arguments
    let plain: Vec<(FD, Vec<LinkerOption>)> = (1..=10_000)
        .map(|n| (plain_descriptor(n), vec![]))
        .collect();
    let (code, grown, n) = live_cost(&plain, &snprintf());
    let per_stub = grown as f64 / n as f64;
    eprintln!(
        "10,000 live plain stubs: {grown} bytes mapped, {per_stub:.1} per stub; code {:.1} bytes per stub",
        code as f64 / n as f64
    );
    assert!(per_stub <= 256.0, "{per_stub} bytes per live stub");
    // 10,000 snprintf shapes (up to 7 variadic arguments; larger stubs): the arena adds at most
    // the rounding to 16 bytes and part of one chunk to the code itself
    let printf: Vec<(FD, Vec<LinkerOption>)> = (0..10_000)
        .map(|n| {
            (
                descriptor(&kinds(n)),
                vec![LinkerOption::FirstVariadicArg(3)],
            )
        })
        .collect();
    let (code, grown, n) = live_cost(&printf, &snprintf());
    eprintln!(
        "10,000 live snprintf stubs: {grown} bytes mapped, {:.1} per stub; code {:.1} bytes per stub",
        grown as f64 / n as f64,
        code as f64 / n as f64
    );
    assert!(
        grown <= code + 15 * n + 2 * 64 * 1024,
        "{grown} mapped for {code} bytes of code"
    );
    // and they run
    let handles: Vec<DowncallHandle> = (0..10_000).step_by(331).map(|n| link(&kinds(n))).collect();
    for (h, n) in handles.iter().zip((0..10_000).step_by(331)) {
        call_and_check(h, &kinds(n), 3);
    }
}

#[test]
fn eight_threads_link_distinct_signatures_concurrently() {
    let _g = serial();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                for i in 0..400 {
                    // distinct per thread, plus one shape every thread links (shared stub)
                    let n = if i % 50 == 0 {
                        77
                    } else {
                        20_000 + t * 1000 + i
                    };
                    let k = kinds(n);
                    let h = link(&k);
                    call_and_check(&h, &k, (t * 1000 + i) as i64);
                    if i % 3 == 0 {
                        kept.push((h, k));
                    }
                }
                for (h, k) in &kept {
                    call_and_check(h, k, t as i64);
                }
                kept.len()
            })
        })
        .collect();
    let kept: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(kept, 8 * 134);
}

#[test]
fn upcall_stubs_share_the_arena_and_are_freed() {
    let _g = serial();
    let before = mapped_code_bytes();
    let arena = Arena::confined();
    let stubs: Vec<_> = (0..2000)
        .map(|k| {
            Linker::native()
                .upcall_stub(
                    &FD::of(V::I32, [V::I32]),
                    move |a| Ok(Value::I32(a.get::<i32>(0)? + k)),
                    &arena,
                )
                .unwrap()
        })
        .collect();
    let grown = mapped_code_bytes() - before;
    // 2,000 stubs of 27 code bytes (32 in the arena): one 64 KiB chunk, not 2,000 pages
    assert!(
        grown <= 2 * 64 * 1024,
        "{grown} bytes for 2,000 upcall stubs"
    );
    let call = link_with(
        "upcall_call_int",
        &FD::of(V::I32, [V::ADDRESS, V::I32]),
        &[],
    );
    for (k, s) in stubs.iter().enumerate().step_by(199) {
        // SAFETY: the callee calls the stub with (int) and returns its result.
        let v = unsafe { call.invoke(&[s.as_value(), Value::I32(5)]) }.unwrap();
        assert_eq!(v, Value::I32(5 + k as i32));
    }
    drop(stubs);
    let after = mapped_code_bytes();
    assert!(
        after <= before + 64 * 1024,
        "{after} bytes after, {before} before"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn after_fork_both_processes_keep_their_stubs() {
    let _g = serial();
    let mut old: Vec<(DowncallHandle, Vec<usize>)> = (40_000..40_050)
        .map(|n| (link(&kinds(n)), kinds(n)))
        .collect();
    // Each process drops the handles the other keeps, then links new signatures: were the
    // pre-fork chunks (shared memory) not copied for the child, the freed granules would be
    // filled with int3 and reused for new code — through memory the other process still calls.
    let churn = |keep: &[(DowncallHandle, Vec<usize>)], seed: usize| {
        let new: Vec<(DowncallHandle, Vec<usize>)> = (0..300)
            .map(|i| {
                let n = 41_000 + seed * 1000 + i;
                (link(&kinds(n)), kinds(n))
            })
            .collect();
        for (h, k) in keep.iter().chain(&new) {
            call_and_check(h, k, seed as i64);
        }
    };
    // SAFETY: the child only links, calls and drops handles, then `_exit`s; this test holds
    // `SERIAL`, so no other thread of this process is linking at the fork.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let keep = old.split_off(25); // drops the first 25
            drop(old);
            churn(&keep, 1);
        }))
        .is_ok();
        // SAFETY: ends the child without running the parent's destructors or test harness.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed: status {status:#x}"
    );
    // the child dropped the first 25 and linked over them; they still run here
    old.truncate(25);
    churn(&old, 2);
}

/// Forks, runs `child` in the child (its result is the exit status: 0 for true), waits, and
/// returns whether the child succeeded.
#[cfg(target_os = "linux")]
fn in_child(child: impl FnOnce() -> bool) -> bool {
    // SAFETY: the callers hold `SERIAL`, so no other thread of this process is linking at the
    // fork; the child only links, calls and drops handles, then `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(false);
        // SAFETY: ends the child without running the parent's destructors or test harness.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

#[cfg(target_os = "linux")]
#[test]
fn repeated_forks_map_no_new_chunks() {
    let _g = serial();
    let keep_kinds = kinds(50_000);
    let keep = link(&keep_kinds);
    call_and_check(&keep, &keep_kinds, 1);
    let (chunks, bytes) = (gatun::code::chunks_mapped(), mapped_code_bytes());
    for f in 0..30 {
        // the child runs the pre-fork stub and links into the pre-fork chunks
        assert!(in_child(|| {
            call_and_check(&keep, &keep_kinds, 2);
            let k = kinds(50_100 + f);
            let h = link(&k);
            call_and_check(&h, &k, 3);
            gatun::code::chunks_mapped() == chunks
        }));
        // and so does the parent, between forks (a server forking per subprocess)
        let k = kinds(50_200 + f);
        let h = link(&k);
        call_and_check(&h, &k, 4);
    }
    // after the forks, link/drop cycles of new signatures reuse the spare chunk
    for i in 0..100 {
        let k = kinds(50_300 + i);
        let h = link(&k);
        call_and_check(&h, &k, 5);
    }
    call_and_check(&keep, &keep_kinds, 6);
    let grown = gatun::code::chunks_mapped() - chunks;
    assert!(grown <= 1, "{grown} chunks mapped across 30 forks");
    assert!(mapped_code_bytes() <= bytes + 64 * 1024);
}

#[cfg(target_os = "linux")]
#[test]
fn child_stubs_survive_the_parent_reusing_their_memory() {
    let _g = serial();
    child_survives_parent_reuse(60_000, || {}, || {});
}

#[cfg(target_os = "linux")]
#[test]
fn without_file_descriptors_for_the_copies_pre_fork_chunks_are_retired() {
    let _g = serial();
    let mut saved = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    assert_eq!(
        // SAFETY: reads this process's file descriptor limit.
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut saved) },
        0
    );
    let restore = move || {
        // SAFETY: restores the limit read above.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &saved) }, 0);
    };
    child_survives_parent_reuse(
        70_000,
        move || {
            // make sure an empty spare chunk exists at the fork: three chunks' worth of
            // 16-byte code, dropped (at least two chunks held only these, and the first to
            // empty becomes the spare if there is none)
            let pieces: Vec<_> = (0..3 * 4096)
                // SAFETY: `ret`, never called.
                .map(|_| unsafe { gatun::code::ExecutableCode::new(&[0xC3]) }.unwrap())
                .collect();
            drop(pieces);
            // the lowest free descriptor becomes the limit: the fork handler's memfd_create
            // fails (EMFILE), so every chunk is retired in both processes
            // SAFETY: duplicates and closes a descriptor.
            let free = unsafe {
                let fd = libc::dup(0);
                libc::close(fd);
                fd
            };
            let low = libc::rlimit {
                rlim_cur: free as libc::rlim_t,
                rlim_max: saved.rlim_max,
            };
            // SAFETY: lowers this process's soft limit.
            assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &low) }, 0);
        },
        restore,
    );
    // the retired spare is unmapped at the next allocation: link/drop cycles reuse one new
    // spare instead of mapping a chunk each time
    let before = gatun::code::chunks_mapped();
    for i in 0..100 {
        let k = kinds(72_000 + i);
        let h = link(&k);
        call_and_check(&h, &k, 5);
    }
    let grown = gatun::code::chunks_mapped() - before;
    assert!(grown <= 2, "{grown} chunks mapped for 100 link/drop cycles");
}

/// Links 50 handles (shapes from `base`), runs `before_fork`, forks, runs `after_fork` in the
/// parent, which then frees 25 of them (filled with int3) and links a few new stubs into their
/// memory before the child calls all 50.
#[cfg(target_os = "linux")]
fn child_survives_parent_reuse(base: usize, before_fork: impl FnOnce(), after_fork: impl FnOnce()) {
    let mut old: Vec<(DowncallHandle, Vec<usize>)> = (base..base + 50)
        .map(|n| (link(&kinds(n)), kinds(n)))
        .collect();
    let mut fds = [0; 2];
    // SAFETY: a fresh pipe.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    before_fork();
    // SAFETY: the callers hold `SERIAL`, so no other thread of this process is linking at the
    // fork; the child only reads the pipe and calls handles, then `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let mut b = 0u8;
        // SAFETY: reads one byte into `b`; returns once the parent has reused the memory.
        let n = unsafe { libc::read(fds[0], (&mut b as *mut u8).cast(), 1) };
        let ok = n == 1
            && std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                for (h, k) in &old {
                    call_and_check(h, k, 9);
                }
            }))
            .is_ok();
        // SAFETY: ends the child without running the parent's destructors or test harness.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    // the parent frees the first 25 (filled with int3) and links a few new stubs into them
    // (not all: a stub of another signature over an old entry would reject the old handle's
    // values and fall back to the trampoline, hiding the corruption), while the child still
    // holds them
    after_fork();
    let keep = old.split_off(25);
    drop(old);
    let new: Vec<(DowncallHandle, Vec<usize>)> = (base + 1000..base + 1005)
        .map(|n| (link(&kinds(n)), kinds(n)))
        .collect();
    for (h, k) in keep.iter().chain(&new) {
        call_and_check(h, k, 1);
    }
    // SAFETY: writes one byte to the pipe's write end.
    assert_eq!(unsafe { libc::write(fds[1], [1u8].as_ptr().cast(), 1) }, 1);
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    // SAFETY: our pipe's fds.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed: status {status:#x}"
    );
}
