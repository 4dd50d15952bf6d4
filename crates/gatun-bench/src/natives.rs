//! The C targets of the suite (`native/bench_natives.c`, compiled with `-O2` into a static
//! library by `build.rs` and linked into this crate).
//!
//! Each function is `noinline` in C, so a direct call through a typed `extern "C" fn` pointer
//! is the floor every FFI path is compared with. [`Native::address`] gives their addresses for
//! runtime-described handles (gatun's downcall handles, libffi's `Cif::call`).

use std::ffi::{c_int, c_long, c_void};

/// `typedef struct { double x, y; } DoublePoint;` (16 bytes, alignment 8): the struct of the
/// JDK's CallOverheadByValue and PointsAlloc benchmarks. Returned in `xmm0:xmm1` on SysV AMD64
/// (two SSE eightbytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DoublePoint {
    /// x, at byte offset 0.
    pub x: f64,
    /// y, at byte offset 8.
    pub y: f64,
}

// SAFETY: `#[repr(C)] struct { f64 x; f64 y; }` is exactly the C struct `{double x, y;}`
// described by this layout (16 bytes, alignment 8, fields at 0 and 8).
unsafe impl gatun::linker::CType for DoublePoint {
    fn layout() -> gatun::MemoryLayout {
        crate::handles::double_point_layout()
    }
}

/// `typedef struct { long a, b, c; } Long3;` (24 bytes, alignment 8): too large for registers,
/// so a MEMORY-class return on SysV AMD64 (the caller passes a hidden pointer in `rdi`, the
/// callee writes the struct there and returns the pointer in `rax`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Long3 {
    /// a, at byte offset 0.
    pub a: c_long,
    /// b, at byte offset 8.
    pub b: c_long,
    /// c, at byte offset 16.
    pub c: c_long,
}

// SAFETY: `#[repr(C)] struct { c_long a, b, c; }` is exactly the C struct `{long a, b, c;}`
// described by this layout (24 bytes, alignment 8, fields at 0, 8 and 16).
unsafe impl gatun::linker::CType for Long3 {
    fn layout() -> gatun::MemoryLayout {
        crate::handles::long3_layout()
    }
}

/// The Rust type of `add6` (`long (*)(long × 6)`).
pub type Add6Fn = unsafe extern "C" fn(c_long, c_long, c_long, c_long, c_long, c_long) -> c_long;

extern "C" {
    /// `void noop(void)`.
    pub fn noop();
    /// `int id_i32(int x)`: returns `x`.
    pub fn id_i32(x: c_int) -> c_int;
    /// `long add6(long, long, long, long, long, long)`: the sum (six INTEGER registers; `long`
    /// is 64-bit on LP64).
    pub fn add6(a: c_long, b: c_long, c: c_long, d: c_long, e: c_long, f: c_long) -> c_long;
    /// `long image_add6(const long img[6], add6_fn f)`: `f(img[0], .., img[5])` as a tail
    /// call (six loads and an indirect jump): the floor of a dynamic call whose arguments are
    /// materialised in memory (row `call_overhead/image_add6`).
    pub fn image_add6(img: *const c_long, f: Add6Fn) -> c_long;
    /// `double fma3(double a, double b, double c)`: `a * b + c` (three SSE registers).
    pub fn fma3(a: f64, b: f64, c: f64) -> f64;
    /// `DoublePoint unit(void)`: returns `{1, 0}` by value (in `xmm0:xmm1`).
    pub fn unit() -> DoublePoint;
    /// `Long3 long3(void)`: returns `{1, 2, 3}` by value (through the hidden pointer).
    pub fn long3() -> Long3;
    /// `void unit_ptr(DoublePoint *out)`: `*out = unit()`.
    pub fn unit_ptr(out: *mut DoublePoint);
    /// `DoublePoint unit_rotated(double phi)`: `{cos phi, sin phi}` by value.
    pub fn unit_rotated(phi: f64) -> DoublePoint;
    /// `void unit_rotated_ptr(DoublePoint *out, double phi)`: `*out = unit_rotated(phi)`.
    pub fn unit_rotated_ptr(out: *mut DoublePoint, phi: f64);
    /// `int sys_like(int fail)`: sets `errno` to 13 (`EACCES`) and returns -1 when `fail != 0`;
    /// else returns 0 and leaves `errno` alone.
    pub fn sys_like(fail: c_int) -> c_int;
}

/// The `errno` [`sys_like`] sets on failure (`EACCES`).
pub const SYS_LIKE_ERRNO: i32 = 13;

/// The natives, by name, for handles that take a code pointer ([`Native::address`]). Only
/// these addresses can be linked by [`crate::handles::link`], which keeps linking safe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Native {
    /// `void noop(void)`.
    Noop,
    /// `int id_i32(int)`.
    IdI32,
    /// `long add6(long × 6)`.
    Add6,
    /// `double fma3(double × 3)`.
    Fma3,
    /// `DoublePoint unit(void)`.
    Unit,
    /// `void unit_ptr(DoublePoint *)`.
    UnitPtr,
    /// `Long3 long3(void)`.
    Long3,
    /// `DoublePoint unit_rotated(double)`.
    UnitRotated,
    /// `void unit_rotated_ptr(DoublePoint *, double)`.
    UnitRotatedPtr,
    /// `int sys_like(int)`.
    SysLike,
}

impl Native {
    /// The function's address (code of this binary, mapped for the life of the process).
    pub fn address(self) -> *const c_void {
        match self {
            Native::Noop => noop as *const c_void,
            Native::IdI32 => id_i32 as *const c_void,
            Native::Add6 => add6 as *const c_void,
            Native::Fma3 => fma3 as *const c_void,
            Native::Unit => unit as *const c_void,
            Native::UnitPtr => unit_ptr as *const c_void,
            Native::Long3 => long3 as *const c_void,
            Native::UnitRotated => unit_rotated as *const c_void,
            Native::UnitRotatedPtr => unit_rotated_ptr as *const c_void,
            Native::SysLike => sys_like as *const c_void,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore)]
    fn natives_compute_what_they_document() {
        // SAFETY: the declarations above match native/bench_natives.c.
        unsafe {
            noop();
            assert_eq!(id_i32(-7), -7);
            assert_eq!(add6(1, 2, 3, 4, 5, 6), 21);
            assert_eq!(image_add6([1, 2, 3, 4, 5, 7].as_ptr(), add6), 22);
            assert_eq!(fma3(2.0, 3.0, 1.0), 7.0);
            assert_eq!(unit(), DoublePoint { x: 1.0, y: 0.0 });
            assert_eq!(long3(), Long3 { a: 1, b: 2, c: 3 });
            let mut p = DoublePoint::default();
            unit_ptr(&mut p);
            assert_eq!(p, DoublePoint { x: 1.0, y: 0.0 });
            let q = unit_rotated(std::f64::consts::FRAC_PI_2);
            assert!(q.x.abs() < 1e-12 && (q.y - 1.0).abs() < 1e-12);
            unit_rotated_ptr(&mut p, 0.0);
            assert_eq!(p, DoublePoint { x: 1.0, y: 0.0 });
            assert_eq!(sys_like(0), 0);
            assert_eq!(sys_like(1), -1);
            // The `errno` crate reads the C library's errno on Unix; on Windows it reads
            // `GetLastError`, not the C runtime's errno that `sys_like` sets.
            #[cfg(unix)]
            {
                errno::set_errno(errno::Errno(0));
                assert_eq!(sys_like(0), 0);
                assert_eq!(errno::errno().0, 0);
                assert_eq!(sys_like(1), -1);
                assert_eq!(errno::errno().0, SYS_LIKE_ERRNO);
            }
        }
    }
}
