//! Differential test of the compiled downcall stubs against the trampoline executor:
//! 10,000+ random signatures (every scalar kind, structs of up to 4 fields, nested structs,
//! arrays inside structs, unions, packed structs, HFAs of 1 to 4 `float`s or `double`s,
//! structs over 16 bytes, 16-byte-aligned structs, up to 16 arguments so the stack is used,
//! variadic calls, scalar / register-struct / in-memory-struct returns) are called through both
//! executors against a *recording* target written in assembly (one per ABI, in
//! `tests/stub_differential/`: x86-64 SysV, Microsoft x64, AArch64, RISC-V 64, s390x and
//! PPC64LE, whose recorder keeps r3..r10, f1..f13 and the parameter save area). The
//! recorder saves the integer argument registers (rdi..r9 and rax for `%al`; x0..x8; a0..a7;
//! r2..r6), the vector argument registers (the low 64 bits of xmm0..7 and v0..7; all of
//! fa0..fa7; all of f0, f2, f4, f6), the outgoing stack area and the errno it sees; on AArch64,
//! RISC-V and s390x it also copies the bytes behind each by-reference argument's address while
//! the caller's copy is alive. It then writes a chosen pattern through the hidden return
//! pointer (if any; x8 on AArch64, a0 on RISC-V, r2 on s390x) or returns chosen values in the
//! two integer and the first vector return registers. The test asserts
//! that every register and stack slot the plan names holds the same value under both executors
//! (AArch64: the bytes of the value's size, the rest being unspecified there; RISC-V: the same
//! for plain byte moves into a GPR or stack slot, but all 64 bits of a sign-extended, `bool` or
//! promoted value, and a `float` in an FPR as its full NaN-boxed image, whose box is checked
//! too; s390x: all 64 bits of a GPR or stack slot, and the high word of an FPR holding a
//! `float`, the low word being unspecified there), that `%al` is the same for variadic SysV
//! calls, that by-reference copies hold the
//! argument's bytes, and that both return the same bytes — on the `Value` path and on the raw
//! path. A quarter of the handles
//! capture errno: the recorder also records the errno it sees (restore before) and sets a new
//! one (save after). (The executors are checked against real C functions in downcall_prop.rs and
//! sysv_downcall.rs.)
//!
//! On Windows (Microsoft x64, under Wine) the recorder saves rcx, rdx, r8, r9, xmm0..3 and the
//! caller's stack from the first home slot on, copies by-reference arguments' bytes like the
//! AArch64 one, records the last error (`GetLastError`) and the C runtime's errno it sees and
//! sets new ones, and writes an in-memory return through the hidden pointer of rcx (returning
//! it in rax); capturing handles capture all three Windows states.
// Linux (x86-64 SysV, AAPCS64, RISC-V LP64D) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use std::ffi::c_void;
use std::sync::Mutex;

#[cfg(any(
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "s390x",
    windows
))]
use gatun::abi::Conversion;
use gatun::abi::{Location, Register, ReturnPlan};
use gatun::layout::{MemoryLayout, ScalarKind, ValueLayout as V};
use gatun::linker::{
    capture_state_layout, DowncallHandle, FunctionDescriptor as FD, Linker, LinkerOption, Symbol,
};
use gatun::memory::PrefixAllocator;
use gatun::memory::{MemorySegment, SegmentAllocator, SlicingAllocator};
use gatun::Value;

use common::value_from_bits;

/// The recorder of each ABI (`stubdiff_record`) and where it keeps what it saw: `INT_BASE + n`
/// the integer argument register n, `VEC_BASE + n` the low 64 bits of vector register n
/// (RISC-V: all 64 bits of fa_n), `STACK_BASE + k` the caller's stack slot k (8 bytes at the
/// entry stack pointer + 8k, past the return address on x86-64).
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[path = "stub_differential/sysv.rs"]
mod recorder;
#[cfg(all(target_arch = "x86_64", windows))]
#[path = "stub_differential/win64.rs"]
mod recorder;
#[cfg(target_arch = "aarch64")]
#[path = "stub_differential/aarch64.rs"]
mod recorder;
#[cfg(target_arch = "riscv64")]
#[path = "stub_differential/riscv64.rs"]
mod recorder;
#[cfg(target_arch = "s390x")]
#[path = "stub_differential/s390x.rs"]
mod recorder;
#[cfg(target_arch = "powerpc64")]
#[path = "stub_differential/ppc64le.rs"]
mod recorder;
use recorder::{INT_BASE, STACK_BASE, VEC_BASE};
const REC_SLOTS: usize = STACK_BASE + 200;
#[no_mangle]
static mut STUBDIFF_REC: [u64; REC_SLOTS] = [0; REC_SLOTS];
/// What the recorder returns: integer registers 0 and 1 (rax, rdx / x0, x1 / a0, a1), vector
/// registers 0..4 (xmm0, xmm1 / v0..v3 / fa0, fa1), then the in-memory return size (bytes written through the
/// hidden pointer instead) and up to 256 pattern bytes.
#[no_mangle]
static mut STUBDIFF_RET: [u64; 7 + 32] = [0; 7 + 32];
/// [0]: the errno the recorder saw; [1]: the errno it leaves behind.
#[no_mangle]
static mut STUBDIFF_ERRNO: [i32; 2] = [0; 2];
/// Windows: [0] the last error (`GetLastError`) the recorder saw; [1] the one it leaves behind.
#[cfg(windows)]
#[no_mangle]
static mut STUBDIFF_LAST_ERROR: [u32; 2] = [0; 2];

extern "C" {
    fn stubdiff_record();
}

/// The by-reference arguments of the call being made: where the plan puts the copy's address,
/// and the argument's size in bytes. Set before each call (under LOCK).
static BYREF_PLAN: Mutex<Vec<(Location, usize)>> = Mutex::new(Vec::new());
/// The bytes `stubdiff_deref` found behind each by-reference address, in BYREF_PLAN's order.
static BYREF_SEEN: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// Called by the recorder (on the calling thread, inside the call): copies the bytes behind
/// every by-reference argument's address, since the caller's copy is freed after the call.
#[cfg(any(
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "s390x",
    windows
))]
extern "C" fn stubdiff_deref() {
    let rec = record();
    let plan = BYREF_PLAN.lock().unwrap_or_else(|e| e.into_inner());
    let mut seen = BYREF_SEEN.lock().unwrap_or_else(|e| e.into_inner());
    seen.clear();
    for &(loc, size) in plan.iter() {
        let addr = rec[slot(loc)] as *const u8;
        // SAFETY: the executor passes the address of a live copy of `size` bytes (the argument
        // layout's size) for the duration of the call, which has not returned yet.
        seen.push(unsafe { std::slice::from_raw_parts(addr, size) }.to_vec());
    }
}

/// The record index of a location.
fn slot(loc: Location) -> usize {
    match loc {
        Location::Int(n) => INT_BASE + n as usize,
        Location::Vector(n) => VEC_BASE + n as usize,
        Location::Stack(off) => STACK_BASE + off as usize / 8,
    }
}

/// The recorder's statics are process-global: one test at a time touches them.
static LOCK: Mutex<()> = Mutex::new(());

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn scalar(&mut self) -> ScalarKind {
        ScalarKind::ALL[self.below(ScalarKind::ALL.len() as u64) as usize]
    }
    /// An HFA (on AArch64; a float/double struct elsewhere): 1 to 4 `float`s or `double`s,
    /// flat, as an array, nested, or as an array of one-member structs.
    fn hfa(&mut self) -> MemoryLayout {
        let k = V::new(if self.below(2) == 0 {
            ScalarKind::F32
        } else {
            ScalarKind::F64
        });
        let n = 1 + self.below(4) as usize;
        match self.below(4) {
            0 => MemoryLayout::c_struct(vec![k; n]).unwrap(),
            1 => MemoryLayout::c_struct([MemoryLayout::sequence_layout(n, k).unwrap()]).unwrap(),
            2 => {
                let inner = MemoryLayout::c_struct(vec![k.clone(); n.div_ceil(2)]).unwrap();
                let mut f = vec![inner];
                f.extend(std::iter::repeat_n(MemoryLayout::from(k), n / 2));
                MemoryLayout::c_struct(f).unwrap()
            }
            _ => {
                let one = MemoryLayout::c_struct([k]).unwrap();
                MemoryLayout::c_struct([MemoryLayout::sequence_layout(n, one).unwrap()]).unwrap()
            }
        }
    }
    /// A struct of 17 to 256 bytes (by reference on AArch64, in memory on SysV).
    fn big(&mut self) -> MemoryLayout {
        loop {
            let n = 2 + self.below(5) as usize;
            let f: Vec<MemoryLayout> = (0..n)
                .map(|_| {
                    let k = V::new(self.scalar());
                    if self.below(2) == 0 {
                        k.into()
                    } else {
                        MemoryLayout::sequence_layout(1 + self.below(6) as usize, k).unwrap()
                    }
                })
                .collect();
            let s = MemoryLayout::c_struct(f).unwrap();
            if (17..=256).contains(&s.byte_size()) {
                return s;
            }
        }
    }
    /// A struct of natural alignment 16 (through a 16-byte-aligned member).
    fn aligned16(&mut self) -> MemoryLayout {
        let n = 1 + self.below(3) as usize;
        let inner =
            MemoryLayout::c_struct((0..n).map(|_| V::new(self.scalar())).collect::<Vec<_>>())
                .unwrap()
                .with_byte_alignment(16)
                .unwrap();
        let mut f = vec![inner];
        if self.below(2) == 0 {
            f.insert(0, V::new(self.scalar()).into());
        }
        MemoryLayout::c_struct(f).unwrap()
    }
    fn ty(&mut self, depth: u32) -> MemoryLayout {
        if depth <= 1 {
            match self.below(100) {
                0..=11 => return self.hfa(),
                12..=19 => return self.big(),
                20..=24 => return self.aligned16(),
                _ => {}
            }
        }
        let p = self.below(100);
        if depth >= 2 || p < 50 {
            return V::new(self.scalar()).into();
        }
        let n = 1 + self.below(4) as usize;
        let fields: Vec<MemoryLayout> = (0..n).map(|_| self.ty(depth + 1)).collect();
        match p {
            50..=77 => MemoryLayout::c_struct(fields).unwrap(),
            78..=86 => MemoryLayout::union_layout(fields).unwrap(),
            87..=94 => {
                let count = 1 + self.below(4) as usize;
                let seq = MemoryLayout::sequence_layout(count, V::new(self.scalar())).unwrap();
                let mut f = vec![seq];
                if self.below(2) == 0 {
                    f.push(V::new(self.scalar()).into());
                }
                MemoryLayout::c_struct(f).unwrap()
            }
            _ => MemoryLayout::c_struct_packed(fields, 1 << self.below(3)).unwrap(),
        }
    }
}

struct Sig {
    descriptor: FD,
    first_variadic: Option<usize>,
}

fn signature(r: &mut Rng) -> Sig {
    let nargs = r.below(17) as usize;
    let args: Vec<MemoryLayout> = (0..nargs).map(|_| r.ty(0)).collect();
    let descriptor = match r.below(4) {
        0 => FD::of_void(args),
        1 => FD::of(V::new(r.scalar()), args),
        _ => FD::of(r.ty(1), args),
    };
    let first_variadic = if nargs > 0 && r.below(4) == 0 {
        Some(r.below(nargs as u64 + 1) as usize)
    } else {
        None
    };
    Sig {
        descriptor,
        first_variadic,
    }
}

fn record() -> [u64; REC_SLOTS] {
    // SAFETY: only read under LOCK, after the recorder ran on this thread.
    unsafe { std::ptr::addr_of!(STUBDIFF_REC).read() }
}

/// What one call observed: the recorded locations, the bytes behind by-reference arguments'
/// addresses, and the returned bytes.
#[derive(Debug, PartialEq)]
struct Observed {
    locations: Vec<(String, u64)>,
    by_reference: Vec<Vec<u8>>,
    ret: Vec<u8>,
}

fn observe(h: &DowncallHandle, rec: &[u64; REC_SLOTS], ret: Vec<u8>) -> Observed {
    let plan = h.plan();
    let mut locations = Vec::new();
    for (i, a) in plan.args().iter().enumerate() {
        for m in &a.moves {
            let v = rec[slot(m.to)];
            // AAPCS64 and Microsoft x64 leave the bits of a register or slot above the value's
            // size unspecified (SysV: the stub and the trampoline write whole registers and
            // slots alike).
            #[cfg(any(target_arch = "aarch64", windows))]
            let v = if m.size < 8 && !matches!(m.conv, Conversion::FloatToDouble) {
                v & ((1u64 << (8 * m.size)) - 1)
            } else {
                v
            };
            // LP64D: the bits above a plain byte move into a GPR or stack slot are unspecified;
            // a sign-extended (`unsigned int` too), `bool` or promoted value defines all 64, and
            // a `float` in an FPR is NaN-boxed (the upper 32 bits all ones).
            #[cfg(target_arch = "riscv64")]
            let v = match (m.to, m.conv) {
                (Location::Vector(_), _) => {
                    if m.size == 4 {
                        assert_eq!(
                            v >> 32,
                            0xffff_ffff,
                            "{h:?}: arg {i} -> {}: no NaN box",
                            m.to
                        );
                    }
                    v
                }
                (_, Conversion::Bytes) if m.size < 8 => v & ((1u64 << (8 * m.size)) - 1),
                _ => v,
            };
            // s390x: a GPR or stack slot holds the whole 64-bit value (narrow values extended,
            // struct images right-justified and zero-extended); an FPR holding a short-format
            // value (a `float`, a 4-byte one-float struct) defines only its high word.
            #[cfg(target_arch = "s390x")]
            let v = match (m.to, m.conv) {
                (Location::Vector(_), c) if m.size == 4 && c != Conversion::FloatToDouble => {
                    v & 0xffff_ffff_0000_0000
                }
                _ => v,
            };
            locations.push((format!("arg {i} -> {}", m.to), v));
        }
    }
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    if plan.is_variadic() {
        locations.push(("al".into(), rec[6] & 0xff));
    }
    let by_reference = std::mem::take(&mut *BYREF_SEEN.lock().unwrap_or_else(|e| e.into_inner()));
    Observed {
        locations,
        by_reference,
        ret,
    }
}

/// Calls `h` once on the `Value` path (`raw == false`) or the raw path with the argument bytes
/// `bytes[i]`, returning what the recorder saw and the returned bytes.
fn call(
    h: &DowncallHandle,
    args: &[MemoryLayout],
    bytes: &[Vec<u8>],
    raw: bool,
    errno: i32,
) -> Observed {
    // The capture struct: errno alone on Linux; on Windows the last error at 0 (the test
    // restores `!errno` there), the Winsock error at 4 and errno at 8.
    let errno_at = capture_state_layout().byte_offset_of("errno").unwrap() / 4;
    let mut capture = [0i32; 3];
    capture[errno_at] = errno;
    if cfg!(windows) {
        capture[0] = !errno;
    }
    let ret_layout = h.descriptor().return_layout().cloned();
    let ret_size = ret_layout.as_ref().map_or(0, |l| l.byte_size());
    let mut mem = vec![0u64; 1024];
    // SAFETY: plain integers; any byte pattern is valid.
    let buf = unsafe { std::slice::from_raw_parts_mut(mem.as_mut_ptr().cast::<u8>(), 8192) };
    let alloc = SlicingAllocator::new(MemorySegment::of_slice(buf));
    let segs: Vec<MemorySegment> = args
        .iter()
        .zip(bytes)
        .map(|(l, b)| {
            let s = alloc
                .allocate(l.byte_size().max(1), l.byte_alignment())
                .unwrap();
            s.copy_from_slice(0, &b[..l.byte_size()]).unwrap();
            s
        })
        .collect();
    let dest = alloc.allocate(ret_size.max(8), 16).unwrap();
    dest.fill(0);
    let byref: Vec<(usize, Location)> = h
        .plan()
        .args()
        .iter()
        .enumerate()
        .filter_map(|(i, a)| a.by_reference.map(|loc| (i, loc)))
        .collect();
    *BYREF_PLAN.lock().unwrap_or_else(|e| e.into_inner()) = byref
        .iter()
        .map(|&(i, loc)| (loc, args[i].byte_size()))
        .collect();
    BYREF_SEEN.lock().unwrap_or_else(|e| e.into_inner()).clear();
    if raw {
        let mut ptrs: Vec<*const u8> = segs.iter().map(|s| s.as_ptr() as *const u8).collect();
        if h.captures_call_state() {
            ptrs.insert(0, capture.as_mut_ptr().cast());
        }
        // SAFETY: every argument has its layout's bytes; dest has the return size; the
        // recorder reads registers and its caller's stack only.
        unsafe { h.invoke_raw(&ptrs, dest.as_ptr()) }.unwrap();
    } else {
        let mut vals: Vec<Value> = args
            .iter()
            .zip(&segs)
            .map(|(l, s)| match l {
                MemoryLayout::Value(v) => {
                    let mut raw = [0u8; 8];
                    s.copy_to_slice(0, &mut raw[..v.byte_size()]).unwrap();
                    value_from_bits(v.kind(), u64::from_le_bytes(raw))
                }
                _ => Value::Segment(*s),
            })
            .collect();
        if h.captures_call_state() {
            // SAFETY: the 12-byte array outlives the call; nothing else accesses it meanwhile.
            let seg = unsafe {
                MemorySegment::from_raw_parts(
                    capture.as_mut_ptr().cast(),
                    capture_state_layout().byte_size(),
                )
            };
            vals.insert(0, Value::Segment(seg));
        }
        let into = PrefixAllocator::new(dest);
        // SAFETY: as above.
        let got = unsafe { h.invoke_into(&into, &vals) }.unwrap();
        if let Some(MemoryLayout::Value(v)) = &ret_layout {
            assert!(got.scalar_kind() == Some(v.kind()), "{got:?}");
            dest.set_value(v, 0, &got).unwrap();
        }
    }
    let rec = record();
    // No stale plan for a later call of the recorder outside `call`.
    BYREF_PLAN.lock().unwrap_or_else(|e| e.into_inner()).clear();
    let mut o = observe(h, &rec, dest.to_vec()[..ret_size].to_vec());
    // The callee saw a copy of each by-reference argument's bytes.
    assert_eq!(o.by_reference.len(), byref.len(), "{h:?}");
    for (seen, &(i, _)) in o.by_reference.iter().zip(&byref) {
        assert_eq!(
            seen[..],
            bytes[i][..args[i].byte_size()],
            "{h:?}: argument {i}"
        );
    }
    if h.captures_call_state() {
        // SAFETY: read under LOCK after the recorder ran on this thread.
        let seen = unsafe { std::ptr::addr_of!(STUBDIFF_ERRNO).read() };
        o.locations
            .push(("errno seen by the callee".into(), seen[0] as u64));
        o.locations
            .push(("errno captured".into(), capture[errno_at] as u64));
        assert_eq!(seen[0], errno, "restore before");
        assert_eq!(capture[errno_at], seen[1], "save after");
        #[cfg(windows)]
        {
            // SAFETY: as above.
            let last = unsafe { std::ptr::addr_of!(STUBDIFF_LAST_ERROR).read() };
            o.locations
                .push(("last error seen by the callee".into(), last[0] as u64));
            o.locations
                .push(("last error captured".into(), capture[0] as u64));
            assert_eq!(last[0], !errno as u32, "restore before (the last error)");
            // the Winsock error is the same per-thread slot
            assert_eq!(
                (capture[0] as u32, capture[1] as u32),
                (last[1], last[1]),
                "save after (the last error)"
            );
        }
    }
    o
}

fn random_bytes(r: &mut Rng, n: usize) -> Vec<u8> {
    (0..n.max(8)).map(|_| r.next() as u8).collect()
}

fn set_return_pattern(r: &mut Rng, h: &DowncallHandle, errno_after: i32) {
    let in_memory = matches!(h.plan().ret(), ReturnPlan::InMemory);
    let size = h.descriptor().return_layout().map_or(0, |l| l.byte_size());
    // SAFETY: written under LOCK, read by the recorder on this thread.
    unsafe {
        let p = std::ptr::addr_of_mut!(STUBDIFF_RET).cast::<u64>();
        for k in 0..39 {
            p.add(k).write(r.next());
        }
        p.add(6)
            .write(if in_memory { size.min(256) as u64 } else { 0 });
        // LP64D: a `float` returned in an FPR is NaN-boxed, as a conforming callee leaves it.
        #[cfg(target_arch = "riscv64")]
        {
            let boxed: Vec<u8> = match h.plan().ret() {
                ReturnPlan::Scalar(Register::Vector(n)) if size == 4 => vec![*n],
                ReturnPlan::Registers(m) => m
                    .iter()
                    .filter_map(|m| match m.from {
                        Register::Vector(n) if m.size == 4 => Some(n),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            for n in boxed {
                let q = p.add(2 + n as usize);
                q.write(q.read() | 0xffff_ffff_0000_0000);
            }
        }
        // ELFv2: a `float` returned in an FPR is in double format, as a conforming callee
        // leaves it (f1..f4 in words 2..6, f5..f8 in words 7..11).
        #[cfg(target_arch = "powerpc64")]
        {
            let singles: Vec<u8> = match h.plan().ret() {
                ReturnPlan::Scalar(Register::Vector(n)) if size == 4 => vec![*n],
                ReturnPlan::Registers(m) => m
                    .iter()
                    .filter_map(|m| match m.from {
                        Register::Vector(n) if m.size == 4 => Some(n),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            for n in singles {
                let q = p.add(if n < 4 {
                    2 + n as usize
                } else {
                    3 + n as usize
                });
                q.write(f64::from(f32::from_bits(q.read() as u32)).to_bits());
            }
        }
        std::ptr::addr_of_mut!(STUBDIFF_ERRNO)
            .cast::<i32>()
            .add(1)
            .write(errno_after);
        #[cfg(windows)]
        std::ptr::addr_of_mut!(STUBDIFF_LAST_ERROR)
            .cast::<u32>()
            .add(1)
            .write(errno_after.rotate_left(7) as u32);
    }
}

fn recorder() -> Symbol {
    // SAFETY: `stubdiff_record` is the recorder above; it accepts any register state.
    unsafe { Symbol::from_address(stubdiff_record as *const c_void) }
}

fn run_signatures(seed: u64, count: usize) -> usize {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut r = Rng(seed);
    let sym = recorder();
    let mut checked = 0;
    let mut stack_used = 0;
    let mut memory_returns = 0;
    let mut variadic = 0;
    let mut captures = 0;
    let mut vector_returns = 0;
    let mut by_reference = 0;
    while checked < count {
        let sig = signature(&mut r);
        if sig
            .descriptor
            .return_layout()
            .is_some_and(|l| l.byte_size() > 256)
        {
            continue;
        }
        let mut opts: Vec<LinkerOption> = sig
            .first_variadic
            .map(LinkerOption::FirstVariadicArg)
            .into_iter()
            .collect();
        if r.below(4) == 0 {
            opts.push(LinkerOption::CaptureCallState(if cfg!(windows) {
                &["GetLastError", "WSAGetLastError", "errno"]
            } else {
                &["errno"]
            }));
        }
        let h = match Linker::native().downcall(&sym, &sig.descriptor, &opts) {
            Ok(h) => h,
            // e.g. a union whose size is not a multiple of its alignment: skip the signature
            Err(_) => continue,
        };
        // Every handle has a stub (SysV, AArch64, RISC-V and Microsoft x64 alike).
        assert!(h.uses_compiled_stub(), "{h:?}");
        let t = h.interpreted();
        assert!(!t.uses_compiled_stub());
        let args = sig.descriptor.argument_layouts().to_vec();
        let bytes: Vec<Vec<u8>> = args
            .iter()
            .map(|l| random_bytes(&mut r, l.byte_size()))
            .collect();
        let raw = r.below(3) == 0;
        let pattern_seed = r.next();
        let (preset, after) = (r.next() as i32, r.next() as i32);
        set_return_pattern(&mut Rng(pattern_seed), &h, after);
        let a = call(&h, &args, &bytes, raw, preset);
        set_return_pattern(&mut Rng(pattern_seed), &h, after);
        let b = call(&t, &args, &bytes, raw, preset);
        assert_eq!(
            a, b,
            "stub vs trampoline differ for {h:?} (raw path: {raw})"
        );
        stack_used += (h.plan().stack_bytes() > 0) as usize;
        memory_returns += matches!(h.plan().ret(), ReturnPlan::InMemory) as usize;
        variadic += h.plan().is_variadic() as usize;
        captures += h.captures_call_state() as usize;
        vector_returns += matches!(h.plan().ret(), ReturnPlan::Registers(m)
            if m.iter().any(|m| matches!(m.from, Register::Vector(_))))
            as usize;
        by_reference += h.plan().args().iter().any(|a| a.by_reference.is_some()) as usize;
        checked += 1;
    }
    // Microsoft x64 returns no struct in a vector register (only float scalars, in xmm0), nor
    // does s390x (every struct in memory). LP64D returns only structs of one or two
    // `float`/`double` leaves (or one and an integer) in FPRs, so fewer of the random ones than
    // SysV and AAPCS64 (whose HFAs take up to four).
    if cfg!(any(windows, target_arch = "s390x")) {
        assert_eq!(vector_returns, 0);
    } else {
        let share = if cfg!(target_arch = "riscv64") {
            40
        } else {
            20
        };
        assert!(
            vector_returns > count / share,
            "structs returned in vector registers: {vector_returns}"
        );
    }
    #[cfg(any(
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "s390x",
        windows
    ))]
    assert!(
        by_reference > count / 10,
        "by-reference arguments: {by_reference}"
    );
    #[cfg(any(
        all(target_arch = "x86_64", target_os = "linux"),
        target_arch = "powerpc64"
    ))]
    assert_eq!(by_reference, 0);
    assert!(stack_used > count / 10, "stack arguments: {stack_used}");
    assert!(
        memory_returns > count / 20,
        "memory returns: {memory_returns}"
    );
    assert!(variadic > count / 10, "variadic: {variadic}");
    assert!(captures > count / 10, "captures: {captures}");
    checked
}

#[test]
fn ten_thousand_random_signatures_stub_equals_trampoline() {
    assert_eq!(run_signatures(0x5eed_0001, 10_000), 10_000);
}

#[test]
fn fallback_paths_agree() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // A pointer parameter given a Segment: the stub's tag check fails, the trampoline path
    // takes the segment's address; the recorder sees the same rdi either way.
    let h = Linker::native()
        .downcall(&recorder(), &FD::of_void([V::ADDRESS, V::I32]), &[])
        .unwrap();
    let mut b = [0u8; 16];
    let seg = MemorySegment::of_slice(&mut b);
    // SAFETY: the recorder ignores its arguments.
    unsafe { h.invoke(&[Value::Segment(seg), Value::I32(-5)]) }.unwrap();
    let rec = record();
    assert_eq!(rec[0], seg.address() as u64);
    assert_eq!(rec[1] as i64, -5);
    // Wrong kinds are still errors (reported by the checked path), and nothing is called.
    // SAFETY: as above.
    let e = unsafe { h.invoke(&[Value::I32(1), Value::I32(2)]) }.unwrap_err();
    let e = e.to_string();
    assert!(
        e.starts_with("value mismatch at argument 1 of the function at 0x")
            && e.ends_with(": expected ptr, found i32"),
        "{e}"
    );
    // An integer of another kind converted (the stub's retry with a converted buffer, and the
    // trampoline's own conversion): the callee sees the same register either way.
    for h in [&h, &h.interpreted()] {
        // SAFETY: as above.
        unsafe { h.invoke(&[Value::Segment(seg), Value::I64(-7)]) }.unwrap();
        let rec = record();
        assert_eq!(rec[0], seg.address() as u64);
        assert_eq!(rec[1] as u32 as i32, -7);
    }
    // A struct segment that is too short.
    let st = MemoryLayout::c_struct([V::I64, V::I64]).unwrap();
    let h = Linker::native()
        .downcall(&recorder(), &FD::of_void([st]), &[])
        .unwrap();
    let mut small = [0u8; 8];
    // SAFETY: as above.
    let e = unsafe { h.invoke(&[Value::Segment(MemorySegment::of_slice(&mut small))]) };
    assert!(e.is_err());
}

/// Integer argument registers of the ABI (the rest of the ten go on the stack).
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
const INT_ARGS: usize = 6;
#[cfg(any(target_arch = "aarch64", target_arch = "riscv64"))]
const INT_ARGS: usize = 8;
#[cfg(target_arch = "s390x")]
const INT_ARGS: usize = 5;
/// Vector (floating-point) argument registers of the ABI (PPC64LE's case is written out).
#[cfg(all(not(windows), not(target_arch = "powerpc64")))]
const VEC_ARGS: usize = if cfg!(target_arch = "s390x") { 4 } else { 8 };

#[cfg(all(not(windows), not(target_arch = "s390x")))]
#[repr(C)]
#[derive(Debug, PartialEq, Clone, Copy)]
struct Pair(u64, u64);
#[repr(C)]
#[derive(Debug, PartialEq, Clone, Copy)]
struct Triple(u64, u64, u64);

/// Ten integers and ten doubles, returning a two-`u64` struct in registers (SysV, AAPCS64,
/// LP64D) or a `u64` (s390x, which would return the struct in memory).
#[cfg(not(windows))]
type TenAndTen = unsafe extern "C" fn(
    u64,
    u64,
    u64,
    u64,
    u64,
    u64,
    u64,
    u64,
    u64,
    u64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
) -> TenAndTenRet;
#[cfg(all(not(windows), not(target_arch = "s390x")))]
type TenAndTenRet = Pair;
#[cfg(target_arch = "s390x")]
type TenAndTenRet = u64;

/// The recorder itself, called directly from Rust (no gatun executor involved): it records
/// the registers and stack slots the compiler uses, returns the chosen values, and writes an
/// in-memory return through the hidden pointer.
#[test]
fn recorder_sees_a_direct_call() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    BYREF_PLAN.lock().unwrap_or_else(|e| e.into_inner()).clear();
    // SAFETY: written under LOCK, read by the recorder on this thread.
    unsafe {
        let p = std::ptr::addr_of_mut!(STUBDIFF_RET).cast::<u64>();
        p.write(11);
        p.add(1).write(22);
        p.add(6).write(0);
    }
    #[cfg(not(any(windows, target_arch = "powerpc64")))]
    {
        // SAFETY: the recorder follows the C convention for any argument list and returns its
        // chosen integer registers, which is how a two-`u64` struct comes back.
        let f: TenAndTen =
            unsafe { std::mem::transmute(stubdiff_record as unsafe extern "C" fn()) };
        let d = |k: u64| k as f64 + 0.5;
        // SAFETY: as above.
        let r = unsafe {
            f(
                1,
                2,
                3,
                4,
                5,
                6,
                7,
                8,
                9,
                10,
                d(1),
                d(2),
                d(3),
                d(4),
                d(5),
                d(6),
                d(7),
                d(8),
                d(9),
                d(10),
            )
        };
        #[cfg(not(target_arch = "s390x"))]
        assert_eq!(r, Pair(11, 22));
        #[cfg(target_arch = "s390x")]
        assert_eq!(r, 11);
        let rec = record();
        for k in 0..INT_ARGS {
            assert_eq!(rec[slot(Location::Int(k as u8))], k as u64 + 1);
        }
        for k in 0..VEC_ARGS {
            assert_eq!(
                rec[slot(Location::Vector(k as u8))],
                d(k as u64 + 1).to_bits()
            );
        }
        // The stack: the integers past the registers, then the doubles past theirs.
        let mut off = 0;
        for k in INT_ARGS..10 {
            assert_eq!(rec[slot(Location::Stack(off))], k as u64 + 1);
            off += 8;
        }
        for k in VEC_ARGS as u64..10 {
            assert_eq!(rec[slot(Location::Stack(off))], d(k + 1).to_bits());
            off += 8;
        }
    }
    // ELFv2: each argument takes a doubleword of the parameter save area; the first eight
    // integers are in r3..r10, the ninth and tenth in memory at offsets 64 and 72, and the
    // doubles in f1..f10 (their doublewords, 80 to 152, are not written).
    #[cfg(target_arch = "powerpc64")]
    {
        // SAFETY: the recorder follows the C convention for any argument list and returns its
        // chosen r3 and r4, which is how a two-`u64` struct comes back.
        let f: TenAndTen =
            unsafe { std::mem::transmute(stubdiff_record as unsafe extern "C" fn()) };
        let d = |k: u64| k as f64 + 0.5;
        // SAFETY: as above.
        let r = unsafe {
            f(
                1,
                2,
                3,
                4,
                5,
                6,
                7,
                8,
                9,
                10,
                d(1),
                d(2),
                d(3),
                d(4),
                d(5),
                d(6),
                d(7),
                d(8),
                d(9),
                d(10),
            )
        };
        assert_eq!(r, Pair(11, 22));
        let rec = record();
        for k in 0..8 {
            assert_eq!(rec[slot(Location::Int(k as u8))], k as u64 + 1);
        }
        for k in 0..10 {
            assert_eq!(
                rec[slot(Location::Vector(k as u8))],
                d(k as u64 + 1).to_bits()
            );
        }
        assert_eq!(rec[slot(Location::Stack(64))], 9);
        assert_eq!(rec[slot(Location::Stack(72))], 10);
    }
    // Microsoft x64: one slot per argument, an integer or a vector register by its type for
    // the first four, then the stack past the four home slots.
    #[cfg(windows)]
    {
        type Mixed = unsafe extern "C" fn(u64, f64, u64, f64, u64, f64) -> u64;
        // SAFETY: the recorder follows the C convention for any argument list and returns its
        // chosen rax.
        let f: Mixed = unsafe { std::mem::transmute(stubdiff_record as unsafe extern "C" fn()) };
        // SAFETY: as above.
        assert_eq!(unsafe { f(1, 1.5, 3, 3.5, 5, 5.5) }, 11);
        let rec = record();
        assert_eq!(rec[slot(Location::Int(0))], 1);
        assert_eq!(rec[slot(Location::Vector(1))], 1.5f64.to_bits());
        assert_eq!(rec[slot(Location::Int(2))], 3);
        assert_eq!(rec[slot(Location::Vector(3))], 3.5f64.to_bits());
        assert_eq!(rec[slot(Location::Stack(32))], 5);
        assert_eq!(rec[slot(Location::Stack(40))], 5.5f64.to_bits());
    }

    // An in-memory return: the pattern's first 24 bytes.
    // SAFETY: as above.
    unsafe {
        let p = std::ptr::addr_of_mut!(STUBDIFF_RET).cast::<u64>();
        p.add(6).write(24);
        for k in 0..3 {
            p.add(7 + k).write(0x1111 * (k as u64 + 1));
        }
    }
    type Big = unsafe extern "C" fn(u64) -> Triple;
    // SAFETY: as above; a 24-byte struct is returned through the hidden pointer.
    let g: Big = unsafe { std::mem::transmute(stubdiff_record as unsafe extern "C" fn()) };
    // SAFETY: as above.
    assert_eq!(unsafe { g(5) }, Triple(0x1111, 0x2222, 0x3333));

    // AArch64, RISC-V, s390x and Microsoft x64: the hook copies the bytes behind a
    // by-reference address.
    #[cfg(any(
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "s390x",
        windows
    ))]
    {
        let data: [u8; 24] = std::array::from_fn(|i| i as u8 * 3);
        // (Windows: rcx is the hidden return pointer, the argument is in rdx; RISC-V: a0 and
        // a1; s390x: r2 and r3)
        let at = Location::Int(
            if cfg!(any(windows, target_arch = "riscv64", target_arch = "s390x")) {
                1
            } else {
                0
            },
        );
        *BYREF_PLAN.lock().unwrap() = vec![(at, 24)];
        type One = unsafe extern "C" fn(*const u8) -> Triple;
        // SAFETY: as above.
        let h: One = unsafe { std::mem::transmute(stubdiff_record as unsafe extern "C" fn()) };
        // SAFETY: as above; `data` outlives the call.
        unsafe { h(data.as_ptr()) };
        BYREF_PLAN.lock().unwrap().clear();
        let seen = std::mem::take(&mut *BYREF_SEEN.lock().unwrap());
        assert_eq!(seen, vec![data.to_vec()]);
    }
    // SAFETY: as above.
    unsafe {
        std::ptr::addr_of_mut!(STUBDIFF_RET)
            .cast::<u64>()
            .add(6)
            .write(0)
    };
}
