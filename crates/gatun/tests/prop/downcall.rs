// One checked downcall of a generated signature (tests/prop/sigs.rs and tests/prop/layouts.rs,
// included first), shared through `include!` by tests/downcall_prop.rs and tests/stress.rs:
// linking the checker, random leaf values, the call on one of four paths and the check of the
// C checker's hash and of every returned leaf. Paths are spelt out in full (no
// `use`), so the including file's imports never clash with these.

#[allow(dead_code)]
impl PropLayouts {
    /// Links `symbol` (the checker `prop_<i>`) with this signature's descriptor and options.
    fn link(&self, symbol: &gatun::linker::Symbol) -> gatun::Result<gatun::linker::DowncallHandle> {
        let options: Vec<gatun::linker::LinkerOption> = self
            .first_variadic
            .map(gatun::linker::LinkerOption::FirstVariadicArg)
            .into_iter()
            .collect();
        gatun::linker::Linker::native().downcall(symbol, &self.descriptor, &options)
    }
}

/// `prop_last_hash()`: the hash the last checker called on this thread computed.
#[allow(dead_code)]
fn last_hash() -> u64 {
    static H: std::sync::OnceLock<gatun::linker::DowncallHandle> = std::sync::OnceLock::new();
    let h = H.get_or_init(|| {
        common::link(
            "prop_last_hash",
            &gatun::linker::FunctionDescriptor::of(gatun::ValueLayout::U64, []),
        )
    });
    // SAFETY: `uint64_t prop_last_hash(void)` reads a thread-local.
    match unsafe { h.invoke(&[]) }.unwrap() {
        gatun::Value::U64(v) => v,
        v => panic!("prop_last_hash returned {v:?}"),
    }
}

#[allow(dead_code)]
fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A random leaf payload of `kind` (a bool is 0 or 1).
#[allow(dead_code)]
fn leaf_raw(kind: gatun::layout::ScalarKind, s: &mut u64) -> u64 {
    let raw = splitmix(s);
    if kind == gatun::layout::ScalarKind::Bool {
        raw & 1
    } else {
        raw
    }
}

/// The 64-bit value C's `MIX*` sees for a leaf whose stored bytes are the low bytes of `raw`.
#[allow(dead_code)]
fn c_bits(kind: gatun::layout::ScalarKind, raw: u64) -> u64 {
    let n = kind.byte_size() as u32 * 8;
    let low = if n == 64 {
        raw
    } else {
        raw & ((1u64 << n) - 1)
    };
    if kind.is_signed() && n < 64 {
        (((low << (64 - n)) as i64) >> (64 - n)) as u64
    } else {
        low
    }
}

/// How a call is made.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug)]
enum Path {
    /// `invoke_into` on the linked handle (its compiled stub, where there is one).
    Stub,
    /// `invoke_into` on `interpreted()`.
    Trampoline,
    /// `invoke_raw` on the linked handle.
    Raw,
    /// `invoke_arguments` (`invoke_arguments_into` for a struct return) on the linked handle,
    /// with an `Arguments` list.
    Arguments,
}

thread_local! {
    /// How many calls on this thread took `invoke_arguments`' slots path.
    static SLOTS_CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Compares the returned bytes of every leaf with what the checker stores.
#[allow(dead_code)]
fn check_leaves(
    i: usize,
    p: Path,
    h: u64,
    leaves: &[(usize, usize)],
    bytes: &[u8],
) -> Result<(), String> {
    for (idx, &(off, k)) in leaves.iter().enumerate() {
        let n = KINDS[k].byte_size();
        let want = leaf_bytes(ret_leaf(h, idx, k), n);
        if bytes[off..off + n] != want[..] {
            return Err(format!(
                "prop_{i} ({p:?}): return leaf {idx} ({}) at byte {off}: got {:?}, want {:?}",
                PROP_C_TYPES[k],
                &bytes[off..off + n],
                want
            ));
        }
    }
    Ok(())
}

/// Calls `handle` (linked for signature `i`, whose layouts are `shape`; for [`Path::Trampoline`] its
/// `interpreted()` twin) on `path` with leaf values drawn from `seed`, the argument segments
/// and the result taken from `alloc`, and checks the C checker's hash of the arguments and
/// every leaf of the result.
#[allow(dead_code)]
fn call_prop(
    i: usize,
    shape: &PropLayouts,
    handle: &gatun::linker::DowncallHandle,
    seed: u64,
    path: Path,
    alloc: &dyn gatun::memory::SegmentAllocator,
) -> Result<(), String> {
    use gatun::{MemoryLayout, Value};
    let mut s = seed;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ i as u64;
    let mut vals: Vec<Value> = Vec::new();
    let mut segs: Vec<gatun::memory::MemorySegment> = Vec::new();
    let fail = |e: gatun::Error| format!("prop_{i} ({path:?}): {e}");
    for (j, (l, leaves)) in shape.args.iter().enumerate() {
        let seg = alloc
            .allocate(l.byte_size(), l.byte_alignment().max(8))
            .map_err(fail)?;
        seg.fill(0);
        match l {
            MemoryLayout::Value(v) => {
                let raw = leaf_raw(v.kind(), &mut s);
                let variadic = shape.first_variadic.is_some_and(|f| j >= f);
                let bits = if variadic && v.kind() == gatun::layout::ScalarKind::F32 {
                    // promoted to double; the checker hashes the double
                    (f32::from_bits(raw as u32) as f64).to_bits()
                } else {
                    c_bits(v.kind(), raw)
                };
                h = (h ^ bits).wrapping_mul(0x100_0000_01b3);
                seg.copy_from_slice(0, &leaf_bytes(raw, v.byte_size()))
                    .map_err(fail)?;
                vals.push(common::value_from_bits(v.kind(), raw));
            }
            _ => {
                for &(off, k) in leaves {
                    let kind = KINDS[k];
                    let raw = leaf_raw(kind, &mut s);
                    seg.copy_from_slice(off, &leaf_bytes(raw, kind.byte_size()))
                        .map_err(fail)?;
                    h = (h ^ c_bits(kind, raw)).wrapping_mul(0x100_0000_01b3);
                }
                vals.push(Value::Segment(seg));
            }
        }
        segs.push(seg);
    }
    let ret_bytes: Option<Vec<u8>> = match path {
        Path::Raw => {
            let ptrs: Vec<*const u8> = segs.iter().map(|s| s.as_ptr() as *const u8).collect();
            let dest = match &shape.ret {
                Some((l, _)) => {
                    let d = alloc
                        .allocate(l.byte_size(), l.byte_alignment().max(16))
                        .map_err(fail)?;
                    d.fill(0);
                    Some(d)
                }
                None => None,
            };
            let ret_ptr = dest.map_or(std::ptr::null_mut(), |d| d.as_ptr());
            // SAFETY: the checker's C type is exactly the descriptor; every argument has its
            // layout's bytes; `dest` has the return layout's size and alignment; pointers are
            // never dereferenced by the checker.
            unsafe { handle.invoke_raw(&ptrs, ret_ptr) }.map_err(fail)?;
            dest.map(|d| d.to_vec())
        }
        Path::Stub | Path::Trampoline | Path::Arguments => {
            let got = if let Path::Arguments = path {
                let mut list = gatun::Arguments::<24>::new();
                vals.iter().for_each(|v| {
                    list.value(*v);
                });
                if handle.takes_slots_path(&list) {
                    SLOTS_CALLS.with(|c| c.set(c.get() + 1));
                }
                match shape.ret {
                    // SAFETY: as above.
                    Some((MemoryLayout::Value(_), _)) | None => unsafe {
                        handle.invoke_arguments(&list)
                    },
                    // SAFETY: as above.
                    Some(_) => unsafe { handle.invoke_arguments_into(alloc, &list) },
                }
            } else {
                // SAFETY: as above.
                unsafe { handle.invoke_into(alloc, &vals) }
            }
            .map_err(fail)?;
            match (&shape.ret, got) {
                (None, Value::Void) => None,
                (None, v) => return Err(format!("prop_{i} ({path:?}): void returned {v:?}")),
                (Some((MemoryLayout::Value(v), _)), got) => {
                    if got.scalar_kind() != Some(v.kind()) {
                        return Err(format!("prop_{i} ({path:?}): got {got:?}, want a {v}"));
                    }
                    let d = alloc.allocate(8, 8).map_err(fail)?;
                    d.set_value(v, 0, &got).map_err(fail)?;
                    Some(d.to_vec())
                }
                (Some(_), got) => {
                    let seg = got.as_segment().ok_or_else(|| {
                        format!("prop_{i} ({path:?}): got {got:?}, want a segment")
                    })?;
                    Some(seg.to_vec())
                }
            }
        }
    };
    let seen = last_hash();
    if seen != h {
        return Err(format!(
            "prop_{i} ({path:?}): the checker hashed its arguments to {seen:#x}, want {h:#x}"
        ));
    }
    if let (Some((_, leaves)), Some(bytes)) = (&shape.ret, ret_bytes) {
        check_leaves(i, path, h, leaves, &bytes)?;
    }
    Ok(())
}
