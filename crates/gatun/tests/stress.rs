//! Concurrency stress: 64 threads for a bounded time, each running its own deterministic
//! random sequence of operations over everything gatun shares between threads — the stub
//! cache, the code arena, `BufferStack`, `ArenaPool`, shared arenas, upcall stubs handed
//! across threads — with every result checked against a value computed in Rust:
//!
//! | operation | what it does | checked against |
//! |---|---|---|
//! | shared signature | links one of 16 signatures every thread links (one stub-cache entry shared, dropped and rebuilt as handles come and go), calls it, drops it or keeps it a while | the C checker's hash of the arguments and every returned leaf (`tests/prop/downcall.rs`) |
//! | distinct signature | the same with a signature of this thread's own share of the corpus | the same |
//! | handle pool | replaces a handle in a pool of 16 shared by all threads (its last user may be any thread) or calls one from it | the same |
//! | upcall made | makes an upcall stub for a generated signature, calls it through its C checker `call_cb_<i>` and puts it in a pool of 16 shared stubs, dropping the one it replaces | the closure checks every argument leaf; C checks every returned leaf |
//! | upcall called | calls a stub from the pool (made by any thread) through its C checker, and keeps it a while (so its last reference may drop on another thread) | the same |
//! | confined upcall | a confined stub made, called and dropped on this thread | the same |
//! | errno | a capturing handle of `sysv_set_errno`, and the system-call adapter over it (its capture buffer on the capture `BufferStack`) | the errno and result passed to C |
//! | qsort | the C library's `qsort` (one handle shared by all threads) with a typed comparator stub made for the call | Rust's sort |
//! | fork (Linux) | links a stub, forks; the child calls it and a stub linked in the child, then exits | the child's exit status (0 when every check passed) |
//!
//! The calls take their argument and result memory from a random allocator: a confined arena,
//! a `SharedArena` shared by all threads, a frame of a `BufferStack` shared by all threads
//! (sometimes under an outer frame released out of order; frames larger than the 1 KiB
//! block fall back to the heap), or a pooled arena of a shared `ArenaPool` (nested, the
//! outer one dropped first). The shared arena, stack and pool are replaced every few hundred
//! uses, so their memory is freed while other threads still hold the old ones. A call takes
//! a random path: the compiled stub, the trampoline (`interpreted()`), `invoke_raw`, or an
//! `Arguments` list.
//!
//! Each thread runs every operation once (the fork only on every 16th thread), then random
//! operations until the time is up, so every operation runs whatever the speed of the
//! machine (qemu, Wine, sanitizers) and no timing is asserted. `brief` runs 2 seconds
//! (`cargo test`); `long` is ignored and runs 60 (`cargo test -p gatun --test stress --
//! --ignored`). `GATUN_STRESS_SECS` sets either's duration in seconds, `GATUN_STRESS_SEED`
//! the base seed (decimal or `0x` hex). Thread `t`'s sequence of operations and values
//! depends only on the base seed and `t`; the interleaving of threads is the OS's. The
//! thread's name carries its seed, so a failure message (or panic) names it. The counts of
//! operations run are printed (`-- --nocapture`).
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

include!("prop/sigs.rs");
include!("prop/layouts.rs");
include!("prop/downcall.rs");
include!("prop/upcall.rs");

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use common::*;
use gatun::capture::adapt_system_call;
use gatun::layout::{MemoryLayout, ScalarKind};
use gatun::linker::{
    capture_state_layout, DowncallHandle, FunctionDescriptor as FD, Linker, LinkerOption, Symbol,
    SymbolLookup,
};
use gatun::memory::{linker_stack, Arena, ArenaPool, BufferStack, SegmentAllocator, SharedArena};
use gatun::{UpcallStub, Value};

const THREADS: usize = 64;
/// Signatures `0..SHARED` are linked by every thread; the rest of the corpus is dealt out to
/// the threads (`SHARED + t + k * THREADS`).
const SHARED: usize = 16;
/// Slots of the shared handle and stub pools.
const SLOTS: usize = 16;
/// Upcall stubs a thread keeps from the pool between operations.
const HELD: usize = 4;
/// Handles a thread keeps between operations.
const KEPT: usize = 4;
/// Per-thread block of the shared `BufferStack` and region of the shared `ArenaPool`, bytes.
const SCRATCH_BYTES: usize = 1024;
/// Uses of the shared arena, stack and pool before each is replaced.
const ARENA_USES: usize = 64;
const STACK_USES: usize = 256;
const POOL_USES: usize = 256;
/// How long a forked child may take before the test calls it hung (a guard against a
/// deadlock, not a timing check).
#[cfg(target_os = "linux")]
const CHILD_PATIENCE: Duration = Duration::from_secs(120);

const SECS_ENV: &str = "GATUN_STRESS_SECS";
const SEED_ENV: &str = "GATUN_STRESS_SEED";
const DEFAULT_SEED: u64 = 0x5eed_57e5_5000_0001;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Shared,
    Distinct,
    HandlePool,
    UpcallMade,
    UpcallCalled,
    UpcallConfined,
    Errno,
    Qsort,
    Fork,
}

/// Every operation with its weight in the random mix (out of 1000).
const OPS: [(Op, u64); 9] = [
    (Op::Shared, 220),
    (Op::Distinct, 160),
    (Op::HandlePool, 120),
    (Op::UpcallMade, 110),
    (Op::UpcallCalled, 160),
    (Op::UpcallConfined, 50),
    (Op::Errno, 120),
    (Op::Qsort, 58),
    (Op::Fork, if cfg!(target_os = "linux") { 2 } else { 0 }),
];

/// Where a call's argument and result memory comes from.
#[derive(Clone, Copy, Debug)]
enum Alloc {
    Confined,
    SharedArena,
    Stack,
    Pool,
}

/// A thread's random numbers (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        splitmix(&mut self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// Signature `i` of the corpus: its gatun shape and its C checkers.
struct Prop {
    shape: PropLayouts,
    /// `prop_<i>`, the downcall checker.
    checker: Symbol,
    /// `call_cb_<i>`, the upcall checker (`int32_t call_cb_<i>(R (*)(..))`).
    caller: Symbol,
}

/// A value shared by all threads and replaced every `every` uses: the replaced one is freed
/// by whichever thread drops its last reference, while others may still use it.
struct Swapped<T> {
    current: Mutex<(Arc<T>, usize)>,
    make: fn() -> T,
    every: usize,
}

impl<T> Swapped<T> {
    fn new(make: fn() -> T, every: usize) -> Swapped<T> {
        Swapped {
            current: Mutex::new((Arc::new(make()), 0)),
            make,
            every,
        }
    }

    fn get(&self) -> Arc<T> {
        let mut c = lock(&self.current);
        c.1 += 1;
        if c.1 < self.every {
            return Arc::clone(&c.0);
        }
        let old = std::mem::replace(&mut c.0, Arc::new((self.make)()));
        c.1 = 0;
        let new = Arc::clone(&c.0);
        drop(c);
        drop(old); // outside the lock: it may be the last reference
        new
    }
}

/// An upcall stub in the shared pool, with what its closure checks.
struct PooledStub<'s> {
    i: usize,
    check: Arc<CbCheck>,
    stub: UpcallStub<'s>,
}

/// Everything the threads share.
struct World<'s> {
    sigs: Vec<PropSig>,
    props: Vec<OnceLock<Prop>>,
    handles: Mutex<Vec<Option<(usize, DowncallHandle)>>>,
    stubs: Mutex<Vec<Option<Arc<PooledStub<'s>>>>>,
    /// What the pooled upcall stubs borrow.
    stub_arena: &'s SharedArena,
    arena: Swapped<SharedArena>,
    stack: Swapped<BufferStack>,
    pool: Swapped<ArenaPool>,
    /// `void qsort(void *, size_t, size_t, int (*)(const void *, const void *))`.
    qsort: DowncallHandle,
    set_errno: Symbol,
    deadline: Instant,
    /// Held while a thread forks: one fork at a time.
    #[cfg(target_os = "linux")]
    forking: Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    /// Calls of pooled or confined upcall closures on this thread.
    static CB_CALLS: Cell<usize> = const { Cell::new(0) };
}

impl<'s> World<'s> {
    /// The shared state, with the deadline `secs` after it is built.
    fn new(stub_arena: &'s SharedArena, secs: Duration) -> World<'s> {
        let sigs = prop_signatures(ABI);
        let qsort = SymbolLookup::default_lookup().find("qsort").unwrap();
        let qsort = Linker::native()
            .downcall(
                &qsort,
                &FD::of_void([V::ADDRESS, V::U64, V::U64, V::ADDRESS]),
                &[],
            )
            .unwrap();
        World {
            props: (0..sigs.len()).map(|_| OnceLock::new()).collect(),
            sigs,
            handles: Mutex::new((0..SLOTS).map(|_| None).collect()),
            stubs: Mutex::new((0..SLOTS).map(|_| None).collect()),
            stub_arena,
            arena: Swapped::new(Arena::shared, ARENA_USES),
            stack: Swapped::new(|| BufferStack::new(SCRATCH_BYTES, 16).unwrap(), STACK_USES),
            pool: Swapped::new(|| ArenaPool::new(SCRATCH_BYTES, 16).unwrap(), POOL_USES),
            qsort,
            set_errno: sym("sysv_set_errno"),
            // from now: building the corpus takes seconds under Wine
            deadline: Instant::now() + secs,
            #[cfg(target_os = "linux")]
            forking: Mutex::new(()),
        }
    }

    /// Signature `i`, built by the first thread that asks.
    fn prop(&self, i: usize) -> &Prop {
        self.props[i].get_or_init(|| Prop {
            shape: PropLayouts::new(i, &self.sigs[i]),
            checker: sym(&format!("prop_{i}")),
            caller: sym(&format!("call_cb_{i}")),
        })
    }

    /// A signature every thread uses, or one of thread `t`'s own.
    fn pick(&self, rng: &mut Rng, t: usize, shared: bool) -> usize {
        if shared {
            rng.below(SHARED)
        } else {
            let own = (self.sigs.len() - SHARED - t).div_ceil(THREADS);
            SHARED + t + rng.below(own) * THREADS
        }
    }
}

/// What a thread keeps between operations.
struct Local<'s> {
    t: usize,
    rng: Rng,
    /// Handles linked earlier (dropped at random later).
    kept: Vec<(usize, DowncallHandle)>,
    /// Stubs taken from the pool (their last reference may drop here).
    held: Vec<Arc<PooledStub<'s>>>,
}

/// Calls signature `i` through `handle` on a random path with memory from a random allocator.
fn call_checked<'s>(
    world: &World<'s>,
    local: &mut Local<'s>,
    i: usize,
    handle: &DowncallHandle,
) -> Result<(), String> {
    let shape = &world.prop(i).shape;
    let rng = &mut local.rng;
    let seed = rng.next();
    let path = [Path::Stub, Path::Trampoline, Path::Raw, Path::Arguments][rng.below(4)];
    let interp;
    let handle = if let Path::Trampoline = path {
        interp = handle.interpreted();
        &interp
    } else {
        handle
    };
    let alloc = [
        Alloc::Confined,
        Alloc::SharedArena,
        Alloc::Stack,
        Alloc::Pool,
    ][rng.below(4)];
    let call = |a: &dyn SegmentAllocator| call_prop(i, shape, handle, seed, path, a);
    let in_alloc = |e: String| format!("{e} (memory from {alloc:?})");
    match alloc {
        Alloc::Confined => call(&Arena::confined()),
        Alloc::SharedArena => call(&*world.arena.get()),
        Alloc::Stack => {
            // what call_prop takes: each argument and the result aligned to 16, a scalar result
            let bytes = shape
                .args
                .iter()
                .chain(&shape.ret)
                .map(|(l, _)| l.byte_size().next_multiple_of(16) + 16)
                .sum::<usize>()
                + 16;
            let stack = world.stack.get();
            let outer = if rng.chance(30) {
                Some(stack.push_frame(16, 16).map_err(|e| e.to_string())?)
            } else {
                None
            };
            let frame = stack.push_frame(bytes, 16).map_err(|e| e.to_string())?;
            // released out of order: the frame above is still live
            drop(outer);
            call(&frame)
        }
        Alloc::Pool => {
            let pool = world.pool.get();
            let outer = pool.take();
            outer.allocate(8, 8).map_err(|e| e.to_string())?;
            let inner = pool.take();
            if rng.chance(50) {
                drop(outer); // out of order: the inner arena is still open
                call(&inner)
            } else {
                call(&inner)?;
                drop(inner);
                call(&outer)
            }
        }
    }
    .map_err(in_alloc)
}

/// Links signature `i` (shared or this thread's), calls it, and keeps or drops the handle.
fn link_and_call<'s>(world: &World<'s>, local: &mut Local<'s>, shared: bool) -> Result<(), String> {
    let i = world.pick(&mut local.rng, local.t, shared);
    let prop = world.prop(i);
    let handle = prop
        .shape
        .link(&prop.checker)
        .map_err(|e| format!("linking prop_{i}: {e}"))?;
    call_checked(world, local, i, &handle)?;
    // re-call a kept handle, then keep this one or drop it
    if !local.kept.is_empty() {
        let k = local.rng.below(local.kept.len());
        let (j, kept) = local.kept[k].clone();
        call_checked(world, local, j, &kept)?;
    }
    if local.rng.chance(30) {
        if local.kept.len() == KEPT {
            let k = local.rng.below(KEPT);
            local.kept.swap_remove(k);
        }
        local.kept.push((i, handle));
    }
    Ok(())
}

/// Replaces a handle of the shared pool, or calls one.
fn handle_pool<'s>(world: &World<'s>, local: &mut Local<'s>) -> Result<(), String> {
    let slot = local.rng.below(SLOTS);
    let taken = lock(&world.handles)[slot].clone();
    match taken {
        Some((i, handle)) if local.rng.chance(60) => call_checked(world, local, i, &handle),
        _ => {
            let shared = local.rng.chance(50);
            let i = world.pick(&mut local.rng, local.t, shared);
            let prop = world.prop(i);
            let handle = prop
                .shape
                .link(&prop.checker)
                .map_err(|e| format!("linking prop_{i}: {e}"))?;
            call_checked(world, local, i, &handle)?;
            let old = lock(&world.handles)[slot].replace((i, handle));
            drop(old); // outside the lock: maybe the last handle of its stub
            Ok(())
        }
    }
}

/// Calls `stub` (for signature `i`, its closure checking with `check`) through `call_cb_<i>`.
fn call_back(
    world: &World<'_>,
    i: usize,
    stub: &UpcallStub<'_>,
    check: &CbCheck,
) -> Result<(), String> {
    let caller = Linker::native()
        .downcall(&world.prop(i).caller, &FD::of(V::I32, [V::ADDRESS]), &[])
        .map_err(|e| format!("linking call_cb_{i}: {e}"))?;
    let before = CB_CALLS.get();
    // SAFETY: `int32_t call_cb_<i>(R (*)(..))` calls the stub once with its descriptor's
    // arguments; the caller keeps the stub alive across the call.
    let rc =
        unsafe { caller.invoke(&[stub.as_value()]) }.map_err(|e| format!("call_cb_{i}: {e}"))?;
    let calls = CB_CALLS.get() - before;
    let fail = |e: String| format!("call_cb_{i} ({}): {e}", check.descriptor());
    if calls != 1 {
        return Err(fail(format!("{calls} calls of the closure on this thread")));
    }
    let errs = check.errors();
    if !errs.is_empty() {
        return Err(fail(errs));
    }
    cb_result(rc).map_err(fail)
}

/// Makes a stub for a generated signature, calls it, and puts it in the shared pool.
fn upcall_made<'s>(world: &World<'s>, local: &mut Local<'s>) -> Result<(), String> {
    let shared = local.rng.chance(50);
    let i = world
        .pick(&mut local.rng, local.t, shared)
        .min(PROP_CB_SIGNATURES - 1);
    let check = Arc::new(CbCheck::new(i, &world.sigs[i]));
    let closure_check = Arc::clone(&check);
    let stub = Linker::native()
        .upcall_stub(
            check.descriptor(),
            move |a| {
                CB_CALLS.set(CB_CALLS.get() + 1);
                closure_check.call(a)
            },
            world.stub_arena,
        )
        .map_err(|e| format!("upcall stub for call_cb_{i}: {e}"))?;
    call_back(world, i, &stub, &check)?;
    let pooled = Arc::new(PooledStub { i, check, stub });
    let slot = local.rng.below(SLOTS);
    let old = lock(&world.stubs)[slot].replace(pooled);
    drop(old); // outside the lock: other threads may still hold and call it
    Ok(())
}

/// Calls a stub of the shared pool (made by any thread) and keeps it a while.
fn upcall_called<'s>(world: &World<'s>, local: &mut Local<'s>) -> Result<(), String> {
    let slot = local.rng.below(SLOTS);
    let Some(pooled) = lock(&world.stubs)[slot].clone() else {
        return upcall_made(world, local);
    };
    call_back(world, pooled.i, &pooled.stub, &pooled.check)?;
    if local.rng.chance(50) {
        if local.held.len() == HELD {
            let k = local.rng.below(HELD);
            local.held.swap_remove(k);
        }
        local.held.push(pooled);
    }
    Ok(())
}

/// A confined stub made, called and dropped on this thread.
fn upcall_confined<'s>(world: &World<'s>, local: &mut Local<'s>) -> Result<(), String> {
    let i = world
        .pick(&mut local.rng, local.t, false)
        .min(PROP_CB_SIGNATURES - 1);
    let check = CbCheck::new(i, &world.sigs[i]);
    let arena = Arena::confined();
    let here = Cell::new(0); // not Sync: only a confined stub may capture it
    let stub = Linker::native()
        .upcall_stub_confined(
            check.descriptor(),
            |a| {
                here.set(here.get() + 1);
                CB_CALLS.set(CB_CALLS.get() + 1);
                check.call(a)
            },
            &arena,
        )
        .map_err(|e| format!("confined upcall stub for call_cb_{i}: {e}"))?;
    call_back(world, i, &stub, &check)?;
    drop(stub);
    match here.get() {
        1 => Ok(()),
        n => Err(format!("confined call_cb_{i}: {n} calls")),
    }
}

/// errno through a capturing handle and through the system-call adapter.
fn errno<'s>(world: &World<'s>, local: &mut Local<'s>) -> Result<(), String> {
    let rng = &mut local.rng;
    let handle = Linker::native()
        .downcall(
            &world.set_errno,
            &FD::of(V::I32, [V::I32, V::I32]),
            &[LinkerOption::CaptureCallState(&["errno"])],
        )
        .map_err(|e| e.to_string())?;
    let e = 1 + rng.below(120) as i32;
    let r = rng.next() as i32;
    let layout = capture_state_layout();
    let at = layout.byte_offset_of("errno").map_err(|e| e.to_string())?;
    let check = |state: gatun::memory::MemorySegment<'_>| -> Result<(), String> {
        // SAFETY: `int sysv_set_errno(int value, int ret)` sets errno and returns `ret`; the
        // capture segment comes first and has the capture layout.
        let got = unsafe { handle.invoke(&[Value::Segment(state), Value::I32(e), Value::I32(r)]) }
            .map_err(|e| e.to_string())?;
        let seen = state.get::<i32>(at).map_err(|e| e.to_string())?;
        if (got, seen) != (Value::I32(r), e) {
            return Err(format!(
                "sysv_set_errno({e}, {r}) returned {got:?} and captured errno {seen}"
            ));
        }
        Ok(())
    };
    if rng.chance(50) {
        let stack = world.stack.get();
        let frame = stack
            .push_frame_layout(&layout)
            .map_err(|e| e.to_string())?;
        check(frame.allocate_layout(&layout).map_err(|e| e.to_string())?)?;
    } else {
        let pool = world.pool.get();
        let pooled = pool.take();
        check(pooled.allocate_layout(&layout).map_err(|e| e.to_string())?)?;
    }
    let adapted = adapt_system_call(&handle, "errno").map_err(|e| e.to_string())?;
    let ok = r.checked_abs().unwrap_or(0);
    for (ret, want) in [(-1, -i64::from(e)), (ok, i64::from(ok))] {
        // SAFETY: as above.
        let got = unsafe { adapted.invoke(&[Value::I32(e), Value::I32(ret)]) }
            .map_err(|e| e.to_string())?;
        if got != want {
            return Err(format!(
                "adapted sysv_set_errno({e}, {ret}) returned {got}, want {want}"
            ));
        }
    }
    Ok(())
}

/// The C library's `qsort` (a handle shared by all threads) with a comparator stub made here.
fn qsort<'s>(world: &World<'s>, local: &mut Local<'s>) -> Result<(), String> {
    let rng = &mut local.rng;
    let n = 1 + rng.below(48);
    let mut values: Vec<i32> = (0..n).map(|_| rng.next() as i32 >> rng.below(31)).collect();
    let descending = rng.chance(50);
    let arena = Arena::confined();
    let xs = arena
        .allocate_from_slice(&values)
        .map_err(|e| e.to_string())?;
    type Cmp = unsafe extern "C" fn(*const c_void, *const c_void) -> i32;
    let cmp = Linker::native()
        .upcall_typed::<Cmp>(
            move |a: *const c_void, b: *const c_void| {
                // SAFETY: qsort passes pointers to two elements of the int array.
                let (a, b) = unsafe { (*a.cast::<i32>(), *b.cast::<i32>()) };
                let o = a.cmp(&b) as i32;
                if descending {
                    -o
                } else {
                    o
                }
            },
            &arena,
        )
        .map_err(|e| e.to_string())?;
    let args = [
        Value::Segment(xs),
        Value::U64(n as u64),
        Value::U64(4),
        cmp.as_value(),
    ];
    // SAFETY: `xs` holds `n` ints of 4 bytes; `cmp` compares ints and lives until after the call.
    unsafe { world.qsort.invoke(&args) }.map_err(|e| e.to_string())?;
    values.sort_unstable();
    if descending {
        values.reverse();
    }
    let sorted = (0..n)
        .map(|k| xs.get::<i32>(k * 4))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    if sorted != values {
        return Err(format!("qsort gave {sorted:?}, want {values:?}"));
    }
    Ok(())
}

/// Forks with live stubs; the child calls a stub linked before the fork and one it links,
/// checks both, and exits 0.
#[cfg(target_os = "linux")]
fn fork<'s>(world: &World<'s>, local: &mut Local<'s>) -> Result<(), String> {
    // One fork at a time (a thread that finds another forking waits), so that every Fork
    // counted is a fork made.
    let _one = world.forking.lock().unwrap_or_else(|e| e.into_inner());
    let (i, j) = (
        world.pick(&mut local.rng, local.t, true),
        world.pick(&mut local.rng, local.t, false),
    );
    let (pre, post) = (world.prop(i), world.prop(j));
    let handle = pre.shape.link(&pre.checker).map_err(|e| e.to_string())?;
    let (s1, s2) = (local.rng.next(), local.rng.next());
    let child = || -> Result<(), String> {
        let arena = Arena::confined();
        call_prop(i, &pre.shape, &handle, s1, Path::Stub, &arena)?;
        let new = post.shape.link(&post.checker).map_err(|e| e.to_string())?;
        call_prop(j, &post.shape, &new, s2, Path::Stub, &arena)?;
        call_prop(i, &pre.shape, &handle, s2, Path::Stub, &arena)
    };
    // SAFETY: the child runs only `child` (no lock another thread may have held at the fork:
    // the symbols, shapes and `prop_last_hash` handle are built already, and gatun's fork
    // handlers hand the child its stub cache and code arena unlocked) and then `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        let code = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)) {
            Ok(Ok(())) => 0,
            Ok(Err(e)) => {
                let e = format!("stress child: {e}\n");
                // SAFETY: writes the message's bytes to standard error.
                unsafe { libc::write(2, e.as_ptr().cast(), e.len()) };
                1
            }
            Err(_) => 2,
        };
        // SAFETY: ends the child without running the parent's destructors or atexit handlers.
        unsafe { libc::_exit(code) };
    }
    let start = Instant::now();
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child, without blocking.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break;
        }
        if r < 0 {
            return Err(format!("waitpid: {}", std::io::Error::last_os_error()));
        }
        if start.elapsed() > CHILD_PATIENCE {
            // SAFETY: kills and reaps our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Err(format!(
                "the child forked with prop_{i} and prop_{j} did not exit in {CHILD_PATIENCE:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!(
            "the child forked with prop_{i} and prop_{j} ended with wait status {status:#x}"
        ));
    }
    // and the parent's stub still works
    call_prop(i, &pre.shape, &handle, s1, Path::Stub, &Arena::confined())
}

#[cfg(not(target_os = "linux"))]
fn fork(_: &World<'_>, _: &mut Local<'_>) -> Result<(), String> {
    unreachable!("fork has weight 0 off Linux")
}

fn run_op<'s>(world: &World<'s>, local: &mut Local<'s>, op: Op) -> Result<(), String> {
    match op {
        Op::Shared => link_and_call(world, local, true),
        Op::Distinct => link_and_call(world, local, false),
        Op::HandlePool => handle_pool(world, local),
        Op::UpcallMade => upcall_made(world, local),
        Op::UpcallCalled => upcall_called(world, local),
        Op::UpcallConfined => upcall_confined(world, local),
        Op::Errno => errno(world, local),
        Op::Qsort => qsort(world, local),
        Op::Fork => fork(world, local),
    }
}

/// Thread `t`: every operation once, then random ones until the deadline. Returns how many
/// of each ran.
fn worker<'s>(world: &World<'s>, t: usize, seed: u64) -> [u64; OPS.len()] {
    let mut local = Local {
        t,
        rng: Rng(seed),
        kept: Vec::new(),
        held: Vec::new(),
    };
    let mut counts = [0u64; OPS.len()];
    let first = OPS
        .iter()
        .enumerate()
        .filter(|(_, (op, w))| *w > 0 && (*op != Op::Fork || t % 16 == 0))
        .map(|(k, _)| k);
    let total: u64 = OPS.iter().map(|(_, w)| w).sum();
    let mut run = |local: &mut Local<'s>, k: usize, n: u64| {
        if let Err(e) = run_op(world, local, OPS[k].0) {
            panic!(
                "thread {t} (seed {seed:#x}), operation {n} ({:?}): {e}",
                OPS[k].0
            );
        }
        counts[k] += 1;
    };
    let mut n = 0;
    for k in first {
        run(&mut local, k, n);
        n += 1;
    }
    while Instant::now() < world.deadline {
        let mut x = local.rng.next() % total;
        let k = OPS
            .iter()
            .position(|&(_, w)| {
                let hit = x < w;
                x = x.saturating_sub(w);
                hit
            })
            .unwrap();
        run(&mut local, k, n);
        n += 1;
    }
    counts
}

/// Seconds from `GATUN_STRESS_SECS`, or `default`.
fn duration(default: Duration) -> Duration {
    match std::env::var(SECS_ENV) {
        Ok(s) => Duration::from_secs_f64(
            s.trim()
                .parse::<f64>()
                .unwrap_or_else(|e| panic!("{SECS_ENV}={s}: {e}, want seconds")),
        ),
        Err(_) => default,
    }
}

/// The base seed from `GATUN_STRESS_SEED`, or the default.
fn base_seed() -> u64 {
    match std::env::var(SEED_ENV) {
        Ok(s) => {
            let s = s.trim();
            match s.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => s.parse(),
            }
            .unwrap_or_else(|e| panic!("{SEED_ENV}={s}: {e}, want a number"))
        }
        Err(_) => DEFAULT_SEED,
    }
}

fn stress(default: Duration) {
    let secs = duration(default);
    let base = base_seed();
    // Built before any thread starts (and before any fork): the test library, the hash
    // reader's handle, the linker and capture stacks.
    natives();
    last_hash();
    linker_stack();
    let stub_arena = Arena::shared();
    let world = World::new(&stub_arena, secs);
    let counts = std::thread::scope(|s| {
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let mut x = base ^ (t as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let seed = splitmix(&mut x);
                let world = &world;
                std::thread::Builder::new()
                    .name(format!("stress-{t} seed {seed:#x}"))
                    .spawn_scoped(s, move || worker(world, t, seed))
                    .unwrap()
            })
            .collect();
        threads
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    let mut totals = [0u64; OPS.len()];
    for c in &counts {
        for (t, n) in totals.iter_mut().zip(c) {
            *t += n;
        }
    }
    let listed: Vec<String> = OPS
        .iter()
        .zip(&totals)
        .map(|((op, _), n)| format!("{op:?} {n}"))
        .collect();
    println!(
        "stress: {THREADS} threads, {secs:?}, base seed {base:#x} ({SEED_ENV}): {} operations: {}",
        totals.iter().sum::<u64>(),
        listed.join(", ")
    );
    for ((op, w), n) in OPS.iter().zip(&totals) {
        if *w > 0 {
            assert!(*n > 0, "{op:?} never ran");
        }
    }
}

#[test]
fn brief() {
    stress(Duration::from_secs(2));
}

#[test]
#[ignore = "runs 60 s (GATUN_STRESS_SECS sets the duration)"]
fn long() {
    stress(Duration::from_secs(60));
}
