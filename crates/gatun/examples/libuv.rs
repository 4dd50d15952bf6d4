//! libuv through `uv.h`: an event loop with a repeating timer whose callback stops and closes
//! it after three ticks (a close callback confirms), and a `uv_queue_work` request whose work
//! callback runs on libuv's thread pool (a `Send + Sync` upcall) while its after-work callback
//! runs back on the loop thread (a confined upcall). Handle sizes come from `uv_handle_size`,
//! the run mode from the header's `UV_RUN_DEFAULT`.
//!
//! `cargo run -p gatun --example libuv` prints:
//! ```text
//! timer: tick 1, tick 2, tick 3, stopped, closed
//! work: 1 + 2 + ... + 100 = 5050 on a pool thread: true, after work on the loop thread: true, status 0
//! uv_run(UV_RUN_DEFAULT) = 0, uv_loop_close = 0
//! ```
use gatun::cdecl::{Declarations, HeaderOptions, Library};
use gatun::{linker::SymbolLookup, memory::*, Linker, Value};
use std::sync::{atomic::AtomicU64, atomic::Ordering::SeqCst, Mutex};
use std::{cell::RefCell, error::Error, thread};

pub fn run() -> Result<String, Box<dyn Error>> {
    let decls = Declarations::from_headers(["uv.h"], &HeaderOptions::default())?;
    // Enumeration constants of uv.h (`int`, as the enum parameters they are passed for).
    let constant = |name: &'static str| decls.constant(name).and_then(|c| c.to_value()).ok_or(name);
    let (uv_timer, uv_work) = (constant("UV_TIMER")?, constant("UV_WORK")?);
    let run_default = constant("UV_RUN_DEFAULT")?;
    let callback = |typedef: &str| decls.function_pointer(typedef);
    let (close_cb, timer_cb) = (callback("uv_close_cb")?, callback("uv_timer_cb")?);
    let (work_cb, after_work_cb) = (callback("uv_work_cb")?, callback("uv_after_work_cb")?);
    // SAFETY: loading libuv runs no initialiser with preconditions.
    let uv = Library::new(unsafe { SymbolLookup::library("libuv.so.1") }?, decls);
    let f = |name: &str| uv.function(name); // linked on first use, then kept
    let (arena, timer_log, work_log) = (
        Arena::confined(),
        RefCell::new(Vec::new()),
        RefCell::new(String::new()),
    );

    let closed = Linker::native().upcall_stub_confined(
        &close_cb,
        |_| {
            timer_log.borrow_mut().push("closed".into());
            Ok(Value::Void)
        },
        &arena,
    )?;
    let tick = Linker::native().upcall_stub_confined(
        &timer_cb,
        |args| {
            let mut log = timer_log.borrow_mut();
            let n = log.len() + 1;
            log.push(format!("tick {n}"));
            if log.len() == 3 {
                log.push("stopped".into());
                // SAFETY: `args[0]` is the live timer handle (a `uv_handle_t` too); the close
                // callback outlives the loop.
                unsafe {
                    f("uv_timer_stop")?.invoke(&[args[0]])?;
                    f("uv_close")?.invoke(&[args[0], closed.as_value()])?;
                }
            }
            Ok(Value::Void)
        },
        &arena,
    )?;
    let (sum, pool_thread) = (AtomicU64::new(0), Mutex::new(None));
    let work = Linker::native().upcall_stub(
        &work_cb,
        |_| {
            sum.store((1..=100).sum(), SeqCst);
            *pool_thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(thread::current().id());
            Ok(Value::Void)
        },
        &arena,
    )?;
    let loop_thread = thread::current().id();
    let after_work = Linker::native().upcall_stub_confined(
        &after_work_cb,
        |args| {
            let pool = *pool_thread.lock().unwrap_or_else(|e| e.into_inner());
            *work_log.borrow_mut() = format!(
                "work: 1 + 2 + ... + 100 = {} on a pool thread: {}, after work on the loop \
                 thread: {}, status {}\n",
                sum.load(SeqCst),
                pool.is_some_and(|id| id != loop_thread),
                thread::current().id() == loop_thread,
                args.get::<i32>(1)?,
            );
            Ok(Value::Void)
        },
        &arena,
    )?;

    // SAFETY: the calls match uv.h; the loop, timer and request are allocated with the sizes
    // libuv gives and live (in `arena`) until the loop is closed; every callback has the type
    // its parameter declares and outlives the loop.
    let (ran, loop_closed) = unsafe {
        let size = |name, args: &[Value]| -> Result<usize, Box<dyn Error>> {
            Ok(f(name)?.invoke(args)?.as_usize().ok_or("size_t")?)
        };
        // 16: the alignment malloc gives, which libuv's structs need at most.
        let uv_loop = arena.allocate(size("uv_loop_size", &[])?, 16)?;
        let timer = arena.allocate(size("uv_handle_size", &[uv_timer])?, 16)?;
        let request = arena.allocate(size("uv_req_size", &[uv_work])?, 16)?;
        f("uv_loop_init")?.invoke(&[uv_loop.into()])?;
        f("uv_timer_init")?.invoke(&[uv_loop.into(), timer.into()])?;
        f("uv_timer_start")?.invoke(&[timer.into(), tick.as_value(), 1.into(), 1.into()])?;
        let work_args = [
            uv_loop.into(),
            request.into(),
            work.as_value(),
            after_work.as_value(),
        ];
        f("uv_queue_work")?.invoke(&work_args)?;
        let ran = f("uv_run")?.invoke(&[uv_loop.into(), run_default])?;
        (ran, f("uv_loop_close")?.invoke(&[uv_loop.into()])?)
    };
    Ok(format!(
        "timer: {}\n{}uv_run(UV_RUN_DEFAULT) = {ran}, uv_loop_close = {loop_closed}\n",
        timer_log.take().join(", "),
        work_log.take()
    ))
}

fn main() -> Result<(), Box<dyn Error>> {
    print!("{}", run()?);
    Ok(())
}
