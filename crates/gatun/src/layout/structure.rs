//! Structural identity of layouts: nesting depth, member alignment and structural hash.
//!
//! Layouts share members through `Arc`s, so a layout can be a DAG whose tree expansion is
//! exponential in its depth (`union U1 { union U0 a, b; }` … `U40`). Everything here is
//! therefore computed without expanding the tree: every group caches a [`Shape`] at
//! construction (its nesting depth, the largest alignment of its members and a hash of its
//! members: their own cached hashes and offsets), so these cost O(members) once per
//! construction and O(1) afterwards. Equality, which also never expands the tree, is in
//! `compare.rs`; it uses the cached shape to reject most differences at once.
//!
//! The depth is bounded by [`MAX_NESTING`] in every constructor, so the recursion of `Drop`,
//! `Display`, equality and classification is at most that deep.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use super::{MemoryLayout, PaddingLayout, SequenceLayout, StructLayout, UnionLayout, ValueLayout};
use crate::error::{Error, Result};

/// How deeply layouts may nest: a scalar or padding is 1 level, and each struct, union,
/// sequence or pointer target ([`ValueLayout::pointer_to`]) around a layout adds one. Every
/// constructor rejects deeper layouts with [`Error::NestingTooDeep`]; the C declaration parser
/// (`cdecl`) uses the same bound.
pub const MAX_NESTING: usize = 64;

/// What a group caches at construction (content only: name, size and alignment are compared
/// and hashed separately, so renaming or re-aligning a group keeps its shape).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    /// Nesting depth, 2..=[`MAX_NESTING`].
    pub(super) depth: usize,
    /// The largest alignment of the members (the element's for a sequence; 1 for no members),
    /// in bytes: the least alignment `with_byte_alignment` accepts for the group.
    pub(super) member_alignment: usize,
    /// Hash of the members (or element and count) and their offsets.
    pub(super) hash: u64,
}

/// Tags that keep the kinds apart in hashes.
#[derive(Clone, Copy, Hash)]
pub(super) enum Tag {
    Value = 1,
    Struct = 2,
    Union = 3,
    Sequence = 4,
    Padding = 5,
}

/// The shape of a group of `members` (at `offsets` for a struct; empty for a union or a
/// sequence, whose `count` is given instead).
///
/// # Errors
/// [`Error::NestingTooDeep`] if the group would be deeper than [`MAX_NESTING`].
pub(super) fn group_shape(
    tag: Tag,
    members: &[MemoryLayout],
    offsets: &[usize],
    count: usize,
) -> Result<Shape> {
    let depth = 1 + members.iter().map(MemoryLayout::depth).max().unwrap_or(0);
    if depth > MAX_NESTING {
        return Err(Error::NestingTooDeep {
            what: match tag {
                Tag::Struct => "struct",
                Tag::Union => "union",
                _ => "sequence",
            }
            .into(),
            depth,
            max: MAX_NESTING,
        });
    }
    let mut h = DefaultHasher::new();
    tag.hash(&mut h);
    members.len().hash(&mut h);
    for m in members {
        h.write_u64(m.structural_hash());
    }
    offsets.hash(&mut h);
    count.hash(&mut h);
    Ok(Shape {
        depth,
        member_alignment: members
            .iter()
            .map(MemoryLayout::byte_alignment)
            .max()
            .unwrap_or(1),
        hash: h.finish(),
    })
}

/// Depth of a pointer to `target` (1 + the target's depth).
///
/// # Errors
/// [`Error::NestingTooDeep`] beyond [`MAX_NESTING`].
pub(super) fn pointer_depth(target: &MemoryLayout) -> Result<usize> {
    let depth = 1 + target.depth();
    if depth > MAX_NESTING {
        return Err(Error::NestingTooDeep {
            what: "pointer target".into(),
            depth,
            max: MAX_NESTING,
        });
    }
    Ok(depth)
}

impl MemoryLayout {
    /// Nesting depth: 1 for a scalar without target and for padding, 1 + the deepest member for
    /// a struct or union, 1 + the element's for a sequence, 1 + the target's for a pointer with
    /// a target layout. At most [`MAX_NESTING`]. O(1) for groups (cached at construction).
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I32]).unwrap();
    /// assert_eq!(s.depth(), 2);
    /// assert_eq!(MemoryLayout::sequence_layout(3, s).unwrap().depth(), 3);
    /// ```
    pub fn depth(&self) -> usize {
        match self {
            MemoryLayout::Value(v) => v.depth(),
            MemoryLayout::Struct(s) => s.shape.depth,
            MemoryLayout::Union(u) => u.shape.depth,
            MemoryLayout::Sequence(s) => s.shape.depth,
            MemoryLayout::Padding(_) => 1,
        }
    }

    /// A hash of the whole structure (kind, size, alignment, name, members), consistent with
    /// `==`. O(1) for groups; a value layout hashes its target chain (at most
    /// [`MAX_NESTING`] deep).
    pub(crate) fn structural_hash(&self) -> u64 {
        let mut h = DefaultHasher::new();
        match self {
            MemoryLayout::Value(v) => {
                Tag::Value.hash(&mut h);
                v.hash(&mut h);
            }
            MemoryLayout::Struct(s) => {
                Tag::Struct.hash(&mut h);
                h.write_u64(s.shape.hash);
                (s.byte_size, s.byte_alignment, &s.name).hash(&mut h);
            }
            MemoryLayout::Union(u) => {
                Tag::Union.hash(&mut h);
                h.write_u64(u.shape.hash);
                (u.byte_size, u.byte_alignment, &u.name).hash(&mut h);
            }
            MemoryLayout::Sequence(s) => {
                Tag::Sequence.hash(&mut h);
                h.write_u64(s.shape.hash);
                (s.byte_alignment, &s.name).hash(&mut h);
            }
            MemoryLayout::Padding(p) => {
                Tag::Padding.hash(&mut h);
                (p.byte_size, &p.name).hash(&mut h);
            }
        }
        h.finish()
    }
}

impl ValueLayout {
    /// Nesting depth: 1, or 1 + the target's depth for a pointer with a target layout (at most
    /// [`MAX_NESTING`]).
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// assert_eq!(ValueLayout::I32.depth(), 1);
    /// // SAFETY: nothing is read through `p`.
    /// let p = unsafe { ValueLayout::pointer_to(ValueLayout::I32.into()) }.unwrap();
    /// assert_eq!(p.depth(), 2);
    /// ```
    pub fn depth(&self) -> usize {
        self.target().map_or(1, |t| 1 + t.depth())
    }
}

impl Hash for MemoryLayout {
    /// Hashes the cached structural hash (O(1) for groups).
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.structural_hash());
    }
}

impl Hash for StructLayout {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (
            self.shape.hash,
            self.byte_size,
            self.byte_alignment,
            &self.name,
        )
            .hash(state);
    }
}

impl Hash for UnionLayout {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (
            self.shape.hash,
            self.byte_size,
            self.byte_alignment,
            &self.name,
        )
            .hash(state);
    }
}

impl Hash for SequenceLayout {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.shape.hash, self.byte_alignment, &self.name).hash(state);
    }
}

impl Hash for PaddingLayout {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.byte_size, &self.name).hash(state);
    }
}
