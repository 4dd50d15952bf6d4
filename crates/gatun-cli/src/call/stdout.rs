//! Whether the called function left standard output in the middle of a line, so that
//! `gatun call` can print its result on a line of its own (`gatun call printf hi` prints
//! `hi`, a newline, then `2`).
//!
//! A [`Watch`] is started right before the call and finished right after it, around the
//! `fflush(NULL)` that writes out what the function buffered in C's stdio. What it can know
//! depends on what standard output (file descriptor 1) is:
//!
//! - **A regular file** (`gatun call ... > out.txt`): its file offset before and after the
//!   call; if it moved, the last byte written is read back (`pread`, through
//!   `/proc/self/fd/1` when the file is open for writing only). Exact, for stdio and direct
//!   `write(2)` output alike, where the file can be read.
//! - **A pipe, FIFO or socket** (`gatun call ... | less`, a test harness): for the duration of
//!   the call, descriptor 1 is replaced by a pipe whose other end a thread reads, forwarding
//!   every byte at once to the real standard output and remembering the last one. Exact, and
//!   the function still writes to a pipe, as it would have. The thread stops once the call has
//!   returned, C's stdio is flushed and the pipe is empty; output that a process the function
//!   started in the background writes after that is lost (its writes fail, with `EPIPE` or
//!   `SIGPIPE`, once the thread has closed the pipe).
//! - **A terminal**: nothing is interposed (a function may prompt, or check `isatty`); C's
//!   `stdout` is line-buffered there, so bytes still pending in its buffer before the flush
//!   (`__fpending`, glibc and musl) mean its last line was not ended. Output written with
//!   `write(2)` directly is not seen.
//! - Anything else (closed, `/dev/null`, other systems than Unix): nothing is known, and the
//!   result is printed as it is.
//!
//! # Invariants (for the `unsafe` code)
//! Every descriptor this module opens (the copy of the original descriptor 1, the pipe's two
//! ends) is owned by exactly one place and closed exactly once: the pipe's write end right
//! after it is copied onto descriptor 1, the read end by the forwarding thread when it stops,
//! the copy of descriptor 1 after the original is restored and the thread has stopped. Buffers
//! handed to `read`, `write` and `pread` are Rust slices of at least the length passed.

/// A watch over standard output during a call; see the [module documentation](self).
///
/// ```
/// use gatun_cli::call::stdout::Watch;
/// let watch = Watch::start();
/// // ... the call ...
/// let ((), unterminated) = watch.finish(|| ()); // flush C's stdio in the closure
/// assert!(!unterminated); // nothing was written
/// ```
pub struct Watch {
    #[cfg(unix)]
    mode: unix::Mode,
}

impl Watch {
    /// Starts watching standard output (see the module documentation for what each kind of
    /// output allows); on any failure to set up, nothing is watched.
    pub fn start() -> Watch {
        Watch {
            #[cfg(unix)]
            mode: unix::Mode::start(),
        }
    }

    /// Runs `flush` (which must flush C's stdio, `fflush(NULL)`), stops watching, restores
    /// standard output if it was interposed, and returns `flush`'s result with whether the
    /// output written since [`Watch::start`] did not end with a newline (`false` when nothing
    /// was written or nothing can be known).
    pub fn finish<R>(self, flush: impl FnOnce() -> R) -> (R, bool) {
        #[cfg(unix)]
        {
            self.mode.finish(flush)
        }
        #[cfg(not(unix))]
        {
            (flush(), false)
        }
    }
}

#[cfg(unix)]
mod unix {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::thread::JoinHandle;

    /// How long the forwarding thread waits for more output before it looks whether the call
    /// has finished, in milliseconds.
    const POLL_MS: libc::c_int = 20;

    /// What is watched.
    pub(super) enum Mode {
        /// Nothing can be known.
        Nothing,
        /// A regular file, at this offset when the call started.
        File(libc::off_t),
        /// A terminal.
        Terminal,
        /// Descriptor 1 is a pipe read by `thread`; `original` is a copy of the real
        /// standard output, `done` tells the thread that the call has finished.
        Pipe {
            original: libc::c_int,
            done: Arc<AtomicBool>,
            thread: JoinHandle<Option<u8>>,
        },
    }

    impl Mode {
        pub(super) fn start() -> Mode {
            // SAFETY: `fstat` writes a `stat` into the zeroed value it is given.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: as above; descriptor 1 may be closed, which `fstat` reports.
            if unsafe { libc::fstat(1, &mut st) } != 0 {
                return Mode::Nothing;
            }
            match st.st_mode & libc::S_IFMT {
                libc::S_IFREG => {
                    // SAFETY: `lseek` on a descriptor, no memory involved.
                    let at = unsafe { libc::lseek(1, 0, libc::SEEK_CUR) };
                    if at < 0 {
                        Mode::Nothing
                    } else {
                        Mode::File(at)
                    }
                }
                libc::S_IFCHR => {
                    // SAFETY: `isatty` on a descriptor, no memory involved.
                    if unsafe { libc::isatty(1) } == 1 {
                        Mode::Terminal
                    } else {
                        Mode::Nothing
                    }
                }
                libc::S_IFIFO | libc::S_IFSOCK => interpose().unwrap_or(Mode::Nothing),
                _ => Mode::Nothing,
            }
        }

        pub(super) fn finish<R>(self, flush: impl FnOnce() -> R) -> (R, bool) {
            match self {
                Mode::Nothing => (flush(), false),
                Mode::Terminal => {
                    let pending = stdio_pending();
                    (flush(), pending)
                }
                Mode::File(start) => {
                    let r = flush();
                    // SAFETY: `lseek` on a descriptor, no memory involved.
                    let end = unsafe { libc::lseek(1, 0, libc::SEEK_CUR) };
                    if end <= start {
                        return (r, false);
                    }
                    (r, last_byte(end - 1).is_some_and(|b| b != b'\n'))
                }
                Mode::Pipe {
                    original,
                    done,
                    thread,
                } => {
                    let r = flush();
                    // Restore the real standard output; this closes the pipe's last write end
                    // this process holds.
                    // SAFETY: `original` is an open descriptor this module owns.
                    unsafe { libc::dup2(original, 1) };
                    done.store(true, Ordering::Release);
                    let last = thread.join().ok().flatten();
                    // SAFETY: `original` is owned here and closed once; the thread, which
                    // wrote to it, has stopped.
                    unsafe { libc::close(original) };
                    (r, last.is_some_and(|b| b != b'\n'))
                }
            }
        }
    }

    /// The byte at offset `at` of the regular file that is descriptor 1: read from descriptor 1
    /// itself, or where it is open for writing only (`> file`), from the same file opened
    /// again for reading (`/proc/self/fd/1`, Linux).
    fn last_byte(at: libc::off_t) -> Option<u8> {
        let mut byte = [0u8; 1];
        // SAFETY: `byte` is one writable byte, the length passed.
        if unsafe { libc::pread(1, byte.as_mut_ptr().cast(), 1, at) } == 1 {
            return Some(byte[0]);
        }
        let file = std::fs::File::open("/proc/self/fd/1").ok()?;
        std::os::unix::fs::FileExt::read_exact_at(&file, &mut byte, at as u64).ok()?;
        Some(byte[0])
    }

    /// Replaces descriptor 1 with a pipe whose read end a thread forwards to the original
    /// standard output; `None` (and descriptor 1 unchanged) if any step fails.
    fn interpose() -> Option<Mode> {
        // SAFETY: `fcntl(F_DUPFD_CLOEXEC)` duplicates descriptor 1; no memory involved.
        let original = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
        if original < 0 {
            return None;
        }
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` is two writable descriptors, as `pipe` requires.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            // SAFETY: `original` was opened above and is closed once.
            unsafe { libc::close(original) };
            return None;
        }
        let [read_end, write_end] = fds;
        // SAFETY: `fcntl` on descriptors opened above; the read end is this process's only.
        unsafe { libc::fcntl(read_end, libc::F_SETFD, libc::FD_CLOEXEC) };
        // SAFETY: `dup2` onto descriptor 1 (children the function starts inherit it, as they
        // would the original); then the pipe's own write end is closed once.
        let moved = unsafe { libc::dup2(write_end, 1) } == 1;
        // SAFETY: as above.
        unsafe { libc::close(write_end) };
        if !moved {
            // SAFETY: the descriptors opened above, each closed once.
            unsafe {
                libc::close(read_end);
                libc::close(original);
            }
            return None;
        }
        let done = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&done);
        let thread = std::thread::Builder::new()
            .name("gatun-stdout".into())
            .spawn(move || forward(read_end, original, &stop));
        match thread {
            Ok(thread) => Some(Mode::Pipe {
                original,
                done,
                thread,
            }),
            Err(_) => {
                // SAFETY: restore descriptor 1, then close what was opened, each once (the
                // thread did not start, so nothing else uses them).
                unsafe {
                    libc::dup2(original, 1);
                    libc::close(read_end);
                    libc::close(original);
                }
                None
            }
        }
    }

    /// The forwarding thread: copies `read_end` to `out` until the pipe is closed, or is empty
    /// once `stop` is set; returns the last byte read. Closes `read_end`.
    fn forward(read_end: libc::c_int, out: libc::c_int, stop: &AtomicBool) -> Option<u8> {
        let mut last = None;
        let mut out_ok = true;
        let mut buf = [0u8; 8192];
        loop {
            // `stop` is loaded before polling: once the call has finished and C's stdio is flushed
            // (`stop` is stored after the flush), everything the call wrote is already in the
            // pipe, so a poll that then finds it empty means there is nothing left to forward.
            let stopping = stop.load(Ordering::Acquire);
            let mut pfd = libc::pollfd {
                fd: read_end,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: `pfd` is one valid `pollfd`, the count passed.
            let ready = unsafe { libc::poll(&mut pfd, 1, POLL_MS) };
            if ready < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            if ready == 0 {
                if stopping {
                    break;
                }
                continue;
            }
            // SAFETY: `buf` is writable for its whole length, the length passed.
            let n = unsafe { libc::read(read_end, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            if n == 0 {
                break; // every write end is closed
            }
            let data = &buf[..n as usize];
            last = data.last().copied();
            // A reader that went away (EPIPE) stops the forwarding, not the draining: the
            // function must never block on a full pipe.
            out_ok = out_ok && write_all(out, data);
        }
        // SAFETY: the read end is owned by this thread and closed once.
        unsafe { libc::close(read_end) };
        last
    }

    /// Writes all of `data` to descriptor `fd`; `false` on an error.
    fn write_all(fd: libc::c_int, mut data: &[u8]) -> bool {
        while !data.is_empty() {
            // SAFETY: `data` is readable for its whole length, the length passed.
            let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
            if n < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return false;
            }
            data = &data[n as usize..];
        }
        true
    }

    /// Whether C's `stdout` has bytes in its buffer (`__fpending`): on a terminal, where it
    /// is line-buffered, output whose last line is not ended.
    #[cfg(target_os = "linux")]
    fn stdio_pending() -> bool {
        extern "C" {
            static stdout: *mut libc::FILE;
            fn __fpending(stream: *mut libc::FILE) -> libc::size_t;
        }
        // SAFETY: `stdout` is the C library's standard output stream, valid for the whole
        // process; `__fpending` (glibc, musl) only reads the stream's buffer pointers.
        unsafe { __fpending(stdout) > 0 }
    }

    /// Off Linux the pending bytes are not known.
    #[cfg(not(target_os = "linux"))]
    fn stdio_pending() -> bool {
        false
    }
}
