//! The calling thread's capturable states, read and cleared directly: `errno` (through its
//! cached address, [`crate::os::thread_errno`]) and, on Windows, the thread's last error
//! (`GetLastError`/`SetLastError`, kernel32) and Windows Sockets' last error
//! (`WSAGetLastError`/`WSASetLastError`, ws2_32). The adapter's fast paths use these instead
//! of a capture buffer: the state is cleared, the target called, and the state read right after
//! the call returns, with no code in between that could change it.
//!
//! # Unsafe invariants
//! The four Windows functions only read or write a field of the calling thread's own
//! environment block; they are always safe to call. `errno`'s address is valid for the life of
//! the calling thread (see [`crate::os::thread_errno`]).

/// One capturable state (a [`crate::linker::capturable_states`] name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// The C runtime's `errno`.
    Errno,
    /// `GetLastError()` (Windows).
    #[cfg(windows)]
    LastError,
    /// `WSAGetLastError()` (Windows).
    #[cfg(windows)]
    WsaLastError,
}

impl State {
    /// The state of a capturable state name (`None` for any other name).
    pub(crate) fn of(name: &str) -> Option<State> {
        match name {
            "errno" => Some(State::Errno),
            #[cfg(windows)]
            "GetLastError" => Some(State::LastError),
            #[cfg(windows)]
            "WSAGetLastError" => Some(State::WsaLastError),
            _ => None,
        }
    }

    /// Whether a failure in this state is a Windows error code (reported as
    /// [`super::LastError`]) rather than an [`super::Errno`].
    pub(crate) fn is_windows_error(self) -> bool {
        !matches!(self, State::Errno)
    }

    /// Sets this thread's state to 0. Returns `false` (and does nothing) when this thread's
    /// `errno` address is unknown (a target without one).
    #[inline(always)]
    pub(crate) fn clear(self) -> bool {
        match self {
            State::Errno => {
                let errno = crate::os::thread_errno();
                if errno.is_null() {
                    return false;
                }
                // SAFETY: this thread's errno address, valid for the thread's life.
                unsafe { errno.write(0) };
            }
            #[cfg(windows)]
            // SAFETY: see the module invariants.
            State::LastError => unsafe { windows::SetLastError(0) },
            #[cfg(windows)]
            // SAFETY: see the module invariants.
            State::WsaLastError => unsafe { windows::WSASetLastError(0) },
        }
        true
    }

    /// This thread's state now (0 where the `errno` address is unknown).
    #[inline(always)]
    pub(crate) fn read(self) -> i32 {
        match self {
            State::Errno => {
                let errno = crate::os::thread_errno();
                if errno.is_null() {
                    return 0;
                }
                // SAFETY: this thread's errno address, valid for the thread's life.
                unsafe { errno.read() }
            }
            #[cfg(windows)]
            // SAFETY: see the module invariants. The DWORD is reinterpreted as the capture
            // struct's `int`, as the JDK stores it.
            State::LastError => (unsafe { windows::GetLastError() }) as i32,
            #[cfg(windows)]
            // SAFETY: see the module invariants.
            State::WsaLastError => unsafe { windows::WSAGetLastError() },
        }
    }
}

#[cfg(windows)]
use crate::os::last_error as windows;

#[cfg(test)]
mod tests {
    use super::State;

    #[test]
    fn names() {
        assert_eq!(State::of("errno"), Some(State::Errno));
        assert_eq!(State::of("GetLastError").is_some(), cfg!(windows));
        assert_eq!(State::of("WSAGetLastError").is_some(), cfg!(windows));
        assert_eq!(State::of("Errno"), None);
        assert!(!State::Errno.is_windows_error());
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn clear_then_read() {
        for name in crate::linker::capturable_states() {
            let s = State::of(name).expect("every capturable name has a state");
            if s.clear() {
                assert_eq!(s.read(), 0, "{name}");
            }
        }
    }
}
