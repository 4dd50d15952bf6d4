//! Typed downcalls: [`DowncallHandle::typed`] checks Rust argument and return types
//! against the handle's descriptor once and returns a [`TypedHandle`] whose
//! [`call`](TypedHandle::call) takes the arguments as a Rust tuple and returns a Rust value.
//!
//! - For a handle without capture and not variadic, `call` is the target function itself,
//!   called through an `unsafe extern "C" fn(A0, A1, ..) -> R` pointer: the Rust compiler then
//!   does the SysV lowering, exactly as for a hand-written `extern "C"` declaration (floor
//!   speed). This includes `#[repr(C)]` structs by value, whose [`CType`] layout was checked
//!   against the descriptor: rustc classifies them as a C compiler does (§3.2.3).
//! - Capture and variadic handles go through the handle's compiled stub (raw entry, pointers to
//!   the tuple's fields; `%al`, float promotion and errno handled by the stub), or the
//!   trampoline when the handle has no stub. A Rust `extern "C" fn` type can express neither.
//!
//! Types map to layouts through [`CType`]: implemented for every [`Scalar`] (`i32`, `f64`,
//! `*mut T`, `bool`, ...) and, with `unsafe impl`, by users for their `#[repr(C)]` structs.
//!
//! # Invariants
//! - A `TypedHandle<A, R>` exists only if `A`'s layouts have the same shape as the descriptor's
//!   arguments (with a leading pointer for the capture state) and `R`'s as its return; shapes
//!   are compared structurally (kinds, sizes, offsets, alignments; names ignored).
//! - The direct path is taken only for non-capture, non-variadic signatures, where the Rust
//!   `extern "C"` ABI of the checked types and the descriptor's C signature coincide.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use crate::error::{Error, Result};
use crate::layout::{same_shape, MemoryLayout, ScalarKind, ValueLayout};
use crate::linker::DowncallHandle;
use crate::value::Scalar;

/// A Rust type with a C layout, usable as a typed downcall argument or return.
///
/// Implemented for every [`Scalar`]; implement it for your own `#[repr(C)]` structs.
///
/// # Safety
/// `layout()` must describe `Self` exactly: the same size and alignment in bytes, and a field
/// of the layout's kind at every offset where `Self` has one (`#[repr(C)]` field order). Every
/// bit pattern the C side can return must be a valid `Self` (plain integers, floats, raw
/// pointers and structs of them; no `bool`, references or enums inside a returned struct).
/// `SCALAR` must stay `None` for non-scalars. A typed handle may call the C function directly
/// with `Self` as an `extern "C"` argument or return type, so `Self` should be `#[repr(C)]`.
pub unsafe trait CType: Copy + 'static {
    /// `Some(kind)` for scalars (gatun sets it; leave the default for structs).
    const SCALAR: Option<ScalarKind> = None;
    /// The layout of `Self`.
    fn layout() -> MemoryLayout;
}

// SAFETY: a `Scalar` is exactly one C scalar of `KIND` (sealed trait); bool is read as
// `byte != 0` by the stub path and passed natively by the direct path.
unsafe impl<T: Scalar> CType for T {
    const SCALAR: Option<ScalarKind> = Some(T::KIND);
    fn layout() -> MemoryLayout {
        ValueLayout::new(T::KIND).into()
    }
}

/// A typed return: `()` for `void`, or any [`CType`].
///
/// # Safety
/// As [`CType`]; implemented by gatun only (for `()` and every `CType`).
pub unsafe trait CReturn: Sized + 'static {
    /// The return layout (`None` for `void`).
    fn return_layout() -> Option<MemoryLayout>;
    /// Whether the value comes back as a scalar register value (else: in the return buffer).
    #[doc(hidden)]
    const SCALAR: bool;
    /// Builds the value from the stub's raw register bits or its return buffer.
    ///
    /// # Safety
    /// `buf` holds a `Self` written by the callee when `SCALAR` is false.
    #[doc(hidden)]
    unsafe fn from_stub(bits: u64, buf: *const Self) -> Self;
}

// SAFETY: `void` has no bytes.
unsafe impl CReturn for () {
    fn return_layout() -> Option<MemoryLayout> {
        None
    }
    const SCALAR: bool = true;
    #[inline(always)]
    unsafe fn from_stub(_bits: u64, _buf: *const ()) {}
}

// SAFETY: scalars come back in the low bytes of the 64-bit register (taken in the target's
// byte order; a bool as `byte != 0`, so any byte is a valid bool); structs are written into `buf` by
// the callee / the stub, and every bit pattern is valid by `CType`'s contract.
unsafe impl<T: CType> CReturn for T {
    fn return_layout() -> Option<MemoryLayout> {
        Some(T::layout())
    }
    const SCALAR: bool = T::SCALAR.is_some();
    #[inline(always)]
    unsafe fn from_stub(bits: u64, buf: *const T) -> T {
        if T::SCALAR.is_some() {
            // The register's low bytes, in memory order: the first ones on a little-endian
            // target, the last ones on a big-endian target.
            let bytes = bits.to_ne_bytes();
            let low = if cfg!(target_endian = "big") {
                8 - std::mem::size_of::<T>().min(8)
            } else {
                0
            };
            // SAFETY: a scalar `T` is at most 8 bytes, so `low..low + size_of::<T>()` is in
            // `bytes`; a bool is read from one byte as `byte != 0` below, and every other
            // scalar accepts any bit pattern.
            unsafe {
                if T::SCALAR == Some(ScalarKind::Bool) {
                    let b = bits as u8 != 0;
                    std::ptr::read(std::ptr::addr_of!(b).cast::<T>())
                } else {
                    std::ptr::read_unaligned(bytes.as_ptr().add(low).cast::<T>())
                }
            }
        } else {
            // SAFETY: the callee wrote a whole `T` into `buf` (caller's contract).
            unsafe { buf.read() }
        }
    }
}

/// The most arguments a typed call takes (tuple arity).
pub const MAX_TYPED_ARGS: usize = 12;

/// A tuple of [`CType`] arguments: `()`, `(A,)`, `(A, B)`, ... up to [`MAX_TYPED_ARGS`].
///
/// # Safety
/// Implemented by gatun only: `pointers` writes one pointer per field, in order.
pub unsafe trait CArgs: Copy {
    /// Number of arguments.
    const COUNT: usize;
    /// The argument layouts, in order.
    fn layouts() -> Vec<MemoryLayout>;
    /// Writes a pointer to each field into `out[..COUNT]`.
    #[doc(hidden)]
    fn pointers(&self, out: &mut [MaybeUninit<*const u8>; MAX_TYPED_ARGS]);
    /// Calls `target` as `unsafe extern "C" fn(fields..) -> R`.
    ///
    /// # Safety
    /// `target` must be a C function of exactly that type.
    #[doc(hidden)]
    unsafe fn call_direct<R: CReturn>(self, target: *const c_void) -> R;
    /// `unsafe extern "C" fn(fields..) -> R`, the Rust type of a C function taking these
    /// arguments.
    type ExternFn<R: CReturn>: Copy;
    /// `target` as an [`CArgs::ExternFn`].
    ///
    /// # Safety
    /// `target` must be a C function of exactly that type.
    #[doc(hidden)]
    unsafe fn extern_fn<R: CReturn>(target: *const c_void) -> Self::ExternFn<R>;
    /// `handle`'s out-of-line (stub or trampoline) call, with the fields passed one by one so
    /// that the caller's direct path does not spill the tuple.
    ///
    /// # Safety
    /// As [`TypedHandle::call`].
    #[doc(hidden)]
    unsafe fn call_outlined<R: CReturn>(self, handle: &TypedHandle<Self, R>) -> R;
}

macro_rules! args_impl {
    ($n:expr; $($T:ident $i:tt $v:ident),*) => {
        // SAFETY: one pointer per field, in order; the direct call uses the fields' types.
        unsafe impl<$($T: CType),*> CArgs for ($($T,)*) {
            const COUNT: usize = $n;
            fn layouts() -> Vec<MemoryLayout> {
                vec![$($T::layout()),*]
            }
            #[inline(always)]
            #[allow(unused_variables)]
            fn pointers(&self, out: &mut [MaybeUninit<*const u8>; MAX_TYPED_ARGS]) {
                $( out[$i].write((&self.$i as *const $T).cast::<u8>()); )*
            }
            type ExternFn<R: CReturn> = unsafe extern "C" fn($($T),*) -> R;
            #[inline(always)]
            unsafe fn extern_fn<R: CReturn>(target: *const c_void) -> Self::ExternFn<R> {
                // SAFETY: the caller guarantees `target` has exactly this C type.
                unsafe { std::mem::transmute(target) }
            }
            #[inline(always)]
            unsafe fn call_outlined<R: CReturn>(self, handle: &TypedHandle<Self, R>) -> R {
                #[cold]
                #[inline(never)]
                #[allow(clippy::too_many_arguments)] // one per C argument, by design
                unsafe fn outlined<$($T: CType,)* R: CReturn>(
                    handle: &TypedHandle<($($T,)*), R>,
                    $($v: $T),*
                ) -> R {
                    // SAFETY: forwarded.
                    unsafe { handle.call_indirect(&($($v,)*)) }
                }
                // SAFETY: forwarded.
                unsafe { outlined(handle, $(self.$i),*) }
            }
            #[inline(always)]
            unsafe fn call_direct<R: CReturn>(self, target: *const c_void) -> R {
                // SAFETY: the caller guarantees `target` has exactly this C type.
                unsafe {
                    let f: unsafe extern "C" fn($($T),*) -> R = std::mem::transmute(target);
                    f($(self.$i),*)
                }
            }
        }
    };
}

args_impl!(0;);
args_impl!(1; A 0 a);
args_impl!(2; A 0 a, B 1 b);
args_impl!(3; A 0 a, B 1 b, C 2 c);
args_impl!(4; A 0 a, B 1 b, C 2 c, D 3 d);
args_impl!(5; A 0 a, B 1 b, C 2 c, D 3 d, E 4 e);
args_impl!(6; A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, F 5 f);
args_impl!(7; A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, F 5 f, G 6 g);
args_impl!(8; A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, F 5 f, G 6 g, H 7 h);
args_impl!(9; A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, F 5 f, G 6 g, H 7 h, I 8 i);
args_impl!(10; A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, F 5 f, G 6 g, H 7 h, I 8 i, J 9 j);
args_impl!(11; A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, F 5 f, G 6 g, H 7 h, I 8 i, J 9 j, K 10 k);
args_impl!(12; A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, F 5 f, G 6 g, H 7 h, I 8 i, J 9 j, K 10 k, L 11 l);

/// A [`DowncallHandle`] viewed with Rust types (see the module documentation). `Send + Sync`,
/// cheap to clone; calling never allocates.
///
/// ```
/// # #[cfg(gatun_executes)] {
/// use gatun::linker::SymbolLookup;
/// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
/// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
/// let h = Linker::native().downcall(&abs, &FunctionDescriptor::of(V::I32, [V::I32]), &[]).unwrap();
/// let abs = h.typed::<(i32,), i32>().unwrap(); // checked once against the descriptor
/// // SAFETY: abs(int) has no preconditions.
/// assert_eq!(unsafe { abs.call((-9,)) }, 9);
/// assert!(h.typed::<(i64,), i32>().is_err());
/// # }
/// ```
pub struct TypedHandle<A, R> {
    handle: DowncallHandle,
    target: *const c_void,
    direct: bool,
    _types: PhantomData<fn(A) -> R>,
}

// SAFETY: the target address is immutable and the handle is Send + Sync.
unsafe impl<A, R> Send for TypedHandle<A, R> {}
// SAFETY: as above; `call` takes `&self` and mutates nothing.
unsafe impl<A, R> Sync for TypedHandle<A, R> {}

impl<A, R> Clone for TypedHandle<A, R> {
    fn clone(&self) -> Self {
        TypedHandle {
            handle: self.handle.clone(),
            target: self.target,
            direct: self.direct,
            _types: PhantomData,
        }
    }
}

impl<A, R> std::fmt::Debug for TypedHandle<A, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "TypedHandle({:?}, {})",
            self.handle,
            if self.direct { "direct" } else { "stub" }
        )
    }
}

impl DowncallHandle {
    /// This handle with Rust argument types `A` (a tuple) and return type `R` (`()` for void),
    /// checked against the descriptor: `handle.typed::<(i32, f64), i32>()`. With
    /// [`crate::linker::LinkerOption::CaptureCallState`] the first tuple element is the
    /// capture buffer's address (a `*mut i32` pointing at a 4-aligned capture struct of
    /// [`capture_state_layout`](crate::linker::capture_state_layout)'s size: 4 bytes, the
    /// `errno` field, or 12 bytes on Windows, where all three fields are written).
    ///
    /// # Errors
    /// [`Error::ArgumentCount`] for a tuple of the wrong length; [`Error::ValueMismatch`] for an
    /// argument or return type whose layout has another shape than the descriptor's (kinds,
    /// sizes, offsets and alignments are compared; names are ignored).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{Error, FunctionDescriptor, Linker, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let h = Linker::native().downcall(&abs, &FunctionDescriptor::of(V::I32, [V::I32]), &[]).unwrap();
    /// let abs = h.typed::<(i32,), i32>().unwrap();
    /// // SAFETY: abs(int) has no preconditions.
    /// assert_eq!(unsafe { abs.call((-4,)) }, 4);
    /// assert!(matches!(h.typed::<(i32, i32), i32>(), Err(Error::ArgumentCount { .. })));
    /// assert!(matches!(h.typed::<(f32,), i32>(), Err(Error::ValueMismatch { .. })));
    /// # }
    /// ```
    pub fn typed<A: CArgs, R: CReturn>(&self) -> Result<TypedHandle<A, R>> {
        let capture = self.captures_call_state();
        let mut want: Vec<MemoryLayout> = Vec::with_capacity(A::COUNT);
        if capture {
            want.push(ValueLayout::ADDRESS.into());
        }
        want.extend(self.descriptor().argument_layouts().iter().cloned());
        if A::COUNT != want.len() {
            return Err(Error::ArgumentCount {
                function: self.function_label(),
                descriptor: self.descriptor().to_string(),
                capture,
                expected: want.len(),
                found: A::COUNT,
            });
        }
        for (i, (got, want)) in A::layouts().iter().zip(&want).enumerate() {
            if !same_shape(got, want) {
                return Err(Error::ValueMismatch {
                    position: format!("argument {} of {}", i + 1, self.function_label()),
                    expected: want.to_string(),
                    found: got.to_string(),
                });
            }
        }
        let ok = match (R::return_layout(), self.descriptor().return_layout()) {
            (None, None) => true,
            (Some(a), Some(b)) => same_shape(&a, b),
            _ => false,
        };
        if !ok {
            let name = |l: Option<&MemoryLayout>| l.map_or("void".to_string(), |l| l.to_string());
            return Err(Error::ValueMismatch {
                position: format!("the return of {}", self.function_label()),
                expected: name(self.descriptor().return_layout()),
                found: name(R::return_layout().as_ref()),
            });
        }
        let direct = !capture && !self.plan().is_variadic();
        Ok(TypedHandle {
            target: self.address(),
            direct,
            handle: self.clone(),
            _types: PhantomData,
        })
    }
}

impl<A: CArgs, R: CReturn> TypedHandle<A, R> {
    /// Whether calls go straight to the target as a typed `extern "C" fn` (no stub).
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::{LinkerOption, SymbolLookup};
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let plain = Linker::native().downcall(&abs, &d, &[]).unwrap();
    /// assert!(plain.typed::<(i32,), i32>().unwrap().is_direct());
    /// let capture = [LinkerOption::CaptureCallState(&["errno"])];
    /// let capturing = Linker::native().downcall(&abs, &d, &capture).unwrap();
    /// // The capture buffer comes first; the call goes through a stub that saves errno.
    /// assert!(!capturing.typed::<(*mut i32, i32), i32>().unwrap().is_direct());
    /// # }
    /// ```
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// The C function itself as a typed Rust function pointer
    /// (`unsafe extern "C" fn(A0, A1, ..) -> R`), when calls are direct ([`TypedHandle::is_direct`]:
    /// no capture, not variadic); `None` otherwise. Calling it is exactly a direct call (the
    /// compiler sees the pointer's type; no flag test, no tuple). The pointer is valid while the
    /// handle (which keeps the library loaded) is alive.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let h = Linker::native().downcall(&abs, &FunctionDescriptor::of(V::I32, [V::I32]), &[]).unwrap();
    /// let typed = h.typed::<(i32,), i32>().unwrap();
    /// let abs: unsafe extern "C" fn(i32) -> i32 = typed.as_extern_fn().unwrap();
    /// // SAFETY: abs(int) has no preconditions; `h` keeps the C library loaded.
    /// assert_eq!(unsafe { abs(-8) }, 8);
    /// # }
    /// ```
    pub fn as_extern_fn(&self) -> Option<A::ExternFn<R>> {
        // SAFETY: direct handles' targets are C functions of exactly these types (checked
        // against the descriptor by `DowncallHandle::typed`).
        self.direct
            .then(|| unsafe { A::extern_fn::<R>(self.target) })
    }

    /// The untyped handle.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let typed = Linker::native().downcall(&abs, &d, &[]).unwrap().typed::<(i32,), i32>().unwrap();
    /// assert_eq!(typed.handle().descriptor(), &d);
    /// # }
    /// ```
    pub fn handle(&self) -> &DowncallHandle {
        &self.handle
    }

    /// Calls the function. Never allocates; no per-call checks (they happened in
    /// [`DowncallHandle::typed`]).
    ///
    /// # Safety
    /// The symbol must be a function of the linked type and the arguments must satisfy its
    /// contract (valid pointers, ...); with capture, the first argument must point to a
    /// writable, 4-byte aligned capture struct of
    /// [`capture_state_layout`](crate::linker::capture_state_layout)'s size (4 bytes; 12 on
    /// Windows, where all three `i32` fields are read before and written after the call).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// // double ldexp(double x, int exp): x * 2^exp
    /// let ldexp = SymbolLookup::default_lookup().find("ldexp").unwrap();
    /// let d = FunctionDescriptor::of(V::F64, [V::F64, V::I32]);
    /// let h = Linker::native().downcall(&ldexp, &d, &[]).unwrap();
    /// let ldexp = h.typed::<(f64, i32), f64>().unwrap();
    /// // SAFETY: ldexp has no preconditions.
    /// assert_eq!(unsafe { ldexp.call((1.5, 3)) }, 12.0);
    /// # }
    /// ```
    #[inline(always)]
    pub unsafe fn call(&self, args: A) -> R {
        if self.direct {
            // SAFETY: checked at construction: a non-variadic, non-capture signature whose
            // types have the descriptor's layouts, so this is the target's C type.
            return unsafe { args.call_direct::<R>(self.target) };
        }
        // SAFETY: forwarded.
        unsafe { args.call_outlined(self) }
    }

    // Reached through `CArgs::call_outlined`, which passes the fields one by one into a cold,
    // out-of-line function: the direct path must not pay for spilling the arguments to build
    // pointers (a tuple passed by value or by reference is stored before the branch).
    #[inline(always)]
    unsafe fn call_indirect(&self, args: &A) -> R {
        let mut ptrs = [const { MaybeUninit::<*const u8>::uninit() }; MAX_TYPED_ARGS];
        args.pointers(&mut ptrs);
        let mut ret = MaybeUninit::<R>::uninit();
        let (errno, first) = if self.handle.captures_call_state() {
            // SAFETY: argument 0 is a pointer (checked at construction), written above.
            (
                unsafe { ptrs[0].assume_init().cast::<*mut i32>().read() },
                1,
            )
        } else {
            (std::ptr::null_mut(), 0)
        };
        // SAFETY: one initialised pointer per descriptor argument from `first` on, each to a
        // value whose layout matches (checked at construction); `ret` has the return layout's
        // size; `errno` null without capture, else the caller's capture buffer; the target's
        // contract is the caller's.
        let stub = unsafe {
            self.handle.call_stub_raw(
                ptrs.as_ptr().add(first).cast(),
                ret.as_mut_ptr().cast(),
                errno,
            )
        };
        let bits = match stub {
            Some(bits) => bits,
            None => {
                let n = A::COUNT;
                if first == 1 {
                    // the raw path takes the capture buffer itself as argument 0
                    ptrs[0].write(errno.cast_const().cast());
                }
                // SAFETY: as above; the raw path writes exactly the return layout's bytes.
                let all: &[*const u8] =
                    unsafe { std::slice::from_raw_parts(ptrs.as_ptr().cast(), n) };
                let mut bits = 0u64;
                let dst: *mut u8 = if R::SCALAR {
                    (&mut bits as *mut u64).cast()
                } else {
                    ret.as_mut_ptr().cast()
                };
                // SAFETY: as above; the count is right by construction.
                unsafe { self.handle.invoke_raw(all, dst) }
                    .expect("argument count checked by typed()");
                if R::SCALAR {
                    // The raw path stored the scalar's bytes at the start of `bits`, in memory
                    // order: its value, as the register holds it.
                    // SAFETY: `bits` has 8 readable bytes; a scalar is at most 8.
                    unsafe { crate::backend::load_low_bytes(dst, std::mem::size_of::<R>().min(8)) }
                } else {
                    bits
                }
            }
        };
        // SAFETY: scalar bits from the stub, or a struct the callee wrote into `ret`.
        unsafe { R::from_stub(bits, ret.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use crate::layout::{same_shape, MemoryLayout, ValueLayout};

    /// `union Un { union Un-1 a; union Un-1 b; }` over `leaf`, built separately each time.
    fn shared_unions(levels: usize, leaf: ValueLayout) -> MemoryLayout {
        let mut u = MemoryLayout::union_layout([leaf.clone(), leaf]).unwrap();
        for _ in 0..levels {
            u = MemoryLayout::union_layout([u.clone().with_name("a"), u.with_name("b")]).unwrap();
        }
        u
    }

    #[test]
    fn shapes_of_shared_layouts_compare_in_linear_time() {
        // 2^40 leaves each if expanded: this returns at once only because pairs are remembered.
        let a = shared_unions(40, ValueLayout::I32);
        let b = shared_unions(40, ValueLayout::I32.with_name("x"));
        assert!(same_shape(&a, &b));
        assert!(!same_shape(&a, &shared_unions(40, ValueLayout::F32)));
        let s = |m: &[MemoryLayout]| MemoryLayout::c_struct(m.iter().cloned()).unwrap();
        let i8 = MemoryLayout::from(ValueLayout::I8);
        let i32 = MemoryLayout::from(ValueLayout::I32);
        assert!(!same_shape(
            &s(&[i8.clone(), i32.clone()]),
            &s(&[i32.clone(), i8.clone()])
        ));
        assert!(same_shape(&s(&[i8.clone(), i32.clone()]), &s(&[i8, i32])));
    }
}
