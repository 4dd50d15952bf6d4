//! Code placed and run on x86-64 Linux: the arena's chunks, own mappings and their placement
//! near gatun's text (the allocator's own tests, on every system with an arena, are in the
//! `arena` module).

use super::unix::{map_near_text, map_own, page_size, unmap_near_text, Own, NEAR};
use super::{Backing, ExecutableCode, GRANULE};
use crate::error::Error;

/// The `/proc/self/maps` line of the mapping holding `addr`.
fn maps_line(addr: usize) -> String {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines()
        .find(|l| {
            let (range, _) = l.split_once(' ').unwrap();
            let (s, e) = range.split_once('-').unwrap();
            let (s, e) = (
                usize::from_str_radix(s, 16).unwrap(),
                usize::from_str_radix(e, 16).unwrap(),
            );
            (s..e).contains(&addr)
        })
        .unwrap()
        .to_owned()
}

#[test]
fn own_mapping_runs_and_ends_read_execute() {
    // mov eax, 9 ; ret
    let code = map_own(&[0xB8, 9, 0, 0, 0, 0xC3]).unwrap();
    assert!(matches!(code.backing, Backing::Own(Own { map_len }) if map_len == page_size()));
    // SAFETY: the bytes are a complete `extern "C" fn() -> i32`.
    let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(code.entry()) };
    assert_eq!(f(), 9);
    let line = maps_line(code.entry() as usize);
    assert!(line.contains(" r-xp "), "{line}");
}

#[test]
fn runs_generated_code() {
    // mov eax, 42 ; ret
    // SAFETY: a complete function, called as one below.
    let code = unsafe { ExecutableCode::new(&[0xB8, 42, 0, 0, 0, 0xC3]) }.unwrap();
    // SAFETY: the bytes are a complete `extern "C" fn() -> i32`.
    let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(code.entry()) };
    assert_eq!(f(), 42);
    assert_eq!(code.len(), 6);
    assert_eq!(code.bytes(), vec![0xB8, 42, 0, 0, 0, 0xC3]);
    assert_eq!(code.entry() as usize % GRANULE, 0);
}

#[test]
fn mapping_is_not_writable() {
    // SAFETY: `ret`.
    let code = unsafe { ExecutableCode::new(&[0xC3]) }.unwrap();
    let line = maps_line(code.entry() as usize);
    assert!(line.contains(" r-xs ") || line.contains(" r-xp "), "{line}");
}

#[test]
fn map_unmap_cycles_stay_near_text() {
    let anchor = map_near_text as *const () as usize;
    // 8 MiB ranges are given back for reuse; 40 MiB ones (10,240 pages) are not, so their
    // walk leaves the 2 GiB window after ~50 cycles and must restart from the top
    for (len, cycles) in [(8usize << 20, 1000), (40 << 20, 200)] {
        for i in 0..cycles {
            let p = map_near_text(
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
            );
            assert_ne!(p, libc::MAP_FAILED);
            assert!(
                (p as usize).abs_diff(anchor) < NEAR,
                "cycle {i} of {len} bytes: {p:?} is far from {anchor:#x}"
            );
            // SAFETY: the mapping just made, referred to by nothing.
            unsafe { unmap_near_text(p.cast(), len) };
        }
    }
}

#[test]
fn empty_code_is_an_error() {
    assert!(matches!(
        // SAFETY: empty: rejected before anything is mapped.
        unsafe { ExecutableCode::new(&[]) },
        Err(Error::InvalidSize { size: 0, .. })
    ));
}
