//! `stub_compile/*`: what compiling one downcall stub costs, per
//! signature:
//! - `codegen_<sig>`: classification (the `CallPlan`) plus machine-code generation of both stub
//!   entries (`Linker::stub_code`);
//! - `map_<sig>`: the same plus placing the code in the code arena (copy through the arena's
//!   read-write view) and freeing it (`Linker::compile_stub_uncached`, no stub cache);
//! - `link_new_<sig>`: `Linker::downcall` of a signature that has no live stub, then dropping
//!   the handle (which frees the stub): the full cost of a cache miss plus the free;
//! - `link_cached_<sig>`: `Linker::downcall` of a signature whose stub is alive (another handle
//!   holds it): classification plus the cache lookup, then dropping the handle.
//!
//! Signatures: `add6` (`long(long × 6)`), `ldiv` (`ldiv_t(long, long)`, a register-returned
//! struct) and `mix16` (16 arguments mixing ints, doubles, a 12-byte struct and a 24-byte
//! struct on the stack, returning a 24-byte struct through the hidden pointer, with errno
//! capture). The linked symbol is libc's `labs` (never called).

use gatun::layout::{MemoryLayout, ValueLayout as V};
use gatun::linker::{FunctionDescriptor as FD, Linker, LinkerOption, SymbolLookup};

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

/// `stub_compile/{codegen,map,link_new,link_cached}_{add6,ldiv,mix16}`.
pub fn rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for [codegen, map, link_new, link_cached, sig] in [
        [
            "codegen_add6",
            "map_add6",
            "link_new_add6",
            "link_cached_add6",
            "add6",
        ],
        [
            "codegen_ldiv",
            "map_ldiv",
            "link_new_ldiv",
            "link_cached_ldiv",
            "ldiv",
        ],
        [
            "codegen_mix16",
            "map_mix16",
            "link_new_mix16",
            "link_cached_mix16",
            "mix16",
        ],
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
        for (name, cached) in [(link_new, false), (link_cached, true)] {
            rows.push(Row::new(GROUP, name, move || -> Body {
                let (d, o) = signatures(sig);
                let sym = SymbolLookup::default_lookup().find("labs").expect("labs");
                let keep = cached.then(|| Linker::native().downcall(&sym, &d, &o).expect("link"));
                Box::new(move |iters| {
                    let _keep = &keep;
                    repeat(iters, || {
                        let h = Linker::native()
                            .downcall(&sym, std::hint::black_box(&d), &o)
                            .expect("link");
                        h.uses_compiled_stub()
                    })
                })
            }));
        }
    }
    rows
}
