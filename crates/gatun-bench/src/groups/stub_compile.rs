//! `stub_compile/*`: what compiling one downcall stub costs (issue 9's ≤ 20 µs target), per
//! signature, without the stub cache:
//! - `codegen_<sig>`: classification (the `CallPlan`) plus machine-code generation of both stub
//!   entries (`Linker::stub_code`);
//! - `map_<sig>`: the same plus the W^X mapping (`mmap` RW, copy, `mprotect` RX) and `munmap`
//!   (`Linker::compile_stub_uncached`): the full cost of a cache miss in `Linker::downcall`.
//!
//! Signatures: `add6` (`long(long × 6)`), `ldiv` (`ldiv_t(long, long)`, a register-returned
//! struct) and `mix16` (16 arguments mixing ints, doubles, a 12-byte struct and a 24-byte
//! struct on the stack, returning a 24-byte struct through the hidden pointer, with errno
//! capture).

use gatun::layout::{MemoryLayout, ValueLayout as V};
use gatun::linker::{FunctionDescriptor as FD, Linker, LinkerOption};

use crate::{repeat, Body, Row};

/// The group name.
pub const GROUP: &str = "stub_compile";

fn signatures(name: &str) -> (FD, Vec<LinkerOption>) {
    let ll = MemoryLayout::c_struct([V::I64, V::I64]).expect("layout");
    let i3 = MemoryLayout::c_struct([V::I32, V::I32, V::I32]).expect("layout");
    let l3 = MemoryLayout::c_struct([V::I64, V::I64, V::I64]).expect("layout");
    match name {
        "add6" => (FD::of(V::I64, [V::I64; 6]), vec![]),
        "ldiv" => (FD::of(ll, [V::I64, V::I64]), vec![]),
        _ => {
            let mut args: Vec<MemoryLayout> = Vec::new();
            for k in 0..14 {
                args.push(if k % 2 == 0 {
                    V::I32.into()
                } else {
                    V::F64.into()
                });
            }
            args.push(i3);
            args.push(l3.clone());
            (
                FD::of(l3, args),
                vec![LinkerOption::CaptureCallState(&["errno"])],
            )
        }
    }
}

/// `stub_compile/{codegen,map}_{add6,ldiv,mix16}`.
pub fn rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for (codegen, map, sig) in [
        ("codegen_add6", "map_add6", "add6"),
        ("codegen_ldiv", "map_ldiv", "ldiv"),
        ("codegen_mix16", "map_mix16", "mix16"),
    ] {
        rows.push(Row::new(GROUP, codegen, move || -> Body {
            let (d, o) = signatures(sig);
            Box::new(move |iters| {
                repeat(iters, || {
                    Linker::native()
                        .stub_code(std::hint::black_box(&d), &o)
                        .expect("stub code")
                })
            })
        }));
        rows.push(Row::new(GROUP, map, move || -> Body {
            let (d, o) = signatures(sig);
            Box::new(move |iters| {
                repeat(iters, || {
                    Linker::native()
                        .compile_stub_uncached(std::hint::black_box(&d), &o)
                        .expect("stub")
                })
            })
        }));
    }
    rows
}
