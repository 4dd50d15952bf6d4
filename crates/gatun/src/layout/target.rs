//! [`PointerTarget`]: what a pointer layout points to (Java's `AddressLayout` target layout),
//! and the resolution of [`PointerTarget::Enclosing`] targets for accessors.
//!
//! A target is attached with the `unsafe` [`ValueLayout::with_target`] (or
//! [`ValueLayout::pointer_to`], or a [`Declarations`](crate::cdecl::Declarations) made with
//! `with_pointer_targets`): that is the one trust step, like the JDK's restricted
//! `withTargetLayout`. Reading a pointer through a layout that carries a target then gives a
//! segment over the pointee ([`crate::memory::MemorySegment::get_value`], `get_target`,
//! [`super::Accessor::get_target`], [`ValueLayout::target_of`], [`ValueLayout::null_terminated`]).
//!
//! Self-referential records (`struct node { struct node *next; }`) cannot hold their own layout
//! as a target without a cycle, and layouts are immutable trees. Their pointer holds
//! [`PointerTarget::Enclosing`] with the record's name instead: a leaf for equality, hashing and
//! `Display` (so those stay linear and terminate), resolved when an accessor is built from a
//! layout that encloses the pointer. An accessor's member layout then carries the enclosing
//! record itself as its target, and that record's own pointer carries `Enclosing` again, so a
//! list is walked with one accessor per member, however long it is.

use std::fmt;
use std::sync::Arc;

use super::{MemoryLayout, PathElement, ScalarKind, ValueLayout};

/// What a pointer layout points to, read by [`ValueLayout::pointer_target`].
///
/// Three kinds of pointee, each read by its own rule (the rules the trust step promises, see
/// [`ValueLayout::with_target`]):
///
/// - [`PointerTarget::Layout`]: one object of a layout (C's `T *` for a complete type `T`). A
///   pointer read through it gives a segment of the layout's `byte_size()` bytes.
/// - [`PointerTarget::CString`]: a NUL-terminated string (C's `char *`). It has no fixed size: a
///   pointer read through it gives a segment over the string's bytes and its NUL, found by
///   reading byte by byte up to the first NUL and never past it (the C-string rule).
/// - [`PointerTarget::Enclosing`]: the struct or union of that name around the pointer (a
///   self-referential `struct node *next`). Accessors resolve it to the record's layout; where
///   no enclosing record of that name is known, a pointer read through it gives a zero-length
///   segment at its address, which reads and writes nothing.
///
/// `Clone` (cheap: layouts share their members), `Send + Sync`. `==` and hashing are
/// structural; `Display` is `T` for a layout, `cstr`, `^name`.
///
/// ```
/// use gatun::layout::{MemoryLayout, PointerTarget, ValueLayout};
/// let int = PointerTarget::Layout(ValueLayout::I32.into());
/// assert_eq!(int.layout(), Some(&MemoryLayout::from(ValueLayout::I32)));
/// assert_eq!(PointerTarget::CString.to_string(), "cstr");
/// assert_eq!(PointerTarget::Enclosing("node".into()).to_string(), "^node");
/// assert_eq!(PointerTarget::CString.layout(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PointerTarget {
    /// One object of this layout.
    Layout(MemoryLayout),
    /// A NUL-terminated byte string.
    CString,
    /// The struct or union with this name that encloses the pointer.
    Enclosing(Arc<str>),
}

impl PointerTarget {
    /// The layout of a [`PointerTarget::Layout`] target; `None` for the others.
    ///
    /// ```
    /// use gatun::layout::{PointerTarget, ValueLayout};
    /// let t = PointerTarget::Layout(ValueLayout::F64.into());
    /// assert_eq!(t.layout().unwrap().byte_size(), 8);
    /// assert!(PointerTarget::Enclosing("list".into()).layout().is_none());
    /// ```
    pub fn layout(&self) -> Option<&MemoryLayout> {
        match self {
            PointerTarget::Layout(l) => Some(l),
            _ => None,
        }
    }
}

impl fmt::Display for PointerTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PointerTarget::Layout(l) => fmt::Display::fmt(l, f),
            PointerTarget::CString => f.write_str("cstr"),
            PointerTarget::Enclosing(name) => write!(f, "^{name}"),
        }
    }
}

/// Whether `v`, or a pointer in its chain of pointer targets (`T **` → `T *` → ...), has an
/// [`PointerTarget::Enclosing`] target.
pub(super) fn has_enclosing(v: &ValueLayout) -> bool {
    let mut v = v;
    loop {
        match v.pointer_target() {
            Some(PointerTarget::Enclosing(_)) => return true,
            Some(PointerTarget::Layout(MemoryLayout::Value(inner))) => v = inner,
            _ => return false,
        }
    }
}

/// `v` with every [`PointerTarget::Enclosing`] target in its chain of pointer targets replaced
/// by the innermost record of `enclosing` (outermost first) that is a struct or union of that
/// name. A name with no such record, or a record too deep to be a target, stays unresolved.
///
/// The result reads what the trust step promised for the unresolved layout: the record the
/// pointer is declared in is the one the enclosing target stands for.
pub(super) fn resolve_enclosing(v: &ValueLayout, enclosing: &[&MemoryLayout]) -> ValueLayout {
    let resolved = match v.pointer_target() {
        Some(PointerTarget::Enclosing(name)) => enclosing
            .iter()
            .rev()
            .find(|l| {
                matches!(l, MemoryLayout::Struct(_) | MemoryLayout::Union(_))
                    && l.name() == Some(name)
            })
            .filter(|l| super::structure::pointer_depth(l).is_ok())
            .map(|l| PointerTarget::Layout((*l).clone())),
        Some(PointerTarget::Layout(MemoryLayout::Value(inner)))
            if inner.kind() == ScalarKind::Pointer && has_enclosing(inner) =>
        {
            let inner = resolve_enclosing(inner, enclosing);
            super::structure::pointer_depth(&MemoryLayout::Value(inner.clone()))
                .ok()
                .map(|_| PointerTarget::Layout(inner.into()))
        }
        _ => None,
    };
    match resolved {
        Some(t) => v.clone().replace_target(t),
        None => v.clone(),
    }
}

/// The structs and unions that `path` (valid in `root`) passes through, outermost (`root`)
/// first, excluding where it ends: the records enclosing the member it selects.
pub(super) fn records_along<'l>(
    root: &'l MemoryLayout,
    path: &[PathElement<'_>],
) -> Vec<&'l MemoryLayout> {
    let mut records = Vec::new();
    let mut current = root;
    for &element in path {
        if matches!(current, MemoryLayout::Struct(_) | MemoryLayout::Union(_)) {
            records.push(current);
        }
        match current.select([element]) {
            Ok((_, next)) => current = next,
            Err(_) => break,
        }
    }
    records
}
