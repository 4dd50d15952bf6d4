//! gatun's C test natives, for gatun's own tests and examples (this crate is not published).
//!
//! The build script compiles every `crates/gatun/tests/native/*.c`, plus the downcall and
//! upcall property-test checkers generated from `crates/gatun/tests/prop/sigs.rs`, with the
//! target's C compiler into one shared library.
//! Depending on this crate (as gatun does, in `[dev-dependencies]` only) is what makes a C
//! compiler necessary for the tests; the gatun library itself builds without one.
//!
//! The library is built for every Linux target, native or cross (a cross build for
//! `aarch64-unknown-linux-gnu` uses `aarch64-linux-gnu-gcc`). Other targets and Miri skip the
//! C compiler: [`PATH`] is still defined there, but no file exists at it.
//!
//! # Example
//!
//! ```
//! // gatun's tests load it as any C library: `SymbolLookup::library(gatun_test_natives::PATH)`.
//! # #[cfg(target_os = "linux")]
//! assert!(std::path::Path::new(gatun_test_natives::PATH).is_file());
//! ```

/// The absolute path of `libgatun_test_natives.so` (in this crate's build-script output
/// directory), fixed at compile time.
///
/// On Linux targets the file exists once this crate is built; on other targets and under Miri
/// the path is set but nothing is built there.
pub const PATH: &str = env!("GATUN_TEST_NATIVES");
