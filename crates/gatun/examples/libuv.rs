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
use gatun::cdecl::{Declarations, HeaderOptions};
use gatun::{linker::SymbolLookup, memory::*, Linker, Value};
use std::sync::{atomic::AtomicU64, atomic::Ordering::SeqCst, Mutex};
use std::{cell::RefCell, error::Error, thread};

pub fn run() -> Result<String, Box<dyn Error>> {
    let decls = Declarations::from_headers(["uv.h"], &HeaderOptions::default())?;
    // SAFETY: loading libuv runs no initialiser with preconditions.
    let lib = unsafe { SymbolLookup::library("libuv.so.1") }?;
    let link = |name: &str| decls.link(&lib, name); // each function linked once, here
    let (loop_size, loop_init, run, loop_close) = (
        link("uv_loop_size")?,
        link("uv_loop_init")?,
        link("uv_run")?,
        link("uv_loop_close")?,
    );
    let (handle_size, req_size) = (link("uv_handle_size")?, link("uv_req_size")?);
    let (timer_init, timer_start) = (link("uv_timer_init")?, link("uv_timer_start")?);
    let (timer_stop, close, queue_work) = (
        link("uv_timer_stop")?,
        link("uv_close")?,
        link("uv_queue_work")?,
    );
    // Enumeration constants of uv.h (`int`, as the enum parameters they are passed for).
    let constant = |name: &'static str| decls.constant(name).and_then(|c| c.to_value()).ok_or(name);
    let (arena, timer_log, work_log) = (
        Arena::confined(),
        RefCell::new(Vec::new()),
        RefCell::new(String::new()),
    );
    let callback = |typedef: &str| decls.function_pointer(typedef);

    let closed = Linker::native().upcall_stub_confined(
        &callback("uv_close_cb")?,
        |_| Ok(Value::Void).inspect(|_| timer_log.borrow_mut().push("closed".to_string())),
        &arena,
    )?;
    let tick = Linker::native().upcall_stub_confined(
        &callback("uv_timer_cb")?,
        |args| {
            let mut log = timer_log.borrow_mut();
            let n = log.len() + 1;
            log.push(format!("tick {n}"));
            if log.len() == 3 {
                log.push("stopped".into());
                // SAFETY: `args[0]` is the live timer handle (a `uv_handle_t` too); the close
                // callback outlives the loop.
                unsafe {
                    timer_stop.invoke(&[args[0]])?;
                    close.invoke(&[args[0], closed.as_value()])?;
                }
            }
            Ok(Value::Void)
        },
        &arena,
    )?;
    let (sum, pool_thread) = (AtomicU64::new(0), Mutex::new(None));
    let work = Linker::native().upcall_stub(
        &callback("uv_work_cb")?,
        |_| {
            sum.store((1..=100).sum(), SeqCst);
            *pool_thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(thread::current().id());
            Ok(Value::Void)
        },
        &arena,
    )?;
    let loop_thread = thread::current().id();
    let after_work = Linker::native().upcall_stub_confined(
        &callback("uv_after_work_cb")?,
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
        let size = |f: &gatun::linker::DowncallHandle, args: &[Value]| -> gatun::Result<usize> {
            Ok(f.invoke(args)?.as_u64().unwrap_or(0) as usize)
        };
        // 16: the alignment malloc gives, which libuv's structs need at most.
        let uv_loop = arena.allocate(size(&loop_size, &[])?, 16)?;
        let timer = arena.allocate(size(&handle_size, &[constant("UV_TIMER")?])?, 16)?;
        let request = arena.allocate(size(&req_size, &[constant("UV_WORK")?])?, 16)?;
        loop_init.invoke(&[uv_loop.into()])?;
        timer_init.invoke(&[uv_loop.into(), timer.into()])?;
        timer_start.invoke(&[timer.into(), tick.as_value(), Value::U64(1), Value::U64(1)])?;
        queue_work.invoke(&[
            uv_loop.into(),
            request.into(),
            work.as_value(),
            after_work.as_value(),
        ])?;
        let ran = run.invoke(&[uv_loop.into(), constant("UV_RUN_DEFAULT")?])?;
        (ran, loop_close.invoke(&[uv_loop.into()])?)
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
