//! The compiled-stub cache: one process-wide map from everything a stub's code depends on
//! ([`StubKey`], and the stub's type, so that stub compilers never share an entry) to a `Weak`
//! reference to the live stub. Handles hold a stub through `Arc`, so the code is freed with
//! the last handle of its signature; a stub's drop removes its own entry ([`remove`]).
//!
//! The map is type-erased (`Weak<dyn Any + Send + Sync>`, downcast on a hit): one lock for
//! every compiler, which the code arena's fork handler takes ([`lock_for_fork`]).
//!
//! The lock is held only for the lookup, the insertion and the removal: code generation and the
//! code arena's work (which may map memory) happen outside it. Two threads linking the same new
//! signature at once may both compile it; the second to insert takes the first's stub and
//! drops its own. Lock order: the stub cache, then the code arena (the arena's fork handler
//! takes both in that order; no other code path holds both).

// On Linux without an executing backend only the fork lock is used.
#![cfg_attr(not(any(gatun_executes, test)), allow(dead_code))]

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::abi::kinds::ArgCheck;
use crate::abi::CallPlan;

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

/// The map: a key and the stub's type, to the live stub (allocated at the first insertion).
type Map = HashMap<(TypeId, StubKey), Weak<dyn Any + Send + Sync>>;

static CACHE: Mutex<Option<Map>> = Mutex::new(None);

fn lock() -> MutexGuard<'static, Option<Map>> {
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The live stub of type `S` of `key`, or the one `build` makes (given the key to keep for
/// its [`remove`]), cached. The lock is not held while `build` runs.
///
/// # Errors
/// Whatever `build` returns (nothing is cached then).
pub(crate) fn get_or_build<S: Send + Sync + 'static, E>(
    key: StubKey,
    build: impl FnOnce(StubKey) -> Result<S, E>,
) -> Result<Arc<S>, E> {
    let key = (TypeId::of::<S>(), key);
    let lookup = |map: &mut Map| {
        let live = map.get(&key).and_then(Weak::upgrade)?;
        live.downcast::<S>().ok()
    };
    // the cache lock must not be held by another thread across a fork
    #[cfg(target_os = "linux")]
    super::arena::register_fork_handlers();
    if let Some(s) = lookup(lock().get_or_insert_with(HashMap::new)) {
        return Ok(s);
    }
    let stub = Arc::new(build(key.1.clone())?);
    let mut cache = lock();
    let map = cache.get_or_insert_with(HashMap::new);
    if let Some(theirs) = lookup(map) {
        drop(cache);
        // `stub` drops here, outside the lock (its drop takes it); the entry is not its own.
        return Ok(theirs);
    }
    let weak: Weak<S> = Arc::downgrade(&stub);
    map.insert(key, weak);
    Ok(stub)
}

/// Removes the entry of the stub of type `S` of `key` if it is still `stub`'s (a re-link of
/// the signature may already have replaced the dead entry with a new stub). Called by a stub's
/// drop.
pub(crate) fn remove<S: 'static>(key: &StubKey, stub: *const S) {
    let key = (TypeId::of::<S>(), key.clone());
    let mut cache = lock();
    if let Some(map) = cache.as_mut() {
        let own = |w: &Weak<dyn Any + Send + Sync>| std::ptr::eq(w.as_ptr().cast::<S>(), stub);
        if map.get(&key).is_some_and(own) {
            map.remove(&key);
        }
    }
}

/// Number of live stubs of type `S` in the cache (for tests of the cache).
#[cfg(test)]
pub(crate) fn live<S: 'static>() -> usize {
    lock().as_ref().map_or(0, |m| {
        m.iter()
            .filter(|((t, _), w)| *t == TypeId::of::<S>() && w.strong_count() > 0)
            .count()
    })
}

/// The cache locked by the code arena's fork handler for the duration of a `fork` (taken
/// before the arena lock), so that the child never inherits it locked: a stub's drop takes
/// it. Only Linux's code arena has a fork handler.
#[cfg(target_os = "linux")]
pub(crate) struct ForkLock {
    _held: MutexGuard<'static, Option<Map>>,
}

/// Locks the cache for a fork (see [`ForkLock`]).
#[cfg(target_os = "linux")]
pub(crate) fn lock_for_fork() -> ForkLock {
    ForkLock { _held: lock() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::ReturnPlan;

    fn key(capture: bool) -> StubKey {
        let plan = CallPlan {
            args: Vec::new(),
            ret: ReturnPlan::Void,
            hidden_return_pointer: None,
            stack_bytes: 0,
            vector_registers: 0,
            first_variadic: None,
            packed_named_stack: false,
        };
        StubKey::new(&plan, &[], capture)
    }

    /// A stub type of this test alone.
    #[derive(Debug, PartialEq)]
    struct Probe(u32);

    /// Another one: the same key never finds a stub of another type.
    struct Other;

    #[test]
    fn live_stubs_are_shared_and_dead_ones_rebuilt() {
        let mut builds = 0;
        let a = get_or_build::<Probe, ()>(key(false), |_| {
            builds += 1;
            Ok(Probe(1))
        })
        .unwrap();
        let b = get_or_build::<Probe, ()>(key(false), |_| unreachable!("cached")).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let c = get_or_build::<Probe, ()>(key(true), |_| {
            builds += 1;
            Ok(Probe(2))
        })
        .unwrap();
        assert_eq!((builds, &*c, live::<Probe>()), (2, &Probe(2), 2));
        let other = get_or_build::<Other, ()>(key(false), |_| Ok(Other)).unwrap();
        assert_eq!((live::<Probe>(), live::<Other>()), (2, 1));
        remove(&key(true), Arc::as_ptr(&a));
        assert_eq!(live::<Probe>(), 2, "another stub's entry is kept");
        remove(&key(true), Arc::as_ptr(&c));
        drop((a, b, c));
        assert_eq!(live::<Probe>(), 0);
        let err = get_or_build::<Probe, _>(key(false), |_| Err("refused"));
        assert_eq!(err.unwrap_err(), "refused");
        assert_eq!((live::<Probe>(), live::<Other>()), (0, 1));
        remove(&key(false), Arc::as_ptr(&other));
    }
}
