//! The operating system's per-thread error states, at the bottom layer with `layout`, `value`
//! and `memory` (no `use` of any other gatun module): the address of this thread's `errno`
//! ([`thread_errno`]), and on Windows the declarations of the last-error and Winsock-error
//! functions ([`last_error`]). The backends' capture code and the `capture` layer's system-call
//! adapter read and write these states; neither declares them itself.

mod errno;
#[cfg(windows)]
pub(crate) mod last_error;

pub(crate) use errno::thread_errno;
