//! The compiled-stub cache shared by the stub compilers (System V, AArch64, Win64): one
//! [`StubCache`] per compiler, mapping everything a stub's code depends on ([`StubKey`]) to a
//! `Weak` reference to the live stub. Handles hold the stub through `Arc`, so the code is freed
//! with the last handle of its signature; a stub's drop removes its own entry
//! ([`StubCache::remove`]).
//!
//! The lock is held only for the lookup, the insertion and the removal: code generation and the
//! code arena's work (which may map memory) happen outside it. Two threads linking the same new
//! signature at once may both compile it; the second to insert takes the first's stub and
//! drops its own. On Linux the code arena's fork handler also takes the lock
//! ([`StubCache::lock_for_fork`], before the arena lock) so that a child never inherits it
//! locked.

// Each compiler's cache is used where its executor runs (and by its tests).
#![cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "linux", not(miri)),
        all(
            target_arch = "aarch64",
            any(target_os = "linux", target_vendor = "apple"),
            not(miri)
        )
    )),
    allow(dead_code)
)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::abi::CallPlan;
use crate::backend::ArgCheck;

/// A cache key: everything a stub's code depends on (the target is a parameter of the stub, so
/// handles of different functions with the same signature share one stub).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct StubKey {
    /// The call plan.
    pub plan: CallPlan,
    /// The values entry's checks, one per argument.
    pub checks: Vec<ArgCheck>,
    /// Whether the stub captures the call state.
    pub capture: bool,
}

impl StubKey {
    /// The key of a stub of `plan` with these checks and capture.
    pub(crate) fn new(plan: &CallPlan, checks: &[ArgCheck], capture: bool) -> StubKey {
        StubKey {
            plan: plan.clone(),
            checks: checks.to_vec(),
            capture,
        }
    }
}

type Map<S> = HashMap<StubKey, Weak<S>>;

/// A cache of live stubs of type `S` (see the module documentation). `Sync` when `S` is
/// `Send + Sync`, for use as a `static`.
pub(crate) struct StubCache<S> {
    map: Mutex<Option<Map<S>>>,
}

/// The cache locked (by the code arena's fork handler, for the duration of a `fork`; only Linux
/// has that handler).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) struct CacheLock<S: 'static>(#[allow(dead_code)] MutexGuard<'static, Option<Map<S>>>);

impl<S> StubCache<S> {
    /// An empty cache (allocates nothing until the first insertion).
    pub(crate) const fn new() -> StubCache<S> {
        StubCache {
            map: Mutex::new(None),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<Map<S>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The live stub of `key`, or the one `build` makes (given the key to keep for its
    /// [`remove`](Self::remove)), cached. The lock is not held while `build` runs.
    ///
    /// # Errors
    /// Whatever `build` returns (nothing is cached then).
    pub(crate) fn get_or_build<E>(
        &self,
        key: StubKey,
        build: impl FnOnce(StubKey) -> Result<S, E>,
    ) -> Result<Arc<S>, E> {
        let lookup = |map: &mut Map<S>| map.get(&key).and_then(Weak::upgrade);
        // the cache lock must not be held by another thread across a fork
        #[cfg(target_os = "linux")]
        crate::code::register_fork_handlers();
        if let Some(s) = lookup(self.lock().get_or_insert_with(HashMap::new)) {
            return Ok(s);
        }
        let stub = Arc::new(build(key.clone())?);
        let mut cache = self.lock();
        let map = cache.get_or_insert_with(HashMap::new);
        if let Some(theirs) = lookup(map) {
            drop(cache);
            // `stub` drops here, outside the lock (its drop takes it); the entry is not its own.
            return Ok(theirs);
        }
        map.insert(key, Arc::downgrade(&stub));
        Ok(stub)
    }

    /// Removes the entry of `key` if it is still `stub`'s (a re-link of the signature may
    /// already have replaced the dead entry with a new stub). Called by a stub's drop.
    pub(crate) fn remove(&self, key: &StubKey, stub: *const S) {
        let mut cache = self.lock();
        if let Some(map) = cache.as_mut() {
            if map.get(key).is_some_and(|w| std::ptr::eq(w.as_ptr(), stub)) {
                map.remove(key);
            }
        }
    }

    /// Number of live stubs in the cache (for tests of the cache).
    #[allow(dead_code)] // read by tests
    pub(crate) fn live(&self) -> usize {
        self.lock()
            .as_ref()
            .map_or(0, |m| m.values().filter(|w| w.strong_count() > 0).count())
    }
}

impl<S: 'static> StubCache<S> {
    /// Locks the cache for a fork (see [`CacheLock`]).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn lock_for_fork(&'static self) -> CacheLock<S> {
        CacheLock(self.lock())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::ReturnPlan;

    fn key(capture: bool) -> StubKey {
        let plan = crate::backend::x86_64_sysv::classify::plan(
            &crate::linker::FunctionDescriptor::of_void(Vec::<crate::layout::MemoryLayout>::new()),
            None,
        )
        .unwrap();
        assert!(matches!(plan.ret, ReturnPlan::Void));
        StubKey::new(&plan, &[], capture)
    }

    #[test]
    fn live_stubs_are_shared_and_dead_ones_rebuilt() {
        static CACHE: StubCache<u32> = StubCache::new();
        let mut builds = 0;
        let a = CACHE
            .get_or_build::<()>(key(false), |_| {
                builds += 1;
                Ok(1)
            })
            .unwrap();
        let b = CACHE
            .get_or_build::<()>(key(false), |_| unreachable!("cached"))
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let c = CACHE
            .get_or_build::<()>(key(true), |_| {
                builds += 1;
                Ok(2)
            })
            .unwrap();
        assert_eq!((builds, *c, CACHE.live()), (2, 2, 2));
        CACHE.remove(&key(true), Arc::as_ptr(&a));
        assert_eq!(CACHE.live(), 2, "another stub's entry is kept");
        CACHE.remove(&key(true), Arc::as_ptr(&c));
        drop((a, b, c));
        assert_eq!(CACHE.live(), 0);
        let err = CACHE.get_or_build(key(false), |_| Err("refused"));
        assert_eq!(err.unwrap_err(), "refused");
        assert_eq!(CACHE.live(), 0);
    }
}
