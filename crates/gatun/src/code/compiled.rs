//! The compiled downcall stub of every ABI: a signature's machine code placed in executable
//! memory ([`ExecutableCode`]), its typed entry points and its place in the stub cache
//! ([`super::stub_cache`]). What differs between ABIs — the code generation and the entries'
//! types — is a [`StubCompiler`], one per ABI (its backend's `stub` module).
//!
//! A [`CompiledStub`] is immutable and `Send + Sync`; it is shared through `Arc` by every
//! handle of its signature, and the cache holds only a `Weak`, so the code is freed when the
//! last handle drops (the stub then removes its cache entry, before its code is freed).

use std::fmt;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

use super::stub_cache::{self, StubKey};
use super::ExecutableCode;
use crate::abi::kinds::ArgCheck;
use crate::abi::CallPlan;
use crate::error::Result;

/// An ABI's stub compiler: compiles a plan into code bytes and finds the entries in the placed
/// code.
///
/// # Safety
/// The bytes of every [`compile`](StubCompiler::compile) result are machine code for the
/// running target, and [`entries`](StubCompiler::entries) returns entry points into those
/// bytes that are sound to call as their types document (for the plan, checks and capture
/// they were compiled for). [`function_table`](StubCompiler::function_table), where it names
/// one, describes the code's unwinding truthfully.
pub(crate) unsafe trait StubCompiler: 'static {
    /// What compiling returns: the code bytes and where the entries are.
    type Code;
    /// The entry points of a placed stub, typed as their callers call them (reached through
    /// the stub: [`CompiledStub`] dereferences to them).
    type Entries: fmt::Debug + Send + Sync + 'static;

    /// Compiles the stub of `plan` (`checks[i]` describes argument `i` for the values entry's
    /// checks; `checks.len() == plan.args.len()`).
    fn compile(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> Self::Code;

    /// The code bytes of `code`.
    fn bytes(code: &Self::Code) -> &[u8];

    /// `(offset, count)` of the `RUNTIME_FUNCTION` table inside the bytes that Windows'
    /// unwinder needs for the code (see `ExecutableCode::with_function_table`); `None` (the
    /// default) for code without one.
    fn function_table(_code: &Self::Code) -> Option<(usize, usize)> {
        None
    }

    /// The entries of `code` placed at `base`.
    ///
    /// # Safety
    /// `base` is the address of the first of `Self::bytes(code)`, placed executable, and stays
    /// so for as long as the entries are called.
    unsafe fn entries(code: &Self::Code, base: NonNull<u8>) -> Self::Entries;
}

/// A compiled stub of compiler `C`: its code in the code arena (see the module
/// documentation), its entries (the stub dereferences to `C::Entries`) and its cache key.
pub(crate) struct CompiledStub<C: StubCompiler> {
    code: ExecutableCode,
    /// The cache entry that refers to this stub (`None` for uncached stubs).
    key: Option<StubKey>,
    entries: C::Entries,
}

impl<C: StubCompiler> CompiledStub<C> {
    /// Compiles and places a stub without consulting the cache.
    ///
    /// # Errors
    /// As [`ExecutableCode::new`] (and, with a function table, `with_function_table`):
    /// [`crate::Error::Unsupported`] when the OS refuses executable memory or the table.
    #[cfg(any(test, feature = "internals"))]
    pub(crate) fn build(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> Result<Self> {
        Self::build_keyed(plan, checks, capture, None)
    }

    /// The stub for this signature: a live one from the cache, or compiled, placed and
    /// cached (see [`super::stub_cache`]).
    ///
    /// # Errors
    /// As [`CompiledStub::build`] (nothing is cached then).
    pub(crate) fn cached(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> Result<Arc<Self>> {
        let key = StubKey::new(plan, checks, capture);
        stub_cache::get_or_build(key, |key| {
            Self::build_keyed(plan, checks, capture, Some(key))
        })
    }

    fn build_keyed(
        plan: &CallPlan,
        checks: &[ArgCheck],
        capture: bool,
        key: Option<StubKey>,
    ) -> Result<Self> {
        let compiled = C::compile(plan, checks, capture);
        let bytes = C::bytes(&compiled);
        // SAFETY: machine code of `C` for `plan`, called only through the entries `C` finds
        // in it (the `StubCompiler` contract); the function table, if any, is the one `C`
        // laid out with the code.
        let code = unsafe {
            match C::function_table(&compiled) {
                #[cfg(windows)]
                Some((offset, count)) => ExecutableCode::with_function_table(bytes, offset, count),
                _ => ExecutableCode::new(bytes),
            }
        }?;
        // SAFETY: code's address is never null; `code` holds the bytes and is owned by the
        // returned stub, which keeps it alive for as long as its entries are reachable.
        let entries =
            unsafe { C::entries(&compiled, NonNull::new_unchecked(code.entry().cast_mut())) };
        Ok(CompiledStub { code, key, entries })
    }

    /// A copy of the code bytes (for disassembly in tests and tools).
    pub(crate) fn bytes(&self) -> Vec<u8> {
        self.code.bytes()
    }
}

impl<C: StubCompiler> Deref for CompiledStub<C> {
    type Target = C::Entries;

    fn deref(&self) -> &C::Entries {
        &self.entries
    }
}

impl<C: StubCompiler> fmt::Debug for CompiledStub<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledStub")
            .field("code", &self.code)
            .field("key", &self.key)
            .field("entries", &self.entries)
            .finish()
    }
}

impl<C: StubCompiler> Drop for CompiledStub<C> {
    fn drop(&mut self) {
        // The code is freed when `self.code` drops, after this.
        if let Some(key) = &self.key {
            stub_cache::remove::<Self>(key, self);
        }
    }
}
