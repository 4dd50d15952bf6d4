//! How own mappings are made on each Unix target (pure data, every Unix host).

use super::*;

#[test]
fn apple_targets_map_jit_and_toggle_on_arm64_only() {
    assert_eq!(
        OwnMapping::for_target(true, true, None),
        OwnMapping::Jit { toggle: true }
    );
    for major in [18, 19, 24, 25] {
        assert_eq!(
            OwnMapping::for_target(true, false, Some(major)),
            OwnMapping::Jit { toggle: false }
        );
    }
    // x86-64 Macs before 10.14 (Darwin 18), or of unknown version: no MAP_JIT
    for major in [None, Some(16), Some(17)] {
        assert_eq!(
            OwnMapping::for_target(true, false, major),
            OwnMapping::WriteThenProtect
        );
    }
    for aarch64 in [false, true] {
        for major in [None, Some(5), Some(24)] {
            assert_eq!(
                OwnMapping::for_target(false, aarch64, major),
                OwnMapping::WriteThenProtect
            );
        }
    }
    if cfg!(target_os = "linux") {
        assert_eq!(OwnMapping::native(), OwnMapping::WriteThenProtect);
    }
}

#[test]
fn darwin_major_reads_the_leading_number_only() {
    assert_eq!(darwin_major(b"18.7.0"), Some(18));
    assert_eq!(darwin_major(b"24.1.0"), Some(24));
    assert_eq!(darwin_major(b"9"), Some(9));
    assert_eq!(darwin_major(b"0009.1"), Some(9));
    for bad in [
        &b""[..],
        b".1",
        b"x18",
        b"18x",
        b"18-rc",
        b"12345.0",
        b" 18.0",
    ] {
        assert_eq!(
            darwin_major(bad),
            None,
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn write_then_protect_is_never_writable_and_executable() {
    let way = OwnMapping::WriteThenProtect;
    assert_eq!(way.map_prot(), libc::PROT_READ | libc::PROT_WRITE);
    assert_eq!(way.map_flags(), libc::MAP_PRIVATE | libc::MAP_ANONYMOUS);
    assert_eq!(way.final_prot(), Some(libc::PROT_READ | libc::PROT_EXEC));
}

#[test]
fn jit_maps_private_anonymous_rwx_with_map_jit_and_no_protection_change() {
    for toggle in [false, true] {
        let way = OwnMapping::Jit { toggle };
        assert_eq!(
            way.map_prot(),
            libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC
        );
        assert_eq!(
            way.map_flags(),
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | APPLE_MAP_JIT
        );
        assert_eq!(way.map_flags() & libc::MAP_SHARED, 0);
        assert_eq!(way.final_prot(), None);
    }
    assert_eq!(APPLE_MAP_JIT, 0x0800);
}
