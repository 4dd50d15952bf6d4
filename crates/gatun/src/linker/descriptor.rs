//! [`FunctionDescriptor`]: the C signature of a downcall or upcall (Java's
//! `FunctionDescriptor`).

use std::fmt::{self, Write};
use std::sync::Arc;

use crate::layout::{text, MemoryLayout};

/// A function's return layout (or `void`) and argument layouts, in order.
///
/// For a variadic function the descriptor lists the fixed arguments *and* the variadic
/// arguments of one particular call, already promoted (C11 §6.5.2.2 ¶7: `float` → `double`,
/// integers narrower than `int` → `int`); where the variadic part starts is a linker option
/// (`FirstVariadicArg`), as in Java.
///
/// Descriptors are immutable, cheap to clone (`Arc` inside), `Send + Sync`, and compare by
/// structure (two descriptors of the same shape are equal, which the stub cache relies on).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FunctionDescriptor {
    ret: Option<MemoryLayout>,
    args: Arc<[MemoryLayout]>,
}

impl FunctionDescriptor {
    /// A descriptor returning `ret` and taking `args`.
    pub fn of<I>(ret: impl Into<MemoryLayout>, args: I) -> FunctionDescriptor
    where
        I: IntoIterator,
        I::Item: Into<MemoryLayout>,
    {
        FunctionDescriptor {
            ret: Some(ret.into()),
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// A descriptor returning `void` and taking `args`.
    pub fn of_void<I>(args: I) -> FunctionDescriptor
    where
        I: IntoIterator,
        I::Item: Into<MemoryLayout>,
    {
        FunctionDescriptor {
            ret: None,
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// The return layout; `None` for `void`.
    pub fn return_layout(&self) -> Option<&MemoryLayout> {
        self.ret.as_ref()
    }

    /// The argument layouts.
    pub fn argument_layouts(&self) -> &[MemoryLayout] {
        &self.args
    }

    /// The same descriptor with `layouts` appended to the arguments (Java's `appendArgumentLayouts`).
    pub fn append_argument_layouts<I>(&self, layouts: I) -> FunctionDescriptor
    where
        I: IntoIterator,
        I::Item: Into<MemoryLayout>,
    {
        FunctionDescriptor {
            ret: self.ret.clone(),
            args: self
                .args
                .iter()
                .cloned()
                .chain(layouts.into_iter().map(Into::into))
                .collect(),
        }
    }

    /// The same descriptor with `layouts` inserted before argument `index` (Java's
    /// `insertArgumentLayouts`). `index` is clamped to the argument count.
    pub fn insert_argument_layouts<I>(&self, index: usize, layouts: I) -> FunctionDescriptor
    where
        I: IntoIterator,
        I::Item: Into<MemoryLayout>,
    {
        let index = index.min(self.args.len());
        let mut args: Vec<MemoryLayout> = self.args[..index].to_vec();
        args.extend(layouts.into_iter().map(Into::into));
        args.extend(self.args[index..].iter().cloned());
        FunctionDescriptor {
            ret: self.ret.clone(),
            args: args.into(),
        }
    }

    /// The same arguments with another return layout (`None` for `void`).
    pub fn change_return_layout(&self, ret: Option<MemoryLayout>) -> FunctionDescriptor {
        FunctionDescriptor {
            ret,
            args: self.args.clone(),
        }
    }
}

impl fmt::Display for FunctionDescriptor {
    /// `(i32, f64)i32`, `(ptr)v` — Java's notation. At most 2048 bytes, like a layout's
    /// text: a longer rendering is cut and ends with `…`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        text::bounded(f, |w| {
            w.write_str("(")?;
            for (i, a) in self.args.iter().enumerate() {
                if i > 0 {
                    w.write_str(", ")?;
                }
                text::write_layout(a, w)?;
            }
            w.write_str(")")?;
            match &self.ret {
                Some(r) => text::write_layout(r, w),
                None => w.write_str("v"),
            }
        })
    }
}
