//! libFuzzer target `cli_args`: every input goes to `gatun_fuzz::check_cli_args` (which panics when an
//! invariant does not hold); see crates/gatun-fuzz for what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gatun_fuzz::check_cli_args(data));
