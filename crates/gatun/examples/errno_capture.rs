//! Capturing `errno` right after a call (Java's `Linker.Option.captureCallState("errno")`):
//! the capture segment is the first argument; gatun saves errno into it before any other code
//! can change it.
//!
//! `cargo run -p gatun --example errno_capture` prints:
//! ```text
//! open = -1, errno 2 (No such file or directory)
//! ```

use std::error::Error;

use gatun::cdecl::Declarations;
use gatun::linker::{capture_state_layout, LinkerOption, SymbolLookup};
use gatun::memory::{Arena, SegmentAllocator};

/// Runs the example and returns what it prints.
pub fn run() -> Result<String, Box<dyn Error>> {
    let decls = Declarations::parse("int open(const char *path, int flags);")?;
    let open = decls.link_with(
        &SymbolLookup::default_lookup(),
        "open",
        &[LinkerOption::CaptureCallState(&["errno"])],
    )?;
    let state = capture_state_layout();
    let errno = state.accessor("errno")?.typed::<i32>()?;
    let arena = Arena::confined();
    let captured = arena.allocate_layout(&state)?;
    let path = arena.allocate_c_string("/nonexistent/gatun")?;
    // SAFETY: open(path, O_RDONLY) with a NUL-terminated path; the capture segment comes first.
    let fd = unsafe { open.invoke(&[captured.into(), path.into(), 0.into()]) }?;
    let e = errno.get(&captured)?;
    let message = std::io::Error::from_raw_os_error(e).to_string();
    let message = message.split(" (os error").next().unwrap_or_default();
    Ok(format!(
        "open = {}, errno {e} ({message})\n",
        fd.as_i32().unwrap_or(0)
    ))
}

fn main() -> Result<(), Box<dyn Error>> {
    print!("{}", run()?);
    Ok(())
}
