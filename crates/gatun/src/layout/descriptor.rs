//! [`FunctionDescriptor`]: the C signature of a downcall or upcall (Java's
//! `FunctionDescriptor`).

use std::fmt::{self, Write};
use std::sync::Arc;

use crate::layout::{text, MemoryLayout};

/// Argument layouts as [`FunctionDescriptor::of`] and friends take them: an array of layouts
/// (`[ValueLayout::I32, ValueLayout::ADDRESS]`, `[]` for none, any element that converts into
/// a [`MemoryLayout`]), a `Vec`, a slice, the usual iterator adapters (`.iter().map(..)`,
/// `.iter().cloned()`, `.chain(..)`, `.take(n)`, ...), or [`Layouts`] around any other
/// iterator.
///
/// Arrays of 1 to 64 elements may hold any `Into<MemoryLayout>` type; the empty array `[]` is
/// taken as `[MemoryLayout; 0]`, which is what lets `FunctionDescriptor::of(ret, [])` compile
/// without a type annotation. Longer lists go through a `Vec` or [`Layouts`].
///
/// ```
/// use gatun::{FunctionDescriptor, MemoryLayout, ValueLayout};
/// let none = FunctionDescriptor::of(ValueLayout::I32, []);
/// let two = FunctionDescriptor::of(ValueLayout::I32, [ValueLayout::I32, ValueLayout::I64]);
/// let from_vec = FunctionDescriptor::of(ValueLayout::I32, vec![ValueLayout::I32, ValueLayout::I64]);
/// let from_iter = FunctionDescriptor::of_void(gatun::linker::Layouts(
///     (0..3).map(|_| ValueLayout::F64),
/// ));
/// assert_eq!(none.argument_layouts().len(), 0);
/// assert_eq!(two, from_vec);
/// assert_eq!(from_iter.to_string(), "(f64, f64, f64)v");
/// ```
pub trait ArgumentLayouts {
    /// The layouts, in order.
    fn into_layouts(self) -> Vec<MemoryLayout>;
}

/// Any iterator of layouts as [`ArgumentLayouts`] (`Layouts(iter)`).
///
/// ```
/// use gatun::linker::Layouts;
/// use gatun::{FunctionDescriptor, ValueLayout};
/// let d = FunctionDescriptor::of(ValueLayout::I64, Layouts(std::iter::repeat(ValueLayout::I64).take(6)));
/// assert_eq!(d.argument_layouts().len(), 6);
/// ```
#[derive(Debug, Clone)]
pub struct Layouts<I>(pub I);

impl<I> ArgumentLayouts for Layouts<I>
where
    I: IntoIterator,
    I::Item: Into<MemoryLayout>,
{
    fn into_layouts(self) -> Vec<MemoryLayout> {
        self.0.into_iter().map(Into::into).collect()
    }
}

impl ArgumentLayouts for [MemoryLayout; 0] {
    fn into_layouts(self) -> Vec<MemoryLayout> {
        Vec::new()
    }
}

macro_rules! array_layouts {
    ($($n:literal)*) => {$(
        impl<L: Into<MemoryLayout>> ArgumentLayouts for [L; $n] {
            fn into_layouts(self) -> Vec<MemoryLayout> {
                self.into_iter().map(Into::into).collect()
            }
        }
    )*};
}

array_layouts! {
    1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
    33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62
    63 64
}

/// Iterator adapters over layouts (`layouts.iter().map(..)`, `.iter().cloned()`, `.chain(..)`,
/// `repeat(..).take(n)`, ...): each implements [`ArgumentLayouts`] directly, so the common
/// ways of building a list need no [`Layouts`] wrapper. (A blanket impl for every iterator
/// would collide with the array, `Vec` and slice impls.)
macro_rules! iterator_layouts {
    ($($t:ty => [$($g:tt)*];)*) => {$(
        impl<$($g)*> ArgumentLayouts for $t
        where
            $t: Iterator,
            <$t as Iterator>::Item: Into<MemoryLayout>,
        {
            fn into_layouts(self) -> Vec<MemoryLayout> {
                self.map(Into::into).collect()
            }
        }
    )*};
}

iterator_layouts! {
    std::iter::Map<I, F> => [I, F];
    std::iter::Cloned<I> => [I];
    std::iter::Copied<I> => [I];
    std::iter::Chain<A, B> => [A, B];
    std::iter::Take<I> => [I];
    std::iter::Skip<I> => [I];
    std::iter::Rev<I> => [I];
    std::iter::Filter<I, P> => [I, P];
    std::iter::FilterMap<I, F> => [I, F];
    std::iter::Once<L> => [L];
    std::iter::RepeatN<L> => [L];
    std::slice::Iter<'s, L> => ['s, L];
    std::vec::IntoIter<L> => [L];
    std::array::IntoIter<L, N> => [L, const N: usize];
}

impl<L: Into<MemoryLayout>> ArgumentLayouts for Vec<L> {
    fn into_layouts(self) -> Vec<MemoryLayout> {
        self.into_iter().map(Into::into).collect()
    }
}

impl<'s, L> ArgumentLayouts for &'s [L]
where
    &'s L: Into<MemoryLayout>,
{
    fn into_layouts(self) -> Vec<MemoryLayout> {
        self.iter().map(Into::into).collect()
    }
}

impl<'s, L> ArgumentLayouts for &'s Vec<L>
where
    &'s L: Into<MemoryLayout>,
{
    fn into_layouts(self) -> Vec<MemoryLayout> {
        self.iter().map(Into::into).collect()
    }
}

/// A function's return layout (or `void`) and argument layouts, in order.
///
/// For a variadic function the descriptor lists the fixed arguments *and* the variadic
/// arguments of one particular call, already promoted (C11 §6.5.2.2 ¶7: `float` → `double`,
/// integers narrower than `int` → `int`); where the variadic part starts is a linker option
/// (`FirstVariadicArg`), as in Java.
///
/// Descriptors are immutable, cheap to clone (`Arc` inside), `Send + Sync`, and compare by
/// structure (two descriptors of the same shape are equal, which the stub cache relies on).
///
/// ```
/// use gatun::{FunctionDescriptor, MemoryLayout, ValueLayout as V};
/// // double hypot(double, double) and struct point mid(struct point, struct point).
/// let hypot = FunctionDescriptor::of(V::F64, [V::F64, V::F64]);
/// assert_eq!(hypot.to_string(), "(f64, f64)f64");
/// let point = MemoryLayout::c_struct([V::I32, V::I32]).unwrap();
/// let mid = FunctionDescriptor::of(point.clone(), [point.clone(), point]);
/// assert_eq!(mid.argument_layouts().len(), 2);
/// assert_eq!(FunctionDescriptor::of_void([]).return_layout(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FunctionDescriptor {
    ret: Option<MemoryLayout>,
    args: Arc<[MemoryLayout]>,
}

impl FunctionDescriptor {
    /// A descriptor returning `ret` and taking `args`.
    ///
    /// ```
    /// use gatun::{FunctionDescriptor, ValueLayout};
    /// let getpid = FunctionDescriptor::of(ValueLayout::I32, []);
    /// let strlen = FunctionDescriptor::of(ValueLayout::U64, [ValueLayout::ADDRESS]);
    /// assert_eq!(strlen.to_string(), "(ptr)u64");
    /// # let _ = getpid;
    /// ```
    pub fn of<I: ArgumentLayouts>(ret: impl Into<MemoryLayout>, args: I) -> FunctionDescriptor {
        FunctionDescriptor {
            ret: Some(ret.into()),
            args: args.into_layouts().into(),
        }
    }

    /// A descriptor returning `void` and taking `args`.
    ///
    /// ```
    /// use gatun::{FunctionDescriptor, ValueLayout};
    /// // void free(void *)
    /// let free = FunctionDescriptor::of_void([ValueLayout::ADDRESS]);
    /// assert_eq!(free.return_layout(), None);
    /// assert_eq!(free.to_string(), "(ptr)v");
    /// ```
    pub fn of_void<I: ArgumentLayouts>(args: I) -> FunctionDescriptor {
        FunctionDescriptor {
            ret: None,
            args: args.into_layouts().into(),
        }
    }

    /// The return layout; `None` for `void`.
    ///
    /// ```
    /// use gatun::{FunctionDescriptor, MemoryLayout, ValueLayout};
    /// let d = FunctionDescriptor::of(ValueLayout::F32, [ValueLayout::F32]);
    /// assert_eq!(d.return_layout(), Some(&MemoryLayout::from(ValueLayout::F32)));
    /// assert_eq!(FunctionDescriptor::of_void([]).return_layout(), None);
    /// ```
    pub fn return_layout(&self) -> Option<&MemoryLayout> {
        self.ret.as_ref()
    }

    /// The argument layouts.
    ///
    /// ```
    /// use gatun::{FunctionDescriptor, MemoryLayout, ValueLayout};
    /// let d = FunctionDescriptor::of(ValueLayout::I32, [ValueLayout::ADDRESS, ValueLayout::I64]);
    /// assert_eq!(d.argument_layouts().len(), 2);
    /// assert_eq!(d.argument_layouts()[1], MemoryLayout::from(ValueLayout::I64));
    /// ```
    pub fn argument_layouts(&self) -> &[MemoryLayout] {
        &self.args
    }

    /// The same descriptor with `layouts` appended to the arguments (Java's `appendArgumentLayouts`).
    ///
    /// ```
    /// use gatun::{FunctionDescriptor, ValueLayout};
    /// let open = FunctionDescriptor::of(ValueLayout::I32, [ValueLayout::ADDRESS, ValueLayout::I32]);
    /// let with_mode = open.append_argument_layouts([ValueLayout::U32]); // the variadic mode_t
    /// assert_eq!(with_mode.to_string(), "(ptr, i32, u32)i32");
    /// assert_eq!(open.argument_layouts().len(), 2); // unchanged
    /// ```
    pub fn append_argument_layouts<I: ArgumentLayouts>(&self, layouts: I) -> FunctionDescriptor {
        FunctionDescriptor {
            ret: self.ret.clone(),
            args: self
                .args
                .iter()
                .cloned()
                .chain(layouts.into_layouts())
                .collect(),
        }
    }

    /// The same descriptor with `layouts` inserted before argument `index` (Java's
    /// `insertArgumentLayouts`). `index` is clamped to the argument count.
    ///
    /// ```
    /// use gatun::{FunctionDescriptor, ValueLayout};
    /// let d = FunctionDescriptor::of_void([ValueLayout::I32, ValueLayout::I32]);
    /// assert_eq!(d.insert_argument_layouts(1, [ValueLayout::F64]).to_string(), "(i32, f64, i32)v");
    /// assert_eq!(d.insert_argument_layouts(9, [ValueLayout::I8]).to_string(), "(i32, i32, i8)v");
    /// ```
    pub fn insert_argument_layouts<I: ArgumentLayouts>(
        &self,
        index: usize,
        layouts: I,
    ) -> FunctionDescriptor {
        let index = index.min(self.args.len());
        let mut args: Vec<MemoryLayout> = self.args[..index].to_vec();
        args.extend(layouts.into_layouts());
        args.extend(self.args[index..].iter().cloned());
        FunctionDescriptor {
            ret: self.ret.clone(),
            args: args.into(),
        }
    }

    /// The same arguments with another return layout (`None` for `void`).
    ///
    /// ```
    /// use gatun::{FunctionDescriptor, ValueLayout};
    /// let d = FunctionDescriptor::of_void([ValueLayout::ADDRESS]);
    /// let d = d.change_return_layout(Some(ValueLayout::U64.into()));
    /// assert_eq!(d.to_string(), "(ptr)u64");
    /// assert_eq!(d.change_return_layout(None).return_layout(), None);
    /// ```
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::ValueLayout as V;

    #[test]
    fn every_argument_form_gives_the_same_descriptor() {
        let want = FunctionDescriptor::of(V::I32, [V::I32, V::ADDRESS]);
        let ml: MemoryLayout = V::ADDRESS.into();
        let want_vec = vec![V::I32, V::ADDRESS];
        assert_eq!(
            want,
            FunctionDescriptor::of(V::I32, [MemoryLayout::from(V::I32), ml.clone()])
        );
        assert_eq!(
            want,
            FunctionDescriptor::of(V::I32, vec![V::I32, V::ADDRESS])
        );
        assert_eq!(
            want,
            FunctionDescriptor::of(V::I32, &[V::I32, V::ADDRESS][..])
        );
        assert_eq!(want, FunctionDescriptor::of(V::I32, &want_vec));
        assert_eq!(
            want,
            FunctionDescriptor::of(V::I32, Layouts([V::I32, V::ADDRESS].iter()))
        );
        // Iterator adapters work as they are.
        let layouts = [V::I32, V::ADDRESS];
        assert_eq!(want, FunctionDescriptor::of(V::I32, layouts.iter()));
        assert_eq!(
            want,
            FunctionDescriptor::of(V::I32, layouts.iter().cloned())
        );
        assert_eq!(
            want,
            FunctionDescriptor::of(V::I32, layouts.clone().into_iter())
        );
        assert_eq!(
            want,
            FunctionDescriptor::of(V::I32, want_vec.clone().into_iter())
        );
        let named =
            FunctionDescriptor::of(V::I32, layouts.iter().map(|l| l.clone().with_name("x")));
        assert_eq!(named.to_string(), "(i32(x), ptr(x))i32");
        assert_eq!(
            want,
            FunctionDescriptor::of(V::I32, std::iter::once(V::I32).chain([V::ADDRESS]))
        );
        assert_eq!(
            FunctionDescriptor::of_void(std::iter::repeat_n(V::F64, 3)).to_string(),
            "(f64, f64, f64)v"
        );
        // `[]` needs no annotation.
        let none = FunctionDescriptor::of(V::I32, []);
        assert_eq!(none.to_string(), "()i32");
        assert_eq!(FunctionDescriptor::of_void([]).to_string(), "()v");
        assert_eq!(
            none.append_argument_layouts([V::F64]).to_string(),
            "(f64)i32"
        );
        assert_eq!(
            want.insert_argument_layouts(1, [V::F32]).to_string(),
            "(i32, f32, ptr)i32"
        );
        assert_eq!(
            FunctionDescriptor::of_void([V::I64; 64])
                .argument_layouts()
                .len(),
            64
        );
    }
}
