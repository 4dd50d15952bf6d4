// The Rust side of the property tests' generated types (tests/prop/sigs.rs, included first):
// gatun layouts, leaf offsets, the leaf encoding the C checkers use and a signature's layouts
// and descriptor. Shared through `include!` by tests/downcall_prop.rs, tests/upcall_prop.rs and
// tests/stress.rs.

/// The generator mixture of the target (the build script writes the same target's checkers).
const ABI: PropAbi = if cfg!(windows) {
    PropAbi::Win64
} else if cfg!(target_arch = "riscv64") {
    PropAbi::Lp64d
} else if cfg!(target_arch = "powerpc64") {
    PropAbi::ElfV2
} else if cfg!(target_arch = "s390x") {
    PropAbi::S390x
} else {
    PropAbi::Unix
};

/// gatun's scalar kind of each kind id.
const KINDS: [ScalarKind; 12] = [
    ScalarKind::I8,
    ScalarKind::I16,
    ScalarKind::I32,
    ScalarKind::I64,
    ScalarKind::U8,
    ScalarKind::U16,
    ScalarKind::U32,
    ScalarKind::U64,
    ScalarKind::F32,
    ScalarKind::F64,
    ScalarKind::Pointer,
    ScalarKind::Bool,
];

/// The gatun layout of a generated type (C layout rules; arrays as sequences).
fn layout(t: &PropTy) -> MemoryLayout {
    match t {
        PropTy::Scalar(k) => V::new(KINDS[*k]).into(),
        PropTy::Struct(f, a16) => {
            let s = MemoryLayout::c_struct(f.iter().map(layout)).unwrap();
            if *a16 && s.byte_alignment() < 16 {
                s.with_byte_alignment(16).unwrap()
            } else {
                s
            }
        }
        PropTy::Array(e, n) => MemoryLayout::sequence_layout(*n, layout(e)).unwrap(),
    }
}

/// (byte offset, kind id) of every scalar leaf, in declaration order.
fn leaf_offsets(l: &MemoryLayout, t: &PropTy, base: usize, out: &mut Vec<(usize, usize)>) {
    match (l, t) {
        (_, PropTy::Scalar(k)) => out.push((base, *k)),
        (MemoryLayout::Struct(s), PropTy::Struct(f, _)) => {
            for ((off, m), ft) in s.fields().zip(f) {
                leaf_offsets(m, ft, base + off, out);
            }
        }
        (MemoryLayout::Sequence(s), PropTy::Array(e, n)) => {
            for i in 0..*n {
                let stride = s.element().byte_size();
                leaf_offsets(s.element(), e, base + i * stride, out);
            }
        }
        _ => unreachable!("layout {l} does not match {t:?}"),
    }
}

/// The low `n` bytes of `x` in the target's byte order: what C stores for a leaf of `n` bytes
/// whose value is `x` truncated (little-endian: the first `n` bytes of `x`'s little-endian image;
/// big-endian, s390x: the last `n` of its big-endian one).
#[allow(dead_code)]
fn leaf_bytes(x: u64, n: usize) -> Vec<u8> {
    if cfg!(target_endian = "big") {
        x.to_be_bytes()[8 - n..].to_vec()
    } else {
        x.to_le_bytes()[..n].to_vec()
    }
}

/// The stored bytes of a leaf (at most 8) read as an unsigned integer in the target's byte
/// order (the inverse of [`leaf_bytes`]).
#[allow(dead_code)]
fn leaf_value(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    if cfg!(target_endian = "big") {
        w[8 - b.len()..].copy_from_slice(b);
        u64::from_be_bytes(w)
    } else {
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w)
    }
}

/// The value of leaf `idx` of kind id `k` encoded from base `h` (C stores its low bytes, as
/// [`leaf_bytes`]): a checker's return leaves, and the upcall checkers' argument leaves.
fn ret_leaf(h: u64, idx: usize, k: usize) -> u64 {
    let v = h.wrapping_add((idx as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    match k {
        PROP_F32 => (((v >> 40) as i32) as f32).to_bits() as u64,
        PROP_F64 => (((v >> 12) as i64) as f64).to_bits(),
        PROP_BOOL => v & 1,
        _ => v,
    }
}

/// A generated signature's gatun side: every argument's and the return's layout with its
/// leaves ((byte offset, kind id) of every scalar), and the descriptor.
#[allow(dead_code)]
struct PropLayouts {
    args: Vec<(gatun::MemoryLayout, Vec<(usize, usize)>)>,
    /// `None` for void.
    ret: Option<(gatun::MemoryLayout, Vec<(usize, usize)>)>,
    first_variadic: Option<usize>,
    descriptor: gatun::linker::FunctionDescriptor,
}

#[allow(dead_code)]
impl PropLayouts {
    /// The layouts of signature `i`; panics if one disagrees with the C rules.
    fn new(i: usize, sig: &PropSig) -> PropLayouts {
        let shaped = |t: &PropTy| {
            let l = layout(t);
            let (size, align) = prop_size_align(t);
            assert_eq!(
                (l.byte_size(), l.byte_alignment()),
                (size, align),
                "prop_{i}: {l} vs the C rules for {t:?}"
            );
            let mut leaves = Vec::new();
            leaf_offsets(&l, t, 0, &mut leaves);
            (l, leaves)
        };
        let args: Vec<_> = sig.args.iter().map(shaped).collect();
        let ret = sig.ret.as_ref().map(shaped);
        let arg_layouts = args.iter().map(|(l, _)| l.clone());
        let descriptor = match &ret {
            Some((l, _)) => gatun::linker::FunctionDescriptor::of(l.clone(), arg_layouts),
            None => gatun::linker::FunctionDescriptor::of_void(arg_layouts),
        };
        PropLayouts {
            args,
            ret,
            first_variadic: sig.first_variadic,
            descriptor,
        }
    }
}
