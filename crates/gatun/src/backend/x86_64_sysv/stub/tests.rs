//! Disassembly tests of generated stubs (iced-x86 decoder): the instructions the stub compiler
//! emits for a few signatures, and that random plans decode into valid instructions only.

use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};

use super::*;
use crate::abi::sysv::plan;
use crate::layout::FunctionDescriptor as FD;
use crate::layout::ScalarKind;
use crate::layout::{MemoryLayout, ValueLayout as V};
use crate::value::{value_tag, Value};

fn disasm(bytes: &[u8]) -> Vec<String> {
    let mut d = Decoder::with_ip(64, bytes, 0, DecoderOptions::NONE);
    let mut f = IntelFormatter::new();
    f.options_mut().set_space_after_operand_separator(true);
    f.options_mut().set_hex_prefix("0x");
    f.options_mut().set_hex_suffix("");
    f.options_mut().set_uppercase_hex(false);
    f.options_mut().set_small_hex_numbers_in_decimal(false);
    f.options_mut()
        .set_memory_size_options(iced_x86::MemorySizeOptions::Always);
    let mut out = Vec::new();
    while d.can_decode() {
        let i = d.decode();
        assert!(
            !i.is_invalid(),
            "invalid instruction at {:#x} in {bytes:02x?}",
            i.ip()
        );
        let mut s = String::new();
        f.format(&i, &mut s);
        out.push(s);
    }
    out
}

fn checks(d: &FD) -> Vec<ArgCheck> {
    d.argument_layouts()
        .iter()
        .map(|l| match l {
            MemoryLayout::Value(v) => ArgCheck::Scalar(v.kind()),
            g => ArgCheck::Group(g.byte_size() as u32),
        })
        .collect()
}

/// The raw and value entries of a stub, disassembled (int3 padding dropped).
fn entries(d: &FD, fv: Option<usize>, capture: bool) -> (Vec<String>, Vec<String>) {
    let p = plan(d, fv).unwrap();
    let code = compile(&p, &checks(d), capture);
    let raw = disasm(&code.bytes[..code.value_entry])
        .into_iter()
        .filter(|s| s != "int3")
        .collect();
    let end = code
        .image_entry
        .or(code.slots_entry)
        .unwrap_or(code.bytes.len());
    let val = disasm(&code.bytes[code.value_entry..end])
        .into_iter()
        .filter(|s| s != "int3")
        .collect();
    (raw, val)
}

#[test]
fn register_struct_returns_get_an_image_entry() {
    // `struct { long a; double b; } f(int, const void *)`: INTEGER+SSE in rax:xmm0. The image
    // entry is the value entry's checks and the tail body: the caller gets the target's
    // registers back and stores the struct itself (backend::x86_64_sysv::image).
    let ld = MemoryLayout::c_struct([V::I64, V::F64]).unwrap();
    let d = FD::of(ld, [V::I32, V::ADDRESS]);
    let p = plan(&d, None).unwrap();
    let code = compile(&p, &checks(&d), false);
    let image = disasm(&code.bytes[code.image_entry.expect("image entry")..]);
    let ti = scalar_tag(ScalarKind::I32);
    let tp = scalar_tag(ScalarKind::Pointer);
    let b: Vec<&str> = image.iter().map(String::as_str).collect();
    assert_eq!(b[0], format!("cmp byte ptr [rdi], 0x{ti:x}"));
    assert!(b[1].starts_with("jne "), "{b:?}");
    assert_eq!(b[2], format!("cmp byte ptr [rdi+0x18], 0x{tp:x}"));
    assert!(b[3].starts_with("jne "), "{b:?}");
    assert_eq!(
        &b[4..],
        [
            "mov r11, rcx",
            "mov rsi, qword ptr [rdi+0x20]",
            "movsxd rdi, dword ptr [rdi+0x8]",
            "jmp r11",
            "or r12, 0xffffffffffffffff",
            "ret",
        ]
    );
    // the value entry keeps the leaf frame that stores through `ret`
    let (_, val) = entries(&d, None, false);
    assert!(val.iter().any(|i| i == "call qword ptr [rsp]"), "{val:?}");
    // no image entry: MEMORY-class returns, capture, stack arguments
    let big = MemoryLayout::c_struct([V::I64, V::I64, V::I64]).unwrap();
    let no_image = [
        (FD::of(big, [V::I32]), false),
        (
            FD::of(MemoryLayout::c_struct([V::F64, V::F64]).unwrap(), [V::I32]),
            true,
        ),
        (
            FD::of(
                MemoryLayout::c_struct([V::F64, V::F64]).unwrap(),
                [V::I64; 7],
            ),
            false,
        ),
        (FD::of(V::I64, [V::I64]), false),
    ];
    for (d, capture) in no_image {
        let p = plan(&d, None).unwrap();
        assert_eq!(compile(&p, &checks(&d), capture).image_entry, None, "{d}");
    }
}

#[test]
fn integer_signature_tail_jumps() {
    // no capture, no stack arguments, integer return: no frame at all; the target returns
    // straight to the stub's caller; rdi (the args pointer) is loaded last
    let (raw, _) = entries(
        &FD::of(V::I32, [V::I32, V::I16, V::U8, V::I64]),
        None,
        false,
    );
    assert_eq!(
        raw,
        [
            "mov r11, rcx",
            "mov r10, qword ptr [rdi+0x8]",
            "movsx rsi, word ptr [r10]",
            "mov r10, qword ptr [rdi+0x10]",
            "movzx edx, byte ptr [r10]",
            "mov r10, qword ptr [rdi+0x18]",
            "mov rcx, qword ptr [r10]",
            "mov r10, qword ptr [rdi]",
            "movsxd rdi, dword ptr [r10]",
            "jmp r11",
        ]
    );
}

#[test]
fn slots_entry_reads_untagged_slots_without_checks() {
    // the value entry's body with argument i at [rdi + 8i] and no checks; a float result
    // tail-jumps (its callers read xmm0)
    let d = FD::of(V::F64, [V::F64, V::F32, V::I32]);
    let p = plan(&d, None).unwrap();
    let code = compile(&p, &checks(&d), false);
    let at = code
        .slots_entry
        .expect("a scalar signature has a slots entry");
    let body: Vec<String> = disasm(&code.bytes[at..])
        .into_iter()
        .filter(|s| s != "int3")
        .collect();
    assert_eq!(
        body,
        [
            "mov r11, rcx",
            "movq xmm0, qword ptr [rdi]",
            "movd xmm1, dword ptr [rdi+0x8]",
            "movsxd rdi, dword ptr [rdi+0x10]",
            "jmp r11",
        ]
    );
    // stack arguments: the leaf frame, reading the slots
    let d = FD::of(V::I64, [V::I64; 8]);
    let p = plan(&d, None).unwrap();
    let code = compile(&p, &checks(&d), false);
    let body = disasm(&code.bytes[code.slots_entry.unwrap()..]).join("; ");
    assert!(body.contains("qword ptr [rdi+0x38]"), "{body}");
    assert!(!body.contains("cmp byte ptr"), "{body}");
    // none with capture, variadic, a struct argument or a struct return
    let st = MemoryLayout::c_struct([MemoryLayout::from(V::I64)]).unwrap();
    for (d, fv, capture) in [
        (FD::of(V::I32, [V::I32]), None, true),
        (FD::of(V::I32, [V::I32, V::I32]), Some(1), false),
        (FD::of(V::I32, [st.clone()]), None, false),
        (FD::of(st.clone(), [V::I32]), None, false),
    ] {
        let p = plan(&d, fv).unwrap();
        assert_eq!(compile(&p, &checks(&d), capture).slots_entry, None, "{d}");
    }
}

#[test]
fn value_entry_checks_first_then_tail_jumps_for_a_float_result() {
    // a float result: the value entry tail-jumps (its callers read xmm0, see `entry`); the
    // raw entry keeps the leaf frame with `movq rax, xmm0` after the call
    let d = FD::of(V::F64, [V::F64, V::F32, V::I32]);
    let (raw, val) = entries(&d, None, false);
    let t64 = scalar_tag(ScalarKind::F64);
    let t32 = scalar_tag(ScalarKind::F32);
    let ti = scalar_tag(ScalarKind::I32);
    let b: Vec<&str> = val.iter().map(String::as_str).collect();
    assert_eq!(b[0], format!("cmp byte ptr [rdi], 0x{t64:x}"));
    assert!(b[1].starts_with("jne "), "{b:?}");
    assert_eq!(b[2], format!("cmp byte ptr [rdi+0x18], 0x{t32:x}"));
    assert!(b[3].starts_with("jne "));
    assert_eq!(b[4], format!("cmp byte ptr [rdi+0x30], 0x{ti:x}"));
    assert!(b[5].starts_with("jne "));
    assert_eq!(
        &b[6..],
        [
            "mov r11, rcx",
            "movq xmm0, qword ptr [rdi+0x8]",
            "movd xmm1, dword ptr [rdi+0x20]",
            "movsxd rdi, dword ptr [rdi+0x38]",
            "jmp r11",
            // the rejection path (see `entry`): r12 = all ones, nothing called
            "or r12, 0xffffffffffffffff",
            "ret",
        ]
    );
    assert_eq!(raw[0], "sub rsp, 0x8");
    assert!(raw.iter().any(|i| i == "call qword ptr [rsp]"), "{raw:?}");
    assert!(raw.iter().any(|i| i == "movq rax, xmm0"), "{raw:?}");
}

#[test]
fn stack_arguments_use_the_leaf_frame() {
    // a 7th integer goes on the stack: a 16-byte aligned frame with the target in it
    let d = FD::of(V::I64, [V::I64; 7]);
    let (raw, _) = entries(&d, None, false);
    assert_eq!(
        &raw[..2],
        ["sub rsp, 0x18", "mov qword ptr [rsp+0x10], rcx"]
    );
    assert_eq!(
        &raw[raw.len() - 8..],
        [
            "mov r10, qword ptr [rdi+0x30]",
            "mov r11, qword ptr [r10]",
            "mov qword ptr [rsp], r11",
            "mov r10, qword ptr [rdi]",
            "mov rdi, qword ptr [r10]",
            "call qword ptr [rsp+0x10]",
            "add rsp, 0x18",
            "ret",
        ]
    );
}

#[test]
fn variadic_call_sets_al_and_promotes_float() {
    // printf-like: (ptr, ...) called with (float, double) → cvtss2sd, %al = 2
    let d = FD::of(V::I32, [V::ADDRESS, V::F32, V::F64]);
    let (raw, _) = entries(&d, Some(1), false);
    assert_eq!(
        &raw[1..],
        [
            "mov r10, qword ptr [rdi+0x8]",
            "cvtss2sd xmm0, dword ptr [r10]",
            "mov r10, qword ptr [rdi+0x10]",
            "movq xmm1, qword ptr [r10]",
            "mov r10, qword ptr [rdi]",
            "mov rdi, qword ptr [r10]",
            "mov eax, 0x2",
            "jmp r11",
        ]
    );
}

#[test]
fn capture_restores_before_and_saves_after() {
    // capture: the leaf frame plus slots for the capture buffer and errno's address (r9, passed
    // by the caller: no call into libc)
    let d = FD::of(V::I32, [V::I32]);
    let (raw, _) = entries(&d, None, true);
    assert_eq!(
        raw,
        [
            "sub rsp, 0x18",
            "mov qword ptr [rsp], rcx",
            "mov qword ptr [rsp+0x8], rdx",
            "mov qword ptr [rsp+0x10], r9",
            // restore before (only register and stack moves follow until the call)
            "mov r11d, dword ptr [rdx]",
            "mov dword ptr [r9], r11d",
            "mov r10, qword ptr [rdi]",
            "movsxd rdi, dword ptr [r10]",
            "call qword ptr [rsp]",
            // save after, right after the call
            "mov r10, qword ptr [rsp+0x10]",
            "mov r11d, dword ptr [r10]",
            "mov r10, qword ptr [rsp+0x8]",
            "mov dword ptr [r10], r11d",
            "add rsp, 0x18",
            "ret",
        ]
    );
}

#[test]
fn struct_returns_and_stack_arguments() {
    // {double, double} returned in xmm0:xmm1, stored through `ret` (saved in the leaf frame)
    let pt = MemoryLayout::c_struct([V::F64, V::F64]).unwrap();
    let (raw, _) = entries(&FD::of(pt, []), None, false);
    assert_eq!(
        raw,
        [
            "sub rsp, 0x18",
            "mov qword ptr [rsp], rcx",
            "mov qword ptr [rsp+0x8], rsi",
            "call qword ptr [rsp]",
            "mov r10, qword ptr [rsp+0x8]",
            "movq qword ptr [r10], xmm0",
            "movq qword ptr [r10+0x8], xmm1",
            "add rsp, 0x18",
            "ret",
        ]
    );
    // a 24-byte struct (4 bytes of tail padding, moved as 3 × 8 bytes): returned in memory
    // (hidden pointer in rdi) and passed on the stack (24 bytes, area rounded to 32)
    let big = MemoryLayout::c_struct([V::I64, V::I64, V::I32]).unwrap();
    let (raw, _) = entries(&FD::of(big.clone(), [big]), None, false);
    assert_eq!(
        raw,
        [
            "sub rsp, 0x38",
            "mov qword ptr [rsp+0x20], rcx",
            "mov qword ptr [rsp+0x28], rsi",
            "mov r10, qword ptr [rdi]",
            "mov r11, qword ptr [r10]",
            "mov qword ptr [rsp], r11",
            "mov r11, qword ptr [r10+0x8]",
            "mov qword ptr [rsp+0x8], r11",
            "mov r11, qword ptr [r10+0x10]",
            "mov qword ptr [rsp+0x10], r11",
            "mov rdi, qword ptr [rsp+0x28]",
            "call qword ptr [rsp+0x20]",
            "add rsp, 0x38",
            "ret",
        ]
    );
    // {i8 x 3} (3 bytes): loaded as 2 + 1 bytes, returned in rax and stored as 2 + 1 bytes
    let odd = MemoryLayout::c_struct([V::I8, V::I8, V::I8]).unwrap();
    let (raw, _) = entries(&FD::of(odd.clone(), [odd.clone()]), None, false);
    assert_eq!(
        &raw[3..],
        [
            "mov r10, qword ptr [rdi]",
            "movzx edi, word ptr [r10]",
            "movzx eax, byte ptr [r10+0x2]",
            "shl rax, 0x10",
            "or rdi, rax",
            "call qword ptr [rsp]",
            "mov r10, qword ptr [rsp+0x8]",
            "mov r11, rax",
            "mov word ptr [r10], r11w",
            "shr r11, 0x10",
            "mov byte ptr [r10+0x2], r11b",
            "add rsp, 0x18",
            "ret",
        ]
    );
    // with capture the same struct return is stored through `ret` reloaded from its slot
    let (raw, _) = entries(&FD::of(odd.clone(), [odd]), None, true);
    let n = raw.len();
    assert_eq!(
        &raw[n - 8..],
        [
            "mov dword ptr [r10], r11d",
            "mov r10, qword ptr [rsp+0x8]",
            "mov r11, rax",
            "mov word ptr [r10], r11w",
            "shr r11, 0x10",
            "mov byte ptr [r10+0x2], r11b",
            "add rsp, 0x28",
            "ret",
        ]
    );
}

#[test]
fn random_plans_decode_to_valid_instructions() {
    // every scalar kind in every register class and on the stack, structs of odd sizes
    let mut layouts: Vec<MemoryLayout> =
        ScalarKind::ALL.iter().map(|&k| V::new(k).into()).collect();
    for n in 1..=15usize {
        layouts.push(MemoryLayout::sequence_layout(n, V::U8).unwrap());
    }
    let layouts: Vec<MemoryLayout> = layouts
        .into_iter()
        .map(|l| match l {
            MemoryLayout::Sequence(_) => MemoryLayout::c_struct([l]).unwrap(),
            l => l,
        })
        .collect();
    for (i, ret) in layouts.iter().enumerate() {
        let args: Vec<MemoryLayout> = (0..16)
            .map(|k| layouts[(i * 7 + k * 5) % layouts.len()].clone())
            .collect();
        let d = FD::of(ret.clone(), args);
        for (fv, capture) in [(None, false), (Some(3), true)] {
            let _ = entries(&d, fv, capture);
        }
    }
}

#[test]
fn identical_signatures_share_one_stub() {
    let d = FD::of(
        V::I64,
        [V::I64, V::F64, V::I8, V::U16, V::F32, V::I64, V::I64],
    );
    let p = plan(&d, None).unwrap();
    let c = checks(&d);
    let a = stub_for(&p, &c, false).unwrap();
    let b = stub_for(&p, &c, false).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    let with_capture = stub_for(&p, &c, true).unwrap();
    assert!(!Arc::ptr_eq(&a, &with_capture));
    assert!(cached_stubs() >= 2);
    assert_eq!(a.bytes(), compile(&p, &c, false).bytes);
}

#[test]
fn value_layout_is_what_the_stub_reads() {
    let v = [Value::I32(-2), Value::F64(1.5), Value::Bool(true)];
    // SAFETY: reading the bytes of initialised `Value`s (payload bytes that are part of the
    // variant's field).
    unsafe {
        let p = v.as_ptr().cast::<u8>();
        assert_eq!(*p, scalar_tag(ScalarKind::I32));
        assert_eq!(p.add(8).cast::<i32>().read_unaligned(), -2);
        let q = p.add(VALUE_STRIDE as usize);
        assert_eq!(q.add(8).cast::<f64>().read_unaligned(), 1.5);
        assert_eq!(*p.add(2 * VALUE_STRIDE as usize + 8), 1);
    }
    let mut buf = [0u8; 5];
    let s = crate::memory::MemorySegment::of_slice(&mut buf);
    let sv = Value::Segment(s);
    // SAFETY: as above.
    unsafe {
        let p = (&sv as *const Value<'_>).cast::<u8>().add(8);
        assert_eq!(
            p.add(crate::memory::MemorySegment::PTR_OFFSET)
                .cast::<usize>()
                .read_unaligned(),
            s.address()
        );
        assert_eq!(
            p.add(crate::memory::MemorySegment::LEN_OFFSET)
                .cast::<usize>()
                .read_unaligned(),
            5
        );
    }
    assert_eq!(value_tag(&sv), segment_tag());
}

#[test]
fn a_stub_is_freed_with_its_last_user_and_relinked_afresh() {
    // a signature no other test uses
    let d = FD::of(V::I16, [V::U8, V::I16, V::U8, V::F32, V::U8, V::U16, V::I8]);
    let p = plan(&d, None).unwrap();
    let c = checks(&d);
    let a = stub_for(&p, &c, false).unwrap();
    let b = stub_for(&p, &c, false).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    let weak = Arc::downgrade(&a);
    drop(a);
    assert!(weak.upgrade().is_some(), "still used by b");
    drop(b);
    assert!(weak.upgrade().is_none(), "freed with its last user");
    // the dead entry is gone: a new link compiles a new, working stub
    let again = stub_for(&p, &c, false).unwrap();
    assert_eq!(again.bytes(), compile(&p, &c, false).bytes);
    assert_eq!(Arc::strong_count(&again), 1);
}

#[test]
fn fork_while_another_thread_holds_the_cache_lock_does_not_deadlock_the_child() {
    // a signature no other test uses; the child drops the stub, which takes the cache lock
    let d = FD::of(V::U16, [V::I8, V::F64, V::U8, V::I16, V::F32, V::U8, V::I8]);
    let p = plan(&d, None).unwrap();
    let c = checks(&d);
    let stub = stub_for(&p, &c, false).unwrap();
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let holder = std::thread::spawn(move || {
        let g = crate::code::stub_cache::lock_for_fork();
        locked_tx.send(()).unwrap();
        // hold it while the other thread forks (the fork handler waits for it; without the
        // handler the child would inherit it locked)
        std::thread::sleep(std::time::Duration::from_millis(200));
        drop(g);
    });
    locked_rx.recv().unwrap();
    // SAFETY: the child only drops the stub (cache lock, arena lock) and `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        drop(stub);
        // SAFETY: ends the child without running the test harness.
        unsafe { libc::_exit(0) };
    }
    holder.join().unwrap();
    // generous watchdog: the child either exits or is deadlocked
    let mut status = 0;
    let mut exited = false;
    for _ in 0..1000 {
        // SAFETY: polls the child forked above.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            exited = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    if !exited {
        // SAFETY: kills and reaps the deadlocked child.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, &mut status, 0);
        }
    }
    assert!(exited, "the child deadlocked dropping a stub");
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    drop(stub);
}

#[test]
fn memory_class_returns_tail_jump_with_the_hidden_pointer_in_rdi() {
    // `struct { long a, b, c; } f(int, double)`: MEMORY class; `ret` (rsi) is the hidden
    // pointer, parked in xmm14 while the arguments go to rsi and xmm0, then moved into rdi;
    // the target returns straight to the caller (no frame, no call).
    let big = MemoryLayout::c_struct([V::I64, V::I64, V::I64]).unwrap();
    let d = FD::of(big.clone(), [V::I32, V::F64]);
    let ti = scalar_tag(ScalarKind::I32);
    let tf = scalar_tag(ScalarKind::F64);
    let (raw, val) = entries(&d, None, false);
    let b: Vec<&str> = val.iter().map(String::as_str).collect();
    assert_eq!(b[0], format!("cmp byte ptr [rdi], 0x{ti:x}"));
    assert_eq!(b[2], format!("cmp byte ptr [rdi+0x18], 0x{tf:x}"));
    assert_eq!(
        &b[4..],
        [
            "mov r11, rcx",
            "movq xmm14, rsi",
            "movsxd rsi, dword ptr [rdi+0x8]",
            "movq xmm0, qword ptr [rdi+0x20]",
            "movq rdi, xmm14",
            "jmp r11",
            "or r12, 0xffffffffffffffff",
            "ret",
        ]
    );
    assert_eq!(raw.last().map(String::as_str), Some("jmp r11"), "{raw:?}");
    assert!(raw.iter().any(|i| i == "movq rdi, xmm14"), "{raw:?}");
    // with stack arguments or capture it keeps the leaf frame
    for (d, capture) in [
        (FD::of(big.clone(), [V::I64; 6]), false),
        (FD::of(big, []), true),
    ] {
        let (_, val) = entries(&d, None, capture);
        assert!(!val.iter().any(|i| i == "jmp r11"), "{d}: {val:?}");
    }
}

/// `struct { unsigned char b[n]; }`.
fn bytes_struct(n: usize) -> MemoryLayout {
    MemoryLayout::c_struct([MemoryLayout::sequence_layout(n, V::U8).unwrap()]).unwrap()
}

#[test]
fn frames_of_a_page_or_more_are_probed_page_by_page_going_down() {
    // A 4 KiB struct: a 4096-byte area, frame 4096 + 8 = one probed page, then 8 bytes.
    let (raw, _) = entries(&FD::of_void([bytes_struct(4096)]), None, false);
    assert_eq!(
        &raw[..7],
        [
            "mov r11d, 0x1",
            "sub rsp, 0x1000",
            "or qword ptr [rsp], 0x0",
            "dec r11",
            "jne short 0x0000000000000006",
            "sub rsp, 0x8",
            "mov qword ptr [rsp+0x1000], rcx",
        ]
    );
    assert_eq!(&raw[raw.len() - 2..], ["add rsp, 0x1008", "ret"]);
    // 1 MiB: 256 pages, no rest beyond the 8-byte slot of the target.
    let d = FD::of_void([bytes_struct(crate::abi::MAX_STACK_BYTES)]);
    let (raw, _) = entries(&d, None, false);
    assert_eq!(raw[0], "mov r11d, 0x100");
    assert_eq!(raw[5], "sub rsp, 0x8");
    // A frame under a page: one `sub rsp` as before (the call's return address was the last
    // touch, and the frame lies within a page of it).
    let (raw, _) = entries(&FD::of_void([bytes_struct(4080)]), None, false);
    assert_eq!(raw[0], "sub rsp, 0xff8");
}

#[test]
fn long_struct_runs_are_copied_with_rep_movsq_before_the_argument_registers() {
    // int f(long, struct { char b[65536]; }, long) with the values entry: the struct's 8,192
    // eightbytes are one `rep movsq` from the segment's bytes to the area, done while rdi,
    // rsi and rcx are free; then the two longs go to rdi and rsi.
    let d = FD::of(V::I32, [V::I64.into(), bytes_struct(65536), V::I64.into()]);
    let (raw, val) = entries(&d, None, false);
    let copy = [
        "mov rax, rdi",
        "mov r10, qword ptr [rax+0x8]",
        "lea rsi, [r10]",
        "lea rdi, [rsp]",
        "mov ecx, 0x2000",
        "rep movsq qword ptr [rdi], qword ptr [rsi]",
        "mov rdi, rax",
    ];
    let at = raw.iter().position(|s| s == "mov rax, rdi").unwrap();
    assert_eq!(raw[at..at + copy.len()], copy);
    assert!(raw[..at]
        .iter()
        .all(|s| !s.contains("rdi") && !s.contains("rsi")));
    let tail = &raw[at + copy.len()..];
    assert_eq!(
        tail,
        [
            "mov r10, qword ptr [rdi+0x10]",
            "mov rsi, qword ptr [r10]",
            "mov r10, qword ptr [rdi]",
            "mov rdi, qword ptr [r10]",
            "call qword ptr [rsp+0x10000]",
            "add rsp, 0x10008",
            "ret",
        ]
    );
    // The values entry reads the segment's address from the `Value`.
    let ptr = 24 + VALUE_PAYLOAD + crate::memory::MemorySegment::PTR_OFFSET as i32;
    assert!(
        val.contains(&format!("mov r10, qword ptr [rax+{ptr:#x}]")),
        "{val:#?}"
    );
    // Code size is linear in the arguments, not in the struct's bytes.
    let p = plan(&d, None).unwrap();
    assert!(compile(&p, &checks(&d), false).bytes.len() < 512);
}

#[test]
fn runs_under_sixteen_slots_and_odd_tails_keep_their_moves() {
    // 120 bytes: 15 slots, moved one by one as before; 4100 bytes: 512 copied, the 4-byte tail
    // moved on its own (exactly its bytes).
    let (raw, _) = entries(&FD::of_void([bytes_struct(120)]), None, false);
    assert!(!raw.iter().any(|s| s.starts_with("rep")));
    assert_eq!(
        raw.iter()
            .filter(|s| s.starts_with("mov r11, qword ptr [r10"))
            .count(),
        15
    );
    let (raw, _) = entries(&FD::of_void([bytes_struct(4100)]), None, false);
    assert_eq!(raw.iter().filter(|s| s.starts_with("rep movsq")).count(), 1);
    assert!(raw.contains(&"mov ecx, 0x200".to_string()), "{raw:#?}");
    assert!(
        raw.contains(&"mov r11d, dword ptr [r10+0x1000]".to_string()),
        "{raw:#?}"
    );
    assert!(
        raw.contains(&"mov qword ptr [rsp+0x1000], r11".to_string()),
        "{raw:#?}"
    );
}
