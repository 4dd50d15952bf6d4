//! The register-image return path of the compiled stubs: a struct or union that the
//! SysV AMD64 ABI returns in registers (§3.2.3: at most two eightbytes, each in the next free
//! register of its class: rax then rdx for INTEGER, xmm0 then xmm1 for SSE) comes back from the
//! stub's **image entry** unchanged, and the Rust caller stores its bytes into the destination
//! segment.
//!
//! The image entry tail-jumps to the target (see `super::stub`, [`has_image_entry`]), so the
//! target returns straight to the Rust caller: a `call` in inline assembly followed by
//! branch-free selects of the struct's two eightbytes from rax, rdx, xmm0 and xmm1 by its shape
//! (INTEGER+INTEGER: rax, rdx; SSE+SSE: xmm0, xmm1; INTEGER+SSE: rax, xmm0; SSE+INTEGER:
//! xmm0, rax). A one-eightbyte struct's second register is whatever the target left there and
//! is never stored.
//!
//! Compared with the value entry writing through `ret`, this saves the stub's frame, one
//! call/return pair and the reload of `ret` after the call.
//!
//! [`has_image_entry`]: crate::backend::x86_64_sysv::stub::has_image_entry

use std::ffi::c_void;

use crate::abi::{Register, ReturnMove, ReturnPlan};
use crate::backend::x86_64_sysv::entry::{CheckedEntry, REJECTED};
use crate::backend::{store_low_bytes, ImageCall};

/// The eightbyte classes of a register-returned struct, as the pair of registers the image
/// entry's caller reads (first eightbyte, second eightbyte). Bit 0: the first eightbyte is
/// SSE; bit 1: the second is SSE (the selects in [`ImageEntry::call`] read these bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
enum Shape {
    /// rax, rdx.
    IntInt = 0,
    /// xmm0, xmm1.
    SseSse = 3,
    /// rax, xmm0.
    IntSse = 2,
    /// xmm0, rax.
    SseInt = 1,
}

/// A handle's image entry: the entry point, the register shape, and the struct's size (1..=16)
/// and alignment in bytes. `Copy`, `Send + Sync` (a code address and two plain values).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ImageEntry {
    entry: CheckedEntry,
    shape: Shape,
    size: usize,
    align: usize,
}

impl ImageEntry {
    /// The image entry for a plan returning `size` bytes through `ret`, or `None` when the
    /// stub has no image entry or the return moves are not one eightbyte at offset 0 (and one
    /// at offset 8) from the first registers of their classes — which SysV classification
    /// always produces; anything else keeps the value entry.
    pub(crate) fn new(
        entry: Option<CheckedEntry>,
        ret: &ReturnPlan,
        size: usize,
        align: usize,
    ) -> Option<Self> {
        let ReturnPlan::Registers(moves) = ret else {
            return None;
        };
        let shape = shape(moves, size)?;
        Some(ImageEntry {
            entry: entry?,
            shape,
            size,
            align,
        })
    }
}

impl ImageCall for ImageEntry {
    /// The struct's size and alignment in bytes (the return layout's).
    #[inline(always)]
    fn size_align(&self) -> (usize, usize) {
        (self.size, self.align)
    }

    /// Calls the image entry with a `&[Value]` (the value entry's `args`) and returns the
    /// register image — the struct's first and second eightbyte — or `None` if the stub
    /// rejected an argument (`super::entry`'s protocol; nothing was called).
    ///
    /// One call site for every shape: the call is made from inline assembly, and the two
    /// eightbytes are picked from rax, rdx, xmm0 and xmm1 by conditional moves on the shape
    /// bits, which ride in r12 (callee-saved, so the target keeps them; the rejection path
    /// overwrites them with all ones).
    ///
    /// # Safety
    /// As the value entry: `args` points to one `Value` per descriptor argument, `target` is
    /// a function of the handle's type whose contract the caller meets.
    #[inline(always)]
    unsafe fn call(&self, args: *const u8, target: *const c_void) -> Option<[u64; 2]> {
        let (first, second, r12): (u64, u64, u64);
        // SAFETY: see `super::entry`: the image entry is a checked entry with the stub
        // parameters (rdi = args, rcx = target; it reads no other) that tail-jumps to the
        // target, so it returns the target's rax, rdx, xmm0 and xmm1 and clobbers only what the
        // C ABI lets a callee clobber (`clobber_abi("C")`); r12 comes back unchanged unless an
        // argument is rejected. It may write whatever the target writes (no `nomem`). Without
        // `nostack` the stack pointer is call-aligned and nothing of ours lives in the red
        // zone, so the `call`'s push is allowed.
        // After the call, branch-free: first = bit 0 ? xmm0 : rax; second = bit 1 ?
        // (bit 0 ? xmm1 : xmm0) : (bit 0 ? rax : rdx).
        unsafe {
            std::arch::asm!(
                "call {entry}",
                "movq rsi, xmm0",
                "movq rdi, xmm1",
                "mov rcx, rax",
                "test r12d, 1",
                "cmovnz rcx, rsi",
                "cmovnz rdx, rax",
                "cmovz rdi, rsi",
                "test r12d, 2",
                "cmovnz rdx, rdi",
                entry = in(reg) self.entry.address(),
                inout("r12") self.shape as u64 => r12,
                inout("rdi") args => _,
                inout("rcx") target => first,
                lateout("rdx") second,
                clobber_abi("C"),
            );
        }
        (r12 != REJECTED).then_some([first, second])
    }

    /// Stores exactly the struct's `size` bytes of `image` at `ret` (unaligned).
    ///
    /// # Safety
    /// `ret` is valid for writes of the struct's size in bytes.
    #[inline(always)]
    unsafe fn store(&self, ret: *mut u8, image: [u64; 2]) {
        // SAFETY: the caller guarantees `size` writable bytes at `ret`; every store below
        // stays inside them.
        unsafe {
            match self.size {
                16 => ret.cast::<[u64; 2]>().write_unaligned(image),
                n if n <= 8 => store_low_bytes(ret, image[0], n),
                n => {
                    ret.cast::<u64>().write_unaligned(image[0]);
                    store_low_bytes(ret.add(8), image[1], n - 8);
                }
            }
        }
    }
}

/// The register pair of a struct's return moves, if they are the SysV pattern: the first
/// eightbyte (bytes `0..min(8, size)`) from rax or xmm0, the second (bytes `8..size`) from the
/// next register of its class.
fn shape(moves: &[ReturnMove], size: usize) -> Option<Shape> {
    let at = |m: &ReturnMove, offset: u32, len: usize| m.offset == offset && m.size as usize == len;
    match moves {
        [a] if (1..=8).contains(&size) && at(a, 0, size) => match a.from {
            Register::Int(0) => Some(Shape::IntInt),
            Register::Vector(0) => Some(Shape::SseSse),
            _ => None,
        },
        [a, b] if (9..=16).contains(&size) && at(a, 0, 8) && at(b, 8, size - 8) => {
            match (a.from, b.from) {
                (Register::Int(0), Register::Int(1)) => Some(Shape::IntInt),
                (Register::Vector(0), Register::Vector(1)) => Some(Shape::SseSse),
                (Register::Int(0), Register::Vector(0)) => Some(Shape::IntSse),
                (Register::Vector(0), Register::Int(0)) => Some(Shape::SseInt),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::sysv as sysv_x64;
    use crate::layout::FunctionDescriptor as FD;
    use crate::layout::{MemoryLayout, ValueLayout as V};

    fn shape_of(fields: &[V]) -> Option<Shape> {
        let l = MemoryLayout::c_struct(fields.iter().cloned()).unwrap();
        let size = l.byte_size();
        let plan = sysv_x64::plan(&FD::of(l, []), None).unwrap();
        match &plan.ret {
            ReturnPlan::Registers(m) => shape(m, size),
            _ => None,
        }
    }

    #[test]
    fn shapes_follow_the_eightbyte_classes() {
        assert_eq!(shape_of(&[V::F64, V::F64]), Some(Shape::SseSse));
        assert_eq!(shape_of(&[V::F32, V::F32, V::F32]), Some(Shape::SseSse));
        assert_eq!(shape_of(&[V::I64, V::I64]), Some(Shape::IntInt));
        assert_eq!(shape_of(&[V::I32, V::I8, V::I64]), Some(Shape::IntInt));
        assert_eq!(shape_of(&[V::I64, V::F64]), Some(Shape::IntSse));
        assert_eq!(shape_of(&[V::F64, V::I32]), Some(Shape::SseInt));
        assert_eq!(shape_of(&[V::I8, V::I8, V::I8]), Some(Shape::IntInt));
        assert_eq!(shape_of(&[V::F32]), Some(Shape::SseSse));
        // MEMORY class: no register image.
        assert_eq!(shape_of(&[V::I64, V::I64, V::I64]), None);
    }

    #[test]
    fn store_writes_exactly_the_struct_bytes() {
        let image = [0x0807_0605_0403_0201u64, 0x100f_0e0d_0c0b_0a09];
        for size in 1..=16usize {
            let e = ImageEntry {
                // SAFETY: `store` never calls the entry.
                entry: unsafe { CheckedEntry::new(std::ptr::NonNull::dangling()) },
                shape: Shape::IntInt,
                size,
                align: 1,
            };
            let mut buf = [0xAAu8; 20];
            // SAFETY: `buf` has 20 ≥ size writable bytes.
            unsafe { e.store(buf.as_mut_ptr(), image) };
            for (k, b) in buf.iter().enumerate() {
                let want = if k < size { k as u8 + 1 } else { 0xAA };
                assert_eq!(*b, want, "size {size}, byte {k}");
            }
        }
    }
}
