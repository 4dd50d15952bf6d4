//! Native memory: [`MemorySegment`], the [`SegmentAllocator`] trait, heap [`Arena`]s, and the
//! allocators over existing memory ([`SlicingAllocator`], [`PrefixAllocator`]), and per-thread
//! LIFO scratch frames ([`BufferStack`], [`linker_stack`]); [`SharedSegment`]s that several
//! threads use at once.
//!
//! Lifetimes do what Java's arena scopes do at run time: a segment borrows its allocator, so
//! using a segment after its arena is dropped is a compile error, not an
//! `IllegalStateException`.

mod allocator;
mod arena;
pub mod arena_pool;
pub mod buffer_stack;
mod segment;
mod shared_segment;
mod target;

pub use allocator::{PrefixAllocator, SegmentAllocator, SlicingAllocator};
pub use arena::{Arena, ConfinedArena, GlobalArena, SharedArena};
pub use arena_pool::{ArenaPool, PooledArena};
pub use buffer_stack::{linker_stack, BufferStack, Frame};
pub use segment::MemorySegment;
pub use shared_segment::SharedSegment;
pub use target::NullTerminated;

#[cfg(test)]
mod tests;
