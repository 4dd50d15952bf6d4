//! The thread's Windows error states the capture of a Win64 call restores and saves, besides
//! `errno` ([`crate::os::thread_errno`]): the last-error code (`GetLastError` /
//! `SetLastError`, kernel32) and the Winsock error (`WSAGetLastError` / `WSASetLastError`,
//! ws2_32), and the system's message for an error code (`FormatMessageW`, kernel32). Both DLLs
//! are linked by Rust's standard library on Windows already.
//!
//! The Win64 trampoline calls the four state functions from assembly (`sym` operands), so they
//! are declared here once with their Windows signatures (`extern "system"`, which is the
//! Microsoft x64 convention on x86-64). All four only read or write a per-thread value and are
//! safe to call on any thread at any time (`WSASetLastError`/`WSAGetLastError` need no
//! `WSAStartup`).

#[link(name = "kernel32")]
extern "system" {
    /// This thread's last-error code.
    pub(crate) fn GetLastError() -> u32;
    /// Sets this thread's last-error code.
    pub(crate) fn SetLastError(code: u32);
    /// Writes the message of `message_id` into `buffer` (`size` UTF-16 units, the terminating
    /// NUL included) and returns the units written without the NUL, or 0 when there is none.
    /// With [`FORMAT_MESSAGE_FROM_SYSTEM`] and no `FORMAT_MESSAGE_ALLOCATE_BUFFER`, it writes at
    /// most `size` units; with [`FORMAT_MESSAGE_IGNORE_INSERTS`] it reads no `arguments`.
    pub(crate) fn FormatMessageW(
        flags: u32,
        source: *const std::ffi::c_void,
        message_id: u32,
        language_id: u32,
        buffer: *mut u16,
        size: u32,
        arguments: *mut std::ffi::c_void,
    ) -> u32;
}

/// `FormatMessageW` flag: leave `%1`-style inserts in the message as they are.
pub(crate) const FORMAT_MESSAGE_IGNORE_INSERTS: u32 = 0x0000_0200;
/// `FormatMessageW` flag: look the message up in the system's message table.
pub(crate) const FORMAT_MESSAGE_FROM_SYSTEM: u32 = 0x0000_1000;

#[link(name = "ws2_32")]
extern "system" {
    /// This thread's last Winsock error.
    pub(crate) fn WSAGetLastError() -> i32;
    /// Sets this thread's last Winsock error.
    pub(crate) fn WSASetLastError(code: i32);
}
