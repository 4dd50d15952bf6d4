//! gatun's C test natives, for gatun's own tests and examples (this crate is not published).
//!
//! The build script compiles every `crates/gatun/tests/native/*.c`, plus the downcall and
//! upcall property-test checkers generated from `crates/gatun/tests/prop/sigs.rs`, with the
//! target's C compiler into one shared library.
//! Depending on this crate (as gatun does, in `[dev-dependencies]` only) is what makes a C
//! compiler necessary for the tests; the gatun library itself builds without one.
//!
//! The library is built for every Linux target, native or cross (a cross build for
//! `aarch64-unknown-linux-gnu` uses `aarch64-linux-gnu-gcc`), and for `x86_64-pc-windows-gnu`
//! (`x86_64-w64-mingw32-gcc`; a DLL that imports only kernel32, msvcrt and ws2_32). Other
//! targets and Miri skip the C compiler: [`PATH`] is still defined there, but no file exists
//! at it.
//!
//! # Example
//!
//! ```
//! // gatun's tests load it as any C library: `SymbolLookup::library(gatun_test_natives::PATH)`.
//! # #[cfg(all(any(target_os = "linux", all(target_arch = "x86_64", windows)), not(miri)))]
//! assert!(std::path::Path::new(gatun_test_natives::PATH).is_file());
//! ```

use std::ffi::OsStr;
use std::process::Command;

/// The absolute path of `libgatun_test_natives.so` (`gatun_test_natives.dll` on Windows) in
/// this crate's build-script output directory, fixed at compile time. A Windows build made on
/// a Linux host keeps the Unix path; a test run under Wine from the workspace resolves it on
/// the drive of its working directory (`Z:`, Wine's mapping of `/`).
///
/// On Linux targets and x86-64 Windows the file exists once this crate is built; on other
/// targets and under Miri the path is set but nothing is built there.
pub const PATH: &str = env!("GATUN_TEST_NATIVES");

/// The C compiler [`PATH`] is built with: the target's compiler (`cc` for a native build,
/// `aarch64-linux-gnu-gcc` for an `aarch64-unknown-linux-gnu` cross build,
/// `x86_64-w64-mingw32-gcc` for Windows, or what `CC_<target>`/`CC` named), fixed at compile
/// time; `cc` where no library is built. For Windows it is a program of the Linux build host,
/// which a test running under Wine cannot start.
///
/// Tests that check gatun against the C compiler use this one, so that a cross-built test run
/// under emulation checks the target's ABI and not the host's.
///
/// # Example
///
/// ```
/// # #[cfg(all(target_os = "linux", not(miri)))]
/// # {
/// let out = std::process::Command::new(gatun_test_natives::CC)
///     .arg("--version")
///     .output()
///     .unwrap();
/// assert!(out.status.success());
/// # }
/// ```
pub const CC: &str = env!("GATUN_TEST_CC");

/// The command (program and arguments, separated by spaces) that runs a program of the target
/// on the build host: empty for a native build and for Windows (a Windows test under Wine
/// starts Windows programs itself); for a Linux cross build to another architecture `$CARGO_TARGET_<TRIPLE>_RUNNER` as it was at build time, else
/// `qemu-<arch> -L /` (RISC-V 64, s390x, PPC64LE: `qemu-riscv64 -L /usr/riscv64-linux-gnu`,
/// `qemu-s390x -L /usr/s390x-linux-gnu`, `qemu-ppc64le -L /usr/powerpc64le-linux-gnu`, the
/// cross sysroots). Fixed at
/// compile time.
///
/// Under qemu-user a test cannot start another target program directly (the host kernel
/// cannot execute it); [`target_command`] puts this runner in front.
pub const RUNNER: &str = env!("GATUN_TEST_RUNNER");

/// A [`Command`] that runs `program`, a program built for the target (a compiled check, a
/// binary of the workspace), through [`RUNNER`] when there is one.
///
/// # Panics
/// Never.
///
/// # Example
///
/// ```
/// let cmd = gatun_test_natives::target_command("/bin/true");
/// if gatun_test_natives::RUNNER.is_empty() {
///     assert_eq!(cmd.get_program(), "/bin/true");
/// } else {
///     assert_eq!(cmd.get_args().last().unwrap(), "/bin/true");
/// }
/// ```
pub fn target_command(program: impl AsRef<OsStr>) -> Command {
    let mut words = RUNNER.split_whitespace();
    match words.next() {
        Some(runner) => {
            let mut cmd = Command::new(runner);
            cmd.args(words).arg(program);
            cmd
        }
        None => Command::new(program),
    }
}
