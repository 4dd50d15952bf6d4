//! [`LinkerOption`] (Java's `Linker.Option`) and [`capture_state_layout`].

use crate::error::{join, Error, Result};
use crate::layout::{MemoryLayout, ValueLayout};

/// An option of [`crate::linker::Linker::downcall`].
///
/// ```
/// # #[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))] {
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
    /// argument promotions (`float` → `double`, small integers → `int`); `%al` is set. An index
    /// equal to the argument count means "variadic, no variadic arguments in this call".
    FirstVariadicArg(usize),
    /// Capture the named thread-local call states (Java's `captureCallState`): the handle takes
    /// an extra *first* argument, a segment with [`capture_state_layout`]; its fields are
    /// written to the states just before the call and read back just after ("restore before,
    /// save after"). Valid names: `errno` (on Windows also `GetLastError`, `WSAGetLastError`).
    CaptureCallState(&'static [&'static str]),
    /// Java's `critical`: the call is short and does not call back. gatun's downcalls never
    /// change thread state, so this is accepted and has no effect on SysV.
    Critical,
}

/// The names of the capturable states on this platform.
pub fn capturable_states() -> &'static [&'static str] {
    &["errno"]
}

/// The layout of the capture segment (Java's `Linker.Option.captureStateLayout()`): on Linux a
/// struct with one `i32` member named `errno` (4 bytes, alignment 4).
pub fn capture_state_layout() -> MemoryLayout {
    MemoryLayout::c_struct([ValueLayout::I32.with_name("errno")])
        .expect("a one-int struct always fits")
}

/// Checks a capture-state name list.
pub(crate) fn check_capture_names(names: &[&str]) -> Result<()> {
    for &n in names {
        if capturable_states().contains(&n) {
            continue;
        }
        if n == "GetLastError" || n == "WSAGetLastError" {
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
