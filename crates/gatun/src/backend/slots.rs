//! The register matrix of the `linker::Arguments` direct calls (`x86_64_sysv::slots`,
//! `aarch64::slots`, `riscv64::slots`): one `asm!` block per pair of argument-register counts, so that each
//! block's operands are exactly the registers in use and, with constant counts, the two
//! `match`es fold to that one block.

/// Expands to `match $ni { 0 => .., 1 => .., .., _ => .. }` over the integer registers, each
/// arm a `match $nf { .. }` over the float registers, each of those arms
/// `$call!([int registers], [float registers])` with the registers in use: the first `k`
/// register–index pairs of each list for count `k`, all of them for the last arm (`_`).
///
/// `$call` is a macro of the caller taking `([$($reg:tt $index:tt)*], [$($reg:tt $index:tt)*])`
/// (register name, index into the caller's slot array) and expanding to the call.
macro_rules! register_matrix {
    ($call:ident!, $ni:expr => [$($g:tt)*], $nf:expr => [$($f:tt)*] $(,)?) => {
        $crate::backend::slots::register_matrix!(
            @arms (@floats $call $nf, [$($f)*]) $ni, [] [] [$($g)*]
        )
    };
    // One arm per register pair (the count before it), then `_` with every pair.
    (@arms $then:tt $n:expr, [$($arms:tt)*] [$($pre:tt)*] [$r:tt $i:tt $($rest:tt)*]) => {
        $crate::backend::slots::register_matrix!(
            @arms $then $n,
            [$($arms)* $i => $crate::backend::slots::register_matrix!(@then $then [$($pre)*]),]
            [$($pre)* $r $i]
            [$($rest)*]
        )
    };
    (@arms $then:tt $n:expr, [$($arms:tt)*] [$($pre:tt)*] []) => {
        match $n {
            $($arms)*
            _ => $crate::backend::slots::register_matrix!(@then $then [$($pre)*]),
        }
    };
    // An integer arm: the float matrix with these integer registers.
    (@then (@floats $call:ident $nf:expr, $f:tt) $gps:tt) => {
        $crate::backend::slots::register_matrix!(@arms (@call $call $gps) $nf, [] [] $f)
    };
    // A float arm: the call.
    (@then (@call $call:ident $gps:tt) [$($fps:tt)*]) => {
        $call!($gps, [$($fps)*])
    };
}

pub(crate) use register_matrix;
