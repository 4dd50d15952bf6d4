//! The thread's Windows error states the capture of a Win64 call restores and saves, besides
//! `errno` ([`crate::backend::thread_errno`]): the last-error code (`GetLastError` /
//! `SetLastError`, kernel32) and the Winsock error (`WSAGetLastError` / `WSASetLastError`,
//! ws2_32). Both DLLs are linked by Rust's standard library on Windows already.
//!
//! The trampoline calls these four functions from assembly (`sym` operands), so they are
//! declared here once with their Windows signatures (`extern "system"`, which is the Microsoft
//! x64 convention on x86-64). All four only read or write a per-thread value and are safe to
//! call on any thread at any time (`WSASetLastError`/`WSAGetLastError` need no `WSAStartup`).

#[link(name = "kernel32")]
extern "system" {
    /// This thread's last-error code.
    pub(crate) fn GetLastError() -> u32;
    /// Sets this thread's last-error code.
    pub(crate) fn SetLastError(code: u32);
}

#[link(name = "ws2_32")]
extern "system" {
    /// This thread's last Winsock error.
    pub(crate) fn WSAGetLastError() -> i32;
    /// Sets this thread's last Winsock error.
    pub(crate) fn WSASetLastError(code: i32);
}
