//! Layouts as text, bounded.
//!
//! A layout whose members are shared (`Arc`s) can expand to a tree exponential in its depth, so
//! every rendering here goes through [`Bounded`], which stops after [`TEXT_LIMIT`] bytes and ends
//! the text with `…`. Rendering stops as soon as the budget is spent (the writer fails and the
//! recursion unwinds), so formatting any layout costs O([`TEXT_LIMIT`] + depth).

use std::fmt::{self, Write};

use super::{
    MemoryLayout, PaddingLayout, PointerTarget, SequenceLayout, StructLayout, UnionLayout,
    ValueLayout,
};

/// The most bytes of text one layout or descriptor renders to (before the final `…`).
pub(crate) const TEXT_LIMIT: usize = 2048;

/// A writer that accepts at most a budget of bytes, then fails.
pub(crate) struct Bounded<'a> {
    out: &'a mut dyn Write,
    left: usize,
    cut: bool,
}

impl Write for Bounded<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.cut {
            return Err(fmt::Error);
        }
        if s.len() <= self.left {
            self.left -= s.len();
            return self.out.write_str(s);
        }
        let mut end = self.left;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.out.write_str(&s[..end])?;
        self.left = 0;
        self.cut = true;
        Err(fmt::Error)
    }
}

/// Runs `body` on a writer of at most [`TEXT_LIMIT`] bytes into `f`, appending `…` when the
/// text was cut.
pub(crate) fn bounded(
    f: &mut fmt::Formatter<'_>,
    body: impl FnOnce(&mut Bounded<'_>) -> fmt::Result,
) -> fmt::Result {
    let mut b = Bounded {
        out: f,
        left: TEXT_LIMIT,
        cut: false,
    };
    let r = body(&mut b);
    let cut = b.cut;
    match r {
        Err(_) if cut => f.write_str("…"),
        r => r,
    }
}

/// Writes `l` in the compact notation of [`MemoryLayout`]'s `Display`.
pub(crate) fn write_layout(l: &MemoryLayout, w: &mut Bounded<'_>) -> fmt::Result {
    match l {
        MemoryLayout::Value(v) => write_value(v, w),
        MemoryLayout::Struct(s) => write_struct(s, w),
        MemoryLayout::Union(u) => write_union(u, w),
        MemoryLayout::Sequence(s) => write_sequence(s, w),
        MemoryLayout::Padding(p) => write_padding(p, w),
    }
}

fn write_name(name: Option<&str>, w: &mut Bounded<'_>) -> fmt::Result {
    match name {
        Some(n) => write!(w, "({n})"),
        None => Ok(()),
    }
}

fn write_value(v: &ValueLayout, w: &mut Bounded<'_>) -> fmt::Result {
    w.write_str(v.kind().name())?;
    if v.byte_alignment() != v.kind().natural_alignment() {
        write!(w, "%{}", v.byte_alignment())?;
    }
    match v.pointer_target() {
        Some(PointerTarget::Layout(t)) => {
            w.write_str(":")?;
            write_layout(t, w)?;
        }
        Some(PointerTarget::CString) => w.write_str(":cstr")?,
        Some(PointerTarget::Enclosing(name)) => write!(w, ":^{name}")?,
        None => {}
    }
    write_name(v.name(), w)
}

fn write_struct(s: &StructLayout, w: &mut Bounded<'_>) -> fmt::Result {
    w.write_str("[")?;
    let mut end = 0;
    for (i, (off, m)) in s.fields().enumerate() {
        if i > 0 {
            w.write_str(" ")?;
        }
        if off > end {
            write!(w, "x{} ", off - end)?;
        }
        write_layout(m, w)?;
        end = off + m.byte_size();
    }
    if s.byte_size > end {
        write!(w, " x{}", s.byte_size - end)?;
    }
    w.write_str("]")?;
    if s.byte_alignment != s.shape.member_alignment {
        write!(w, "%{}", s.byte_alignment)?;
    }
    write_name(s.name(), w)
}

fn write_union(u: &UnionLayout, w: &mut Bounded<'_>) -> fmt::Result {
    w.write_str("<")?;
    for (i, m) in u.members.iter().enumerate() {
        if i > 0 {
            w.write_str("|")?;
        }
        write_layout(m, w)?;
    }
    w.write_str(">")?;
    write_name(u.name(), w)
}

fn write_sequence(s: &SequenceLayout, w: &mut Bounded<'_>) -> fmt::Result {
    write!(w, "[{}:", s.count)?;
    write_layout(&s.element, w)?;
    w.write_str("]")?;
    write_name(s.name(), w)
}

fn write_padding(p: &PaddingLayout, w: &mut Bounded<'_>) -> fmt::Result {
    write!(w, "x{}", p.byte_size)?;
    write_name(p.name(), w)
}

impl fmt::Display for MemoryLayout {
    /// A compact, Java-like rendering: `i32`, `[i8(tag) x7 f64(x)](point)`, `<i32|f32>`,
    /// `[4:i32]`, `x7` for 7 padding bytes; `%N` marks a non-natural alignment, `ptr:T` a
    /// pointer with target layout `T`, `ptr:cstr` one to a C string, `ptr:^name` one to the
    /// enclosing record `name` ([`super::PointerTarget`]). At most 2048 bytes: longer
    /// renderings (big or deeply shared layouts) are cut and end with `…`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        bounded(f, |w| write_layout(self, w))
    }
}

impl fmt::Display for ValueLayout {
    /// `i32`, `i32%1` (alignment lowered to 1), `ptr:[i32 i32](point)`, `f64(x)`; bounded like
    /// [`MemoryLayout`]'s rendering.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        bounded(f, |w| write_value(self, w))
    }
}

impl fmt::Debug for MemoryLayout {
    /// The variant and the bounded `Display` text (derived output would expand shared members).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let variant = match self {
            MemoryLayout::Value(_) => "Value",
            MemoryLayout::Struct(_) => "Struct",
            MemoryLayout::Union(_) => "Union",
            MemoryLayout::Sequence(_) => "Sequence",
            MemoryLayout::Padding(_) => "Padding",
        };
        write!(f, "{variant}(")?;
        bounded(f, |w| write_layout(self, w))?;
        f.write_str(")")
    }
}

impl fmt::Debug for StructLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StructLayout(")?;
        bounded(f, |w| write_struct(self, w))?;
        f.write_str(")")
    }
}

impl fmt::Debug for UnionLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UnionLayout(")?;
        bounded(f, |w| write_union(self, w))?;
        f.write_str(")")
    }
}

impl fmt::Debug for SequenceLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SequenceLayout(")?;
        bounded(f, |w| write_sequence(self, w))?;
        f.write_str(")")
    }
}
