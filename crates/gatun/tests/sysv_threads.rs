//! One DowncallHandle called from 8 threads at once with different arguments.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use common::*;
use gatun::linker::{capture_state_layout, FunctionDescriptor as FD, LinkerOption};
use gatun::memory::PrefixAllocator;
use gatun::memory::{Arena, SegmentAllocator};
use gatun::Value;

#[test]
fn one_handle_eight_threads() {
    let id = st([V::I32, V::F64]);
    let make = link("sysv_id_make", &FD::of(&id, [V::I32, V::F64]));
    let errno = link_with(
        "sysv_set_errno",
        &FD::of(V::I32, [V::I32, V::I32]),
        &[LinkerOption::CaptureCallState(&["errno"])],
    );
    let barrier = std::sync::Barrier::new(8);
    std::thread::scope(|s| {
        for t in 0..8i32 {
            let (make, errno, barrier) = (&make, &errno, &barrier);
            s.spawn(move || {
                let arena = Arena::confined();
                // errno at 0 of 4 bytes on Linux, at 8 of 12 on Windows
                let cap = arena.allocate_layout(&capture_state_layout()).unwrap();
                let at = capture_state_layout().byte_offset_of("errno").unwrap();
                let out = arena.allocate(16, 8).unwrap();
                barrier.wait();
                for k in 0..20_000i32 {
                    let x = t * 1_000_000 + k;
                    // SAFETY: arguments of the C types.
                    unsafe {
                        make.invoke_into(
                            &PrefixAllocator::new(out),
                            &[Value::I32(x), Value::F64(x as f64 * 0.5)],
                        )
                        .unwrap();
                        assert_eq!(out.get::<i32>(0).unwrap(), x);
                        assert_eq!(out.get::<f64>(8).unwrap(), x as f64 * 0.5);
                        let e = 1 + (x % 100);
                        let v = errno
                            .invoke(&[Value::Segment(cap), Value::I32(e), Value::I32(x)])
                            .unwrap();
                        assert_eq!(v, Value::I32(x));
                        assert_eq!(
                            cap.get::<i32>(at).unwrap(),
                            e,
                            "thread {t} saw another errno"
                        );
                    }
                }
            });
        }
    });
}
