//! [`LinkerOption`] (Java's `Linker.Option`) and [`capture_state_layout`].

use crate::error::{join, Error, Result};
use crate::layout::{MemoryLayout, ValueLayout};

/// An option of [`crate::linker::Linker::downcall`].
///
/// ```
/// # #[cfg(gatun_executes)] {
/// use gatun::linker::{FunctionDescriptor, Linker, LinkerOption, SymbolLookup};
/// use gatun::ValueLayout as V;
/// // int printf(const char *fmt, ...) called with one int: variadic from index 1.
/// let printf = SymbolLookup::default_lookup().find("printf").unwrap();
/// let d = FunctionDescriptor::of(V::I32, [V::ADDRESS, V::I32]);
/// let h = Linker::native()
///     .downcall(&printf, &d, &[LinkerOption::FirstVariadicArg(1)])
///     .unwrap();
/// assert!(h.plan().is_variadic());
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LinkerOption {
    /// The function is variadic and the descriptor's arguments from this index on are its
    /// variadic arguments for this call (Java's `firstVariadicArg`). They get the default
    /// argument promotions (`float` → `double`, small integers → `int`); on SysV `%al` is set, on
    /// Win64 a variadic `float`/`double` in the first four slots is passed in both its XMM
    /// register and its GPR, on Apple arm64 variadic arguments go on the stack. An index
    /// equal to the argument count means "variadic, no variadic arguments in this call".
    FirstVariadicArg(usize),
    /// Capture the named thread-local call states (Java's `captureCallState`): the handle takes
    /// an extra *first* argument, a segment with [`capture_state_layout`]; its fields are
    /// written to the states just before the call and read back just after ("restore before,
    /// save after"). Valid names: [`capturable_states`] (`errno`; on Windows also `GetLastError`,
    /// `WSAGetLastError`).
    CaptureCallState(&'static [&'static str]),
    /// Java's `critical`: the call is short and does not call back. gatun's downcalls never
    /// change thread state, so this is accepted and has no effect on any ABI.
    Critical,
}

/// The capturable states of this platform, in the order of [`capture_state_layout`]'s fields:
/// on Windows `GetLastError`, `WSAGetLastError`, `errno` (the JDK's Windows order; `errno` is
/// the C runtime's); everywhere else `errno`.
///
/// ```
/// let states = gatun::linker::capturable_states();
/// assert!(states.contains(&"errno"));
/// assert_eq!(states.contains(&"GetLastError"), cfg!(windows));
/// ```
pub fn capturable_states() -> &'static [&'static str] {
    if cfg!(windows) {
        &["GetLastError", "WSAGetLastError", "errno"]
    } else {
        &["errno"]
    }
}

/// Size in bytes of [`capture_state_layout`] on this platform: 12 on Windows, 4 elsewhere.
pub(crate) const CAPTURE_STATE_SIZE: usize = if cfg!(windows) { 12 } else { 4 };

/// The layout of the capture segment (Java's `Linker.Option.captureStateLayout()`): one `i32`
/// field per [`capturable_states`] name, in that order, alignment 4. On Linux and Apple targets
/// a struct with one member `errno` (4 bytes); on Windows
/// `{ GetLastError, WSAGetLastError, errno }` (12 bytes: offsets 0, 4, 8). A capturing call
/// writes each field to its thread state just before the call and reads the states back into
/// the fields right after it. On Windows that is all three, whichever names the handle was
/// linked with (the segment always has room for them): unlike the JDK, which touches only the
/// named states, a handle linked with `["errno"]` also sets the thread's last error from field
/// 0 before the call and overwrites fields 0 and 4 after it. Windows keeps the Winsock error and
/// the last error in one per-thread value, so the `WSAGetLastError` field is restored first and
/// then replaced by `SetLastError(field 0)`, and after the call both fields hold the same code.
///
/// ```
/// use gatun::linker::capture_state_layout;
/// let l = capture_state_layout();
/// assert_eq!(l.byte_alignment(), 4);
/// if cfg!(windows) {
///     assert_eq!(l.byte_size(), 12);
///     assert_eq!(l.byte_offset_of("errno").unwrap(), 8);
/// } else {
///     assert_eq!(l.byte_size(), 4);
///     assert_eq!(l.byte_offset_of("errno").unwrap(), 0);
/// }
/// ```
pub fn capture_state_layout() -> MemoryLayout {
    MemoryLayout::c_struct(
        capturable_states()
            .iter()
            .map(|&name| ValueLayout::I32.with_name(name)),
    )
    .expect("at most three ints always fit")
}

/// Checks a capture-state name list.
pub(crate) fn check_capture_names(names: &[&str]) -> Result<()> {
    for &n in names {
        if capturable_states().contains(&n) {
            continue;
        }
        if !cfg!(windows) && (n == "GetLastError" || n == "WSAGetLastError") {
            return Err(Error::CaptureStateUnavailable {
                name: n.to_string(),
                platform: "Windows".to_string(),
            });
        }
        return Err(Error::UnknownCaptureState {
            name: n.to_string(),
            valid: join(capturable_states()),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_has_one_int_per_state_in_order() {
        let l = capture_state_layout();
        assert_eq!(l.byte_size(), CAPTURE_STATE_SIZE);
        for (i, name) in capturable_states().iter().enumerate() {
            assert_eq!(l.byte_offset_of(name).unwrap(), 4 * i, "{name}");
        }
    }

    #[test]
    fn windows_names_are_checked_by_platform() {
        assert!(check_capture_names(&["errno"]).is_ok());
        for name in ["GetLastError", "WSAGetLastError"] {
            let r = check_capture_names(&["errno", name]);
            if cfg!(windows) {
                assert!(r.is_ok(), "{name}: {r:?}");
            } else {
                let e = r.unwrap_err().to_string();
                assert!(e.contains(name) && e.contains("Windows"), "{e}");
            }
        }
        let e = check_capture_names(&["errno", "lasterror"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("'lasterror'") && e.contains("errno"), "{e}");
    }
}
