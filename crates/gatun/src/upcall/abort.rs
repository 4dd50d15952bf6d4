//! What an upcall does when it cannot go on: the panic guard around the closure, the abort
//! (with its `gatun: upcall <descriptor>: ...` message on stderr), the confined stubs' thread
//! check, and the return mismatch errors the dispatchers report before aborting.

use std::fmt;
use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::context::Context;
use super::UpcallArgs;
use crate::error::{Error, Result};
use crate::layout::FunctionDescriptor;
use crate::value::Value;

/// Runs `f` (one upcall's work) and aborts the process with a message naming `descriptor`
/// if it returns an error or panics: a panic is caught first, so it never unwinds into C.
/// An error aborts inside the caught closure, so only the panic payload (two words) comes out
/// of `catch_unwind`.
#[inline(always)]
pub(crate) fn guard(descriptor: &FunctionDescriptor, f: impl FnOnce() -> Result<()>) {
    // AssertUnwindSafe: on a panic the process aborts, so no broken state is ever observed.
    let run = AssertUnwindSafe(|| {
        if let Err(e) = f() {
            abort_upcall(descriptor, format_args!("{e}"));
        }
    });
    if let Err(payload) = catch_unwind(run) {
        abort_panicked(descriptor, payload);
    }
}

/// [`abort_upcall`] for a caught panic, with its message if it has one.
#[cold]
#[inline(never)]
pub(crate) fn abort_panicked(
    descriptor: &FunctionDescriptor,
    payload: Box<dyn std::any::Any + Send>,
) -> ! {
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(non-string payload)");
    abort_upcall(descriptor, format_args!("the closure panicked: {message}"))
}

/// Aborts unless the calling thread made the confined stub of `ctx` (out of line: only
/// confined stubs pay for the thread-local read).
#[cold]
#[inline(never)]
pub(crate) fn check_owner(ctx: &Context<'_>) {
    check_thread(ctx.owner, &ctx.descriptor);
}

/// Aborts unless the calling thread is `owner` (its [`thread_mark`]): the check of every
/// confined stub, dynamic or typed, naming the stub's `descriptor`.
#[inline(always)]
pub(crate) fn check_thread(owner: usize, descriptor: &FunctionDescriptor) {
    if owner != thread_mark() {
        abort_upcall(
            descriptor,
            format_args!("called on a thread other than the one that made this confined stub"),
        );
    }
}

/// Prints why an upcall cannot continue and aborts the process (see the [upcall module
/// documentation](crate::upcall)).
#[cold]
#[inline(never)]
pub(crate) fn abort_upcall(descriptor: &FunctionDescriptor, what: fmt::Arguments<'_>) -> ! {
    // Never panic on a closed stderr.
    let _ = writeln!(
        std::io::stderr(),
        "gatun: upcall {descriptor}: {what}; aborting the process (an upcall cannot return an \
         error to C or unwind into C)"
    );
    std::process::abort()
}

/// An address unique to the calling thread among live threads (its copy of a thread-local).
/// No destructor and a const initialiser: never fails, never allocates, also on threads
/// created in C.
#[inline]
pub(crate) fn thread_mark() -> usize {
    thread_local! {
        static MARK: u8 = const { 0 };
    }
    MARK.with(|m| m as *const u8 as usize)
}

/// The error of a result of another kind than the declared one (`expected`).
pub(crate) fn return_mismatch(expected: impl fmt::Display, found: &Value<'_>) -> Error {
    Error::ValueMismatch {
        position: "upcall return".into(),
        expected: expected.to_string(),
        found: found.kind_name().into(),
    }
}

/// The error of a struct return that is neither a segment of at least `size` bytes nor `void`.
#[cold]
#[inline(never)]
pub(crate) fn group_return_mismatch(size: usize, found: &Value<'_>) -> Error {
    return_mismatch(
        format_args!(
            "a segment of at least {size} bytes, or void after writing the return segment"
        ),
        found,
    )
}

/// The context of `args`, read back from memory (a volatile read: the compiler then keeps no
/// copy of the context pointer in a register across the closure call for the cold paths).
///
/// # Safety
/// `args` was made by a dispatcher for a live context.
#[inline(always)]
pub(crate) unsafe fn args_context<'c>(args: &UpcallArgs<'_>) -> &'c Context<'c> {
    // SAFETY: `args.ctx` is a live context (caller).
    unsafe { &*std::ptr::read_volatile(&args.ctx).cast::<Context<'c>>() }
}
