//! BufferStack tests: the JDK's `TestBufferStack` cases in Rust terms, plus deferred release,
//! thread exit and thread-local teardown. Multi-threaded stress tests live in
//! `tests/buffer_stack_stress.rs`, the allocation count in `tests/buffer_stack_alloc.rs`.

use std::ffi::OsStr;

use super::*;
use crate::layout::{MemoryLayout, ValueLayout};

fn new_stack() -> BufferStack {
    BufferStack::new(64, 1).unwrap()
}

/// The address of the next stack-backed frame's first byte (a probe frame, closed at once).
fn next_address(stack: &BufferStack) -> usize {
    let frame = stack.push_frame(0, 1).unwrap();
    assert!(!frame.is_fallback());
    let address = frame.allocate(0, 1).unwrap().address();
    frame.close().unwrap();
    address
}

#[test]
fn invariants() {
    assert_eq!(
        BufferStack::new(8, 3).unwrap_err(),
        Error::InvalidAlignment { alignment: 3 }
    );
    assert_eq!(
        BufferStack::new(8, 0).unwrap_err(),
        Error::InvalidAlignment { alignment: 0 }
    );
    assert!(matches!(
        BufferStack::new(usize::MAX, 1),
        Err(Error::SizeOverflow { .. })
    ));
    let stack = new_stack();
    let start = next_address(&stack);
    assert_eq!(
        stack.push_frame(8, 3).unwrap_err(),
        Error::InvalidAlignment { alignment: 3 }
    );
    assert!(matches!(
        stack.push_frame(usize::MAX, 8),
        Err(Error::SizeOverflow { .. })
    ));
    assert_eq!(
        next_address(&stack),
        start,
        "a rejected push changes nothing"
    );

    let frame = stack.push_frame(8, 1).unwrap();
    assert_eq!(
        frame.allocate(4, 3).unwrap_err(),
        Error::InvalidAlignment { alignment: 3 }
    );
    assert!(matches!(
        frame.allocate(usize::MAX, 1),
        Err(Error::SizeOverflow { .. })
    ));
    assert_eq!(
        frame.used_bytes(),
        0,
        "a rejected allocation changes nothing"
    );
    assert_eq!(frame.allocate(4, 1).unwrap().address(), start);
    frame.close().unwrap();
}

#[test]
fn scoped_allocation() {
    let stack = new_stack();
    let frame1 = stack.push_frame(12, 4).unwrap();
    assert!(!frame1.is_fallback());
    let segment11 = frame1.allocate_layout(&ValueLayout::I32.into()).unwrap();
    let segment12 = frame1.allocate_layout(&ValueLayout::I32.into()).unwrap();
    assert_eq!(segment12.address(), segment11.address() + 4);
    assert_eq!(segment11.byte_size(), 4);
    segment11.set(0, 11i32).unwrap();
    segment12.set(0, 12i32).unwrap();
    {
        let frame2 = stack.push_frame(8, 8).unwrap();
        let segment2 = frame2.allocate(8, 1).unwrap();
        // frame1 reserved 12 bytes at a 16-aligned block start; 8-alignment pads to 16.
        assert_eq!(segment2.address(), segment12.address() + 12);
        assert_eq!(segment2.byte_size(), 8);
        segment2.set(0, -1i64).unwrap();
        frame2.close().unwrap();
    }
    {
        let frame3 = stack.push_frame(8, 4).unwrap();
        let segment3 = frame3.allocate(8, 1).unwrap();
        assert_eq!(segment3.address(), segment12.address() + 8);
        frame3.close().unwrap();
    }
    {
        let huge = stack.push_frame(1024, 4).unwrap();
        assert!(huge.is_fallback());
        let segment = huge.allocate(1024, 4).unwrap();
        // SAFETY: only used for an address comparison, never accessed.
        let whole_block = unsafe { MemorySegment::from_raw_parts(segment11.as_ptr(), 64) };
        assert!(!segment.overlaps(&whole_block));
        assert!(
            segment.to_vec().iter().all(|&b| b == 0),
            "fallback memory is zeroed"
        );
        huge.close().unwrap();
    }
    assert_eq!(segment11.get::<i32>(0).unwrap(), 11);
    assert_eq!(segment12.get::<i32>(0).unwrap(), 12);
    frame1.close().unwrap();
}

#[test]
fn reuse_gives_the_same_address_and_is_not_zeroed() {
    let stack = new_stack();
    let first = stack.push_frame(16, 8).unwrap();
    let segment = first.allocate(16, 8).unwrap();
    let address = segment.address();
    segment.fill(0xAB);
    first.close().unwrap();

    let second = stack.push_frame(16, 8).unwrap();
    let segment = second.allocate(16, 8).unwrap();
    assert_eq!(segment.address(), address);
    assert_eq!(
        segment.get::<u8>(15).unwrap(),
        0xAB,
        "reused bytes are not zeroed"
    );
    drop(second);

    let third = stack.push_frame(16, 8).unwrap();
    let segment = third.allocate_zeroed(16, 8).unwrap();
    assert_eq!(segment.address(), address);
    assert!(segment.to_vec().iter().all(|&b| b == 0));
    third.close().unwrap();
}

#[test]
fn out_of_order_close_fails_and_parent_stays_usable() {
    let stack = new_stack();
    let start = next_address(&stack);
    let parent = stack.push_frame(16, 8).unwrap();
    let before = parent.allocate(8, 8).unwrap().address();
    let child = stack.push_frame(8, 8).unwrap();
    let child_segment = child.allocate(8, 8).unwrap();
    child_segment.set(0, 7u64).unwrap();

    let parent = parent.try_close().expect_err("parent is not top-of-stack");
    assert_eq!(parent.used_bytes(), 8, "nothing changed");
    let after = parent.allocate(8, 8).unwrap();
    assert_eq!(after.address(), before + 8);
    after.set(0, 1u64).unwrap();
    assert_eq!(child_segment.get::<u64>(0).unwrap(), 7);

    child.close().unwrap();
    parent.close().unwrap();
    assert_eq!(next_address(&stack), start);
}

#[test]
fn close_out_of_order_reports_and_defers() {
    let stack = new_stack();
    let start = next_address(&stack);
    let parent = stack.push_frame(16, 8).unwrap();
    let child = stack.push_frame(8, 8).unwrap();
    let child_address = child.allocate(8, 8).unwrap().address();
    assert_eq!(parent.close().unwrap_err(), Error::FrameNotTopOfStack);
    // The child is untouched and still top-of-stack.
    let grandchild = stack.push_frame(8, 8).unwrap();
    assert_eq!(
        grandchild.allocate(8, 8).unwrap().address(),
        child_address + 8
    );
    grandchild.close().unwrap();
    child.close().unwrap();
    // Closing the child released the parent's deferred bytes as well.
    assert_eq!(next_address(&stack), start);
}

#[test]
fn drop_out_of_order_never_reuses_live_memory() {
    let stack = BufferStack::new(256, 1).unwrap();
    let start = next_address(&stack);
    let a = stack.push_frame(16, 8).unwrap();
    let b = stack.push_frame(16, 8).unwrap();
    let c = stack.push_frame(16, 8).unwrap();
    let c_segment = c.allocate(16, 8).unwrap();
    c_segment.fill(0xCC);
    drop(b); // not top-of-stack: deferred
    let d = stack.push_frame(16, 8).unwrap();
    let d_segment = d.allocate(16, 8).unwrap();
    assert!(!d_segment.overlaps(&c_segment));
    assert_eq!(d_segment.address(), c_segment.address() + 16);
    drop(a); // deferred, merges with b
    drop(d);
    assert_eq!(c_segment.get::<u64>(8).unwrap(), 0xCCCC_CCCC_CCCC_CCCC);
    // c was above a and b; releasing it releases them too.
    c.close().unwrap();
    assert_eq!(next_address(&stack), start);
}

#[test]
fn interleaved_frames_like_two_local_tasks() {
    // Two `!Send` futures on one thread, each holding a frame across an await, finish in the
    // "wrong" order over and over: the stack must come back to empty every time.
    let stack = BufferStack::new(64, 1).unwrap();
    let start = next_address(&stack);
    for _ in 0..100 {
        let task_a = stack.push_frame(8, 8).unwrap();
        let task_b = stack.push_frame(8, 8).unwrap();
        assert!(!task_a.is_fallback() && !task_b.is_fallback());
        task_a.allocate(8, 8).unwrap().set(0, 1u64).unwrap();
        task_b.allocate(8, 8).unwrap().set(0, 2u64).unwrap();
        drop(task_a);
        drop(task_b);
        assert_eq!(next_address(&stack), start);
    }
}

#[test]
fn many_separate_deferred_regions_are_all_released() {
    // Each dead frame is separated from the next by a live one, so none merge.
    let stack = BufferStack::new(1024, 1).unwrap();
    let start = next_address(&stack);
    let bottom = stack.push_frame(8, 8).unwrap();
    let mut live = Vec::new();
    let mut dead = Vec::new();
    for _ in 0..20 {
        dead.push(stack.push_frame(8, 8).unwrap());
        live.push(stack.push_frame(8, 8).unwrap());
    }
    let top = stack.push_frame(8, 8).unwrap();
    let top_address = top.allocate(8, 8).unwrap().address();
    for frame in dead.drain(..) {
        drop(frame);
    }
    // Live frames keep their memory: a new frame goes above everything.
    let probe = stack.push_frame(8, 8).unwrap();
    assert_eq!(probe.allocate(8, 8).unwrap().address(), top_address + 8);
    probe.close().unwrap();
    top.close().unwrap();
    // Drop the live ones in push order (each out of order but the last): all merge and go.
    for frame in live.drain(..) {
        drop(frame);
    }
    bottom.close().unwrap();
    assert_eq!(next_address(&stack), start);
}

#[test]
fn bounds() {
    let stack = new_stack();
    let frame = stack.push_frame(8, 1).unwrap();
    let segment = frame.allocate(8, 1).unwrap();
    assert!(matches!(
        frame.allocate(1, 1),
        Err(Error::AllocatorExhausted { requested: 1, .. })
    ));
    assert!(matches!(
        segment.get::<u8>(8),
        Err(Error::OutOfBounds { offset: 8, .. })
    ));
    frame.close().unwrap();

    let frame = stack.push_frame(8, 1).unwrap();
    assert!(matches!(
        frame.allocate(9, 1),
        Err(Error::AllocatorExhausted {
            requested: 9,
            capacity: 8,
            ..
        })
    ));
    // allocate_from goes through the frame (JDK `noInit`).
    assert_eq!(frame.allocate_from(1i32).unwrap().get::<i32>(0).unwrap(), 1);
    frame.close().unwrap();

    // Fallback frames have the same bounds.
    let huge = stack.push_frame(100, 1).unwrap();
    assert!(huge.is_fallback());
    assert!(huge.allocate(100, 1).is_ok());
    assert!(matches!(
        huge.allocate(1, 1),
        Err(Error::AllocatorExhausted { .. })
    ));
    huge.close().unwrap();
}

#[test]
fn allocation_same_as_pool_size() {
    let stack = new_stack();
    let int = MemoryLayout::from(ValueLayout::I32);
    let frame = stack.push_frame_layout(&int).unwrap();
    let address = frame.allocate_layout(&int).unwrap().address();
    frame.close().unwrap();
    let pair = MemoryLayout::sequence_layout(2, ValueLayout::I32).unwrap();
    for _ in 0..10 {
        let frame = stack.push_frame_layout(&pair).unwrap();
        assert_eq!(frame.allocate_layout(&int).unwrap().address(), address);
        assert_eq!(frame.allocate_layout(&int).unwrap().address(), address + 4);
        assert!(matches!(
            frame.allocate_layout(&int),
            Err(Error::AllocatorExhausted { .. })
        ));
        frame.close().unwrap();
    }
}

/// The JDK's `testDeepStack` without the upcall: each level takes a 48-byte frame (a 24-byte
/// return buffer and a 24-byte copy of `{double x, y, z}`), the result is `{2,1,0} + depth`.
fn recurse(stack: &BufferStack, depth: u32, fallbacks: &mut Vec<bool>) -> (f64, f64, f64) {
    let frame = stack.push_frame(48, 8).unwrap();
    fallbacks.push(frame.is_fallback());
    let ret = frame.allocate(24, 8).unwrap();
    let copy = frame.allocate(24, 8).unwrap();
    let (x, y, z) = if depth == 0 {
        (2.0, 1.0, 0.0)
    } else {
        recurse(stack, depth - 1, fallbacks)
    };
    copy.set(0, x).unwrap();
    copy.set(8, y).unwrap();
    copy.set(16, z).unwrap();
    for i in 0..3 {
        let v: f64 = copy.get(i * 8).unwrap();
        ret.set(i * 8, v + if depth == 0 { 0.0 } else { 1.0 })
            .unwrap();
    }
    let result = (
        ret.get(0).unwrap(),
        ret.get(8).unwrap(),
        ret.get(16).unwrap(),
    );
    frame.close().unwrap();
    result
}

#[test]
fn deep_stack() {
    let stack = BufferStack::new(256, 1).unwrap();
    let start = next_address(&stack);
    let mut fallbacks = Vec::new();
    assert_eq!(recurse(&stack, 10, &mut fallbacks), (12.0, 11.0, 10.0));
    // 5 x 48 = 240 bytes fit in 256; levels 6 to 11 fall back while the outer five stay.
    assert_eq!(fallbacks.iter().filter(|&&f| !f).count(), 5);
    assert!(fallbacks[..5].iter().all(|&f| !f));
    assert!(fallbacks[5..].iter().all(|&f| f));
    assert_eq!(
        next_address(&stack),
        start,
        "the stack is reused once fallbacks close"
    );
}

#[test]
fn display_equality_and_layout() {
    let stack = new_stack();
    assert_eq!(
        stack.to_string(),
        "BufferStack[byte_size=64, byte_alignment=1]"
    );
    assert_eq!(
        format!("{stack:?}"),
        "BufferStack[byte_size=64, byte_alignment=1]"
    );
    let other = new_stack();
    assert!(stack == stack);
    assert!(stack != other);
    let stack = BufferStack::for_layout(&ValueLayout::F64.into()).unwrap();
    assert_eq!((stack.byte_size(), stack.byte_alignment()), (8, 8));
    let frame = stack.push_frame(8, 8).unwrap();
    assert!(format!("{frame:?}").contains("byte_size: 8"));
    assert_eq!(frame.byte_size(), 8);
    frame.close().unwrap();
}

#[test]
fn empty_stack_and_empty_frames() {
    let stack = BufferStack::new(0, 1).unwrap();
    let empty = stack.push_frame(0, 8).unwrap();
    assert!(!empty.is_fallback());
    let one = stack.push_frame(1, 1).unwrap();
    assert!(one.is_fallback());
    one.allocate(1, 1).unwrap().set(0, 1u8).unwrap();
    one.close().unwrap();
    empty.close().unwrap();

    // An empty child shares its parent's end offset (the JDK's ambiguity): the parent's close
    // succeeds, and the empty child, which owns no bytes, can no longer close.
    let stack = new_stack();
    let start = next_address(&stack);
    let parent = stack.push_frame(8, 8).unwrap();
    let child = stack.push_frame(0, 1).unwrap();
    parent.close().unwrap();
    assert_eq!(child.close().unwrap_err(), Error::FrameNotTopOfStack);
    assert_eq!(next_address(&stack), start);
}

#[test]
fn blocks_are_freed_at_thread_exit() {
    let stack = new_stack();
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    let frame = stack.push_frame(8, 8).unwrap();
                    assert!(!frame.is_fallback());
                    frame.close().unwrap();
                })
            })
            .collect();
        // An explicit join waits for thread-local destructors; the scope's own wait does not.
        for thread in threads {
            thread.join().unwrap();
        }
    });
    assert_eq!(stack.thread_blocks(), 0);
    next_address(&stack);
    assert_eq!(stack.thread_blocks(), 1);
}

#[test]
fn dropping_a_stack_frees_blocks() {
    let first = new_stack();
    next_address(&first);
    assert_eq!(first.thread_blocks(), 1);
    let shared = Arc::clone(&first.shared);
    drop(first);
    assert_eq!(
        shared.blocks.load(Ordering::Relaxed),
        0,
        "this thread's block"
    );

    // Another thread's block goes on its next lookup of another stack.
    let (to_worker, from_main) = std::sync::mpsc::channel::<Option<Arc<BufferStack>>>();
    let (to_main, from_worker) = std::sync::mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        while let Ok(Some(stack)) = from_main.recv() {
            next_address(&stack);
            drop(stack);
            to_main.send(()).unwrap();
        }
    });
    let second = Arc::new(new_stack());
    let shared = Arc::clone(&second.shared);
    to_worker.send(Some(Arc::clone(&second))).unwrap();
    from_worker.recv().unwrap();
    assert_eq!(shared.blocks.load(Ordering::Relaxed), 1);
    drop(second); // the last handle: dropped here, the worker's block stays for now
    assert_eq!(shared.blocks.load(Ordering::Relaxed), 1);
    to_worker.send(Some(Arc::new(new_stack()))).unwrap();
    from_worker.recv().unwrap();
    assert_eq!(shared.blocks.load(Ordering::Relaxed), 0);
    to_worker.send(None).unwrap();
    worker.join().unwrap();
}

/// A stack of its own for the teardown test, so its block count is not disturbed by others.
fn teardown_stack() -> &'static BufferStack {
    static STACK: OnceLock<BufferStack> = OnceLock::new();
    STACK.get_or_init(|| BufferStack::new(64, 1).unwrap())
}

static LATE_PUSH_WAS_FALLBACK: AtomicBool = AtomicBool::new(false);

thread_local! {
    static KEEP: std::cell::RefCell<Option<Frame<'static>>> =
        const { std::cell::RefCell::new(None) };
    static LATE: Late = const { Late };
}

struct Late;
impl Drop for Late {
    fn drop(&mut self) {
        // Runs during thread-local teardown, after the BufferStack cache is gone.
        let frame = teardown_stack().push_frame(16, 8).unwrap();
        LATE_PUSH_WAS_FALLBACK.store(frame.is_fallback(), Ordering::Relaxed);
        let segment = frame.allocate(16, 8).unwrap();
        segment.set(8, 5u64).unwrap();
        assert_eq!(segment.get::<u64>(8).unwrap(), 5);
        frame.close().unwrap();
    }
}

#[test]
fn thread_local_teardown_is_safe() {
    std::thread::spawn(|| {
        // Registered before the cache, so destroyed after it (destructors run in reverse
        // order of registration).
        LATE.with(|_| {});
        KEEP.with(|_| {});
        let frame = teardown_stack().push_frame(16, 8).unwrap();
        assert!(!frame.is_fallback());
        frame.allocate(16, 8).unwrap().set(0, 42u64).unwrap();
        // A frame that outlives the thread cache: its block must stay alive until the frame
        // is dropped, then be freed (Miri checks there is no use after free).
        KEEP.with(|keep| *keep.borrow_mut() = Some(frame));
    })
    .join()
    .unwrap();
    // The order std runs thread-local destructors in is the platform's: on Linux the reverse of
    // registration, so LATE's push comes after the cache is gone. On x86_64-pc-windows-gnu
    // (seen under Wine) LATE runs while the cache still exists, and its push is an ordinary one.
    #[cfg(unix)]
    assert!(
        LATE_PUSH_WAS_FALLBACK.load(Ordering::Relaxed),
        "a push after the cache is destroyed falls back to the heap"
    );
    assert_eq!(
        teardown_stack().thread_blocks(),
        0,
        "the orphaned block was freed"
    );
}

#[test]
fn linker_stack_size() {
    let stack = linker_stack();
    assert!(std::ptr::eq(stack, linker_stack()));
    assert_eq!(stack.byte_alignment(), 1);
    let expected =
        parse_linker_stack_size(std::env::var_os(LINKER_STACK_SIZE_ENV).as_deref()).unwrap_or(256);
    assert_eq!(stack.byte_size(), expected);

    assert_eq!(parse_linker_stack_size(None), Ok(DEFAULT_LINKER_STACK_SIZE));
    assert_eq!(parse_linker_stack_size(Some(OsStr::new("512"))), Ok(512));
    assert_eq!(parse_linker_stack_size(Some(OsStr::new(" 64\n"))), Ok(64));
    assert_eq!(parse_linker_stack_size(Some(OsStr::new("0"))), Ok(0));
    for bad in ["", "-1", "abc", "1k", "99999999999999999999999"] {
        let message = parse_linker_stack_size(Some(OsStr::new(bad))).unwrap_err();
        assert!(message.contains(LINKER_STACK_SIZE_ENV), "{message}");
    }
    let huge = (isize::MAX as usize + 1).to_string();
    assert!(parse_linker_stack_size(Some(OsStr::new(&huge))).is_err());
}
