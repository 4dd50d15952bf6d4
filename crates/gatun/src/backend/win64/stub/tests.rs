//! Tests of the Win64 stub compiler: the code shape of a few signatures (iced-x86 decoder, on
//! every host), the unwind information, the registers every generated entry writes, the
//! per-call instruction counts; on x86-64 Windows (under Wine) the stubs are placed and
//! called with Rust `extern "C"` targets.

use iced_x86::{Code, Decoder, DecoderOptions, Formatter, Instruction, IntelFormatter, Mnemonic};

use super::*;
use crate::layout::FunctionDescriptor as FD;
use crate::layout::{MemoryLayout, ScalarKind, ValueLayout as V};

/// Placeholder capture addresses for code-shape tests (never called).
const FNS: CaptureFns = CaptureFns {
    set_last_error: 0x1111_0000_0000_0001,
    wsa_set_last_error: 0x2222_0000_0000_0002,
    get_last_error: 0x3333_0000_0000_0003,
    wsa_get_last_error: 0x4444_0000_0000_0004,
};

fn plan_of(d: &FD, fv: Option<usize>) -> CallPlan {
    super::super::classify::plan(d, fv).unwrap()
}

fn checks_of(d: &FD) -> Vec<ArgCheck> {
    d.argument_layouts()
        .iter()
        .map(|l| ArgCheck::of(crate::backend::ArgKind::of(l)))
        .collect()
}

fn code_of(d: &FD, fv: Option<usize>, capture: bool) -> StubCode {
    compile(&plan_of(d, fv), &checks_of(d), capture, &FNS)
}

fn formatter() -> IntelFormatter {
    let mut f = IntelFormatter::new();
    let o = f.options_mut();
    o.set_space_after_operand_separator(true);
    o.set_hex_prefix("0x");
    o.set_hex_suffix("");
    o.set_uppercase_hex(false);
    o.set_small_hex_numbers_in_decimal(false);
    o.set_memory_size_options(iced_x86::MemorySizeOptions::Always);
    o.set_rip_relative_addresses(true);
    f
}

/// The instructions of the entry at `at` on its normal path: straight-line code up to and
/// including its `ret` or `jmp r11` (the checks' branches are not taken on that path; the
/// rejection path comes after).
fn path(bytes: &[u8], at: usize) -> Vec<Instruction> {
    let mut d = Decoder::with_ip(64, &bytes[at..], at as u64, DecoderOptions::NONE);
    let mut out = Vec::new();
    while d.can_decode() {
        let i = d.decode();
        assert!(!i.is_invalid(), "invalid instruction at {:#x}", i.ip());
        out.push(i);
        if matches!(i.mnemonic(), Mnemonic::Ret | Mnemonic::Jmp) {
            return out;
        }
    }
    panic!("entry at {at:#x} runs off its code");
}

fn text(is: &[Instruction]) -> Vec<String> {
    let mut f = formatter();
    is.iter()
        .map(|i| {
            let mut s = String::new();
            f.format(i, &mut s);
            s
        })
        .collect()
}

/// Every instruction of a stub's code (both entries and the rejection paths; the `int3`
/// padding between the entries skipped).
fn all_code(c: &StubCode) -> Vec<Instruction> {
    let mut d = Decoder::with_ip(64, &c.bytes[..c.code_end], 0, DecoderOptions::NONE);
    let mut out = Vec::new();
    while d.can_decode() {
        let i = d.decode();
        assert!(!i.is_invalid(), "invalid instruction at {:#x}", i.ip());
        if i.code() != Code::Int3 {
            out.push(i);
        }
    }
    out
}

#[test]
fn noop_tail_jumps_without_a_frame_or_unwind_data() {
    let c = code_of(&FD::of_void(Vec::<MemoryLayout>::new()), None, false);
    assert_eq!(text(&path(&c.bytes, c.raw)), ["mov r11, r9", "jmp r11"]);
    assert_eq!(text(&path(&c.bytes, c.values)), ["mov r11, r9", "jmp r11"]);
    assert_eq!(c.function_table, None);
}

#[test]
fn int_of_int_checks_the_tag_then_tail_jumps() {
    let c = code_of(&FD::of(V::I32, [V::I32]), None, false);
    assert_eq!(
        text(&path(&c.bytes, c.raw)),
        [
            "mov r11, r9",
            "mov r10, qword ptr [rcx]",
            "movsxd rcx, dword ptr [r10]",
            "jmp r11"
        ]
    );
    let v = text(&path(&c.bytes, c.values));
    let tag = scalar_tag(ScalarKind::I32);
    assert_eq!(v[0], format!("cmp byte ptr [rcx], 0x{tag:x}"));
    assert!(v[1].starts_with("jne "), "{v:?}");
    assert_eq!(
        v[2..],
        ["mov r11, r9", "movsxd rcx, dword ptr [rcx+0x8]", "jmp r11"]
    );
    // the rejection path: *rejected = 1, return 0, at the entry's stack depth
    let all = text(&all_code(&c));
    let n = all.len();
    assert_eq!(
        all[n - 4..],
        [
            "mov rax, qword ptr [rsp+0x38]",
            "mov byte ptr [rax], 0x1",
            "xor eax, eax",
            "ret"
        ]
    );
}

#[test]
fn six_integers_put_two_on_the_stack_above_the_shadow_space() {
    let d = FD::of(V::I64, [V::I64; 6]);
    let c = code_of(&d, None, false);
    let raw = text(&path(&c.bytes, c.raw));
    assert_eq!(raw[0], "sub rsp, 0x38", "{raw:?}");
    assert!(
        raw.contains(&"mov qword ptr [rsp+0x20], r11".to_string()),
        "{raw:?}"
    );
    assert!(
        raw.contains(&"mov qword ptr [rsp+0x28], r11".to_string()),
        "{raw:?}"
    );
    assert!(
        raw.contains(&"call qword ptr [rsp+0x58]".to_string()),
        "{raw:?}"
    );
    assert_eq!(raw[raw.len() - 2..], ["add rsp, 0x38", "ret"]);
    // rcx (holding `args`) is loaded last, right before the call
    let call = raw.iter().position(|s| s.starts_with("call")).unwrap();
    assert_eq!(raw[call - 1], "mov rcx, qword ptr [r10]");
    assert_eq!(c.function_table.map(|(_, n)| n), Some(2));
}

#[test]
fn a_16_byte_struct_comes_back_through_the_hidden_pointer_in_rcx() {
    let s16 = MemoryLayout::c_struct([V::I64, V::I64]).unwrap();
    let c = code_of(&FD::of(&s16, [V::I64, V::I64]), None, false);
    assert_eq!(
        text(&path(&c.bytes, c.raw)),
        [
            "sub rsp, 0x28",
            "mov qword ptr [rsp+0x38], rdx",
            "mov qword ptr [rsp+0x48], r9",
            "mov r10, qword ptr [rcx]",
            "mov rdx, qword ptr [r10]",
            "mov r10, qword ptr [rcx+0x8]",
            "mov r8, qword ptr [r10]",
            "mov rcx, qword ptr [rsp+0x38]",
            "call qword ptr [rsp+0x48]",
            "add rsp, 0x28",
            "ret"
        ]
    );
}

#[test]
fn a_struct_in_rax_is_stored_with_its_exact_size() {
    let s4 = MemoryLayout::c_struct([V::I16, V::I16]).unwrap();
    let c = code_of(&FD::of(&s4, [V::I32]), None, false);
    let raw = text(&path(&c.bytes, c.raw));
    let n = raw.len();
    assert_eq!(
        raw[n - 5..],
        [
            "call qword ptr [rsp+0x48]",
            "mov r10, qword ptr [rsp+0x38]",
            "mov dword ptr [r10], eax",
            "add rsp, 0x28",
            "ret"
        ]
    );
}

#[test]
fn by_reference_arguments_pass_the_callers_copies() {
    let s12 = MemoryLayout::c_struct([V::I32, V::I32, V::I32]).unwrap();
    // slot 0 (rcx, deferred), slot 1 (rdx), and slot 4 (the stack)
    let d = FD::of(V::I32, [&s12, &s12, &V::I32.into(), &V::I32.into(), &s12]);
    let c = code_of(&d, None, false);
    let raw = text(&path(&c.bytes, c.raw));
    // refs is the 5th parameter: [rsp + 40] at entry, [rsp + F + 40] in the frame (F = 0x38)
    let want = [
        "mov r11, qword ptr [rsp+0x60]",
        "mov rdx, qword ptr [r11+0x8]",
        "mov r11, qword ptr [rsp+0x60]",
        "mov r11, qword ptr [r11+0x10]",
        "mov qword ptr [rsp+0x20], r11",
        "mov r11, qword ptr [rsp+0x60]",
        "mov rcx, qword ptr [r11]",
        "call qword ptr [rsp+0x58]",
    ];
    let mut at = 0;
    for w in want {
        at += raw[at..]
            .iter()
            .position(|s| s == w)
            .unwrap_or_else(|| panic!("{w} not found in order in {raw:?}"));
    }
    // the values entry checks the segments' lengths, by-reference ones included
    let v = text(&path(&c.bytes, c.values));
    assert_eq!(
        v.iter().filter(|s| s.starts_with("cmp qword ptr")).count(),
        3
    );
}

#[test]
fn a_variadic_float_goes_in_both_registers() {
    let c = code_of(&FD::of(V::I32, [V::ADDRESS, V::F32]), Some(1), false);
    let raw = text(&path(&c.bytes, c.raw));
    assert!(
        raw.contains(&"cvtss2sd xmm1, dword ptr [r10]".to_string()),
        "{raw:?}"
    );
    assert!(
        raw.contains(&"cvtss2sd xmm5, dword ptr [r10]".to_string()),
        "{raw:?}"
    );
    assert!(raw.contains(&"movq rdx, xmm5".to_string()), "{raw:?}");
}

#[test]
fn capture_restores_right_before_and_saves_right_after_the_call() {
    let c = code_of(&FD::of(V::I32, [V::I32]), None, true);
    let raw = path(&c.bytes, c.raw);
    let t = text(&raw);
    // the pool: the four addresses in order, 8-aligned, after the code
    let calls: Vec<u64> = raw
        .iter()
        .filter(|i| i.mnemonic() == Mnemonic::Call && i.is_ip_rel_memory_operand())
        .map(|i| {
            let at = i.ip_rel_memory_address() as usize;
            u64::from_le_bytes(c.bytes[at..at + 8].try_into().unwrap())
        })
        .collect();
    assert_eq!(
        calls,
        [
            FNS.wsa_set_last_error,
            FNS.set_last_error,
            FNS.get_last_error,
            FNS.wsa_get_last_error
        ]
    );
    // between SetLastError and the target only moves; right after the target the result is
    // parked and GetLastError called
    let set = t
        .iter()
        .position(|s| s.starts_with("call qword ptr [rip"))
        .unwrap()
        + 3;
    let target = t
        .iter()
        .position(|s| s == "call qword ptr [rsp+0x48]")
        .unwrap();
    assert!(t[set].starts_with("call qword ptr [rip"), "{t:?}");
    for s in &t[set + 1..target] {
        assert!(
            s.starts_with("mov"),
            "{s} between the restore and the call: {t:?}"
        );
    }
    assert_eq!(t[target + 1], "mov qword ptr [rsp+0x30], rax");
    assert!(t[target + 2].starts_with("call qword ptr [rip"), "{t:?}");
    // errno: restored from buf[2] before, saved into buf[2] after
    assert!(
        t.contains(&"mov eax, dword ptr [r8+0x8]".to_string()),
        "{t:?}"
    );
    assert!(
        t.contains(&"mov dword ptr [rcx+0x8], eax".to_string()),
        "{t:?}"
    );
}

#[test]
fn the_unwind_information_describes_the_frame() {
    // F = 40: UWOP_ALLOC_SMALL, info (40 - 8) / 8 = 4, at prologue offset 7
    assert_eq!(unwind_info(40), [1, 7, 1, 0, 7, 0x42, 0, 0]);
    assert_eq!(unwind_info(128), [1, 7, 1, 0, 7, 0xF2, 0, 0]);
    // F = 2056: UWOP_ALLOC_LARGE, 257 slots of 8 bytes in the next code slot
    assert_eq!(unwind_info(2056), [1, 7, 2, 0, 7, 0x01, 1, 1]);
    let d = FD::of(V::F64, [V::F64; 9]);
    let c = code_of(&d, None, false);
    let (table, n) = c.function_table.unwrap();
    assert_eq!((table % 4, n), (0, 2));
    let word = |at: usize| u32::from_le_bytes(c.bytes[at..at + 4].try_into().unwrap()) as usize;
    for (k, entry) in [c.raw, c.values].into_iter().enumerate() {
        let (begin, end, info) = (
            word(table + 12 * k),
            word(table + 12 * k + 4),
            word(table + 12 * k + 8),
        );
        // the range starts at the entry's `sub rsp` and ends right after its `ret`
        let p = path(&c.bytes, entry);
        let sub = p.iter().find(|i| i.mnemonic() == Mnemonic::Sub).unwrap();
        assert_eq!(begin, sub.ip() as usize);
        assert_eq!(end, p.last().unwrap().next_ip() as usize);
        assert_eq!(
            &c.bytes[info..info + 8],
            unwind_info(frame_bytes(&plan_of(&d, None)))
        );
    }
    crate::code::function_table::check(&c.bytes, table, n).unwrap();
}

#[test]
fn frames_of_a_page_or_more_are_probed_below_rsp_before_the_sub() {
    // 1,000 long longs: 32 + 996 × 8 = 8,000 bytes of stack area, F = 8,008 = 0x1f48.
    let d = FD::of(V::I64, vec![V::I64; 1000]);
    let c = code_of(&d, None, false);
    let p = plan_of(&d, None);
    assert_eq!(frame_bytes(&p), 0x1f48);
    let (table, n) = c.function_table.unwrap();
    for (k, entry) in [c.raw, c.values].into_iter().enumerate() {
        let is = path(&c.bytes, entry);
        let t = text(&is);
        let at = t.iter().position(|s| s == "mov r10, rsp").unwrap();
        assert_eq!(
            t[at..at + 9],
            [
                "mov r10, rsp",
                "lea r11, [rsp-0x1f48]",
                "sub r10, 0x1000",
                "cmp r10, r11",
                "cmovb r10, r11",
                "test qword ptr [r10], r10",
                "cmp r10, r11",
                &format!("jne short 0x{:016x}", is[at + 2].ip()),
                "sub rsp, 0x1f48",
            ]
        );
        // The unwind range starts at the `sub rsp`: the probe runs at the entry's depth.
        let begin = u32::from_le_bytes(c.bytes[table + 12 * k..][..4].try_into().unwrap());
        assert_eq!(begin as u64, is[at + 8].ip());
    }
    crate::code::function_table::check(&c.bytes, table, n).unwrap();
    // Under a page: no probe.
    let c = code_of(&FD::of(V::I64, vec![V::I64; 400]), None, false);
    assert!(!text(&path(&c.bytes, c.raw)).contains(&"mov r10, rsp".to_string()));
}

#[test]
fn frames_over_512_kib_take_the_32_bit_alloc_large_code() {
    // UWOP_ALLOC_LARGE with operation info 0 holds F / 8 in 16 bits (up to 512 KiB - 8);
    // beyond, operation info 1 and F in two slots (Microsoft x64 "struct UNWIND_CODE").
    assert_eq!(unwind_info(524_280), [1, 7, 2, 0, 7, 0x01, 0xFF, 0xFF]);
    assert_eq!(
        unwind_info(524_296),
        [1, 7, 3, 0, 7, 0x11, 0x08, 0x00, 0x08, 0x00, 0, 0]
    );
    // The 1 MiB limit: F = 1,048,584.
    let d = FD::of(V::I64, vec![V::I64; crate::abi::MAX_STACK_BYTES / 8]);
    let p = plan_of(&d, None);
    assert_eq!(frame_bytes(&p), 1_048_584);
    assert_eq!(
        unwind_info(1_048_584),
        [1, 7, 3, 0, 7, 0x11, 0x08, 0x00, 0x10, 0x00, 0, 0]
    );
    let c = code_of(&d, None, false);
    let (table, n) = c.function_table.unwrap();
    crate::code::function_table::check(&c.bytes, table, n).unwrap();
}

/// The registers an instruction's first operand writes (`None` for instructions that write
/// no register operand).
fn written(i: &Instruction) -> Option<iced_x86::Register> {
    match i.mnemonic() {
        Mnemonic::Cmp
        | Mnemonic::Call
        | Mnemonic::Jmp
        | Mnemonic::Ret
        | Mnemonic::Jne
        | Mnemonic::Jb => None,
        _ if i.op_count() > 0 && i.op0_kind() == iced_x86::OpKind::Register => {
            Some(i.op0_register())
        }
        _ => None,
    }
}

/// The nonvolatile GPRs other than rsp and r12–r15, by every name of theirs.
const NONVOLATILE: [&str; 17] = [
    "rbx", "ebx", "bx", "bl", "bh", "rbp", "ebp", "bp", "bpl", "rdi", "edi", "di", "dil", "rsi",
    "esi", "si", "sil",
];

#[test]
fn random_plans_decode_and_never_write_a_nonvolatile_register() {
    let mut layouts: Vec<MemoryLayout> =
        ScalarKind::ALL.iter().map(|&k| V::new(k).into()).collect();
    for n in [1usize, 2, 3, 4, 5, 7, 8, 12, 16, 24] {
        let seq = MemoryLayout::sequence_layout(n, V::U8).unwrap();
        layouts.push(MemoryLayout::c_struct([seq]).unwrap());
    }
    for (i, ret) in layouts.iter().enumerate() {
        for nargs in [0usize, 1, 3, 4, 5, 9] {
            let args: Vec<MemoryLayout> = (0..nargs)
                .map(|k| layouts[(i * 7 + k * 5) % layouts.len()].clone())
                .collect();
            let d = FD::of(ret.clone(), args);
            for (fv, capture) in [(None, false), (None, true), (Some(0), false)] {
                let c = code_of(&d, fv, capture);
                for ins in all_code(&c) {
                    let Some(r) = written(&ins) else { continue };
                    let name = formatter().format_register(r).to_string();
                    let bad = match name.as_str() {
                        "rsp" | "esp" | "sp" | "spl" => {
                            !matches!(ins.mnemonic(), Mnemonic::Sub | Mnemonic::Add)
                        }
                        n if n.starts_with("xmm") => n[3..].parse::<u8>().unwrap() >= 6,
                        n => {
                            NONVOLATILE.contains(&n)
                                || ["r12", "r13", "r14", "r15"]
                                    .iter()
                                    .any(|p| n.starts_with(p))
                        }
                    };
                    assert!(
                        !bad,
                        "{d} {fv:?} capture={capture}: {:?} writes {name}",
                        text(&[ins])
                    );
                }
                if let Some((t, n)) = c.function_table {
                    crate::code::function_table::check(&c.bytes, t, n).unwrap();
                }
            }
        }
    }
}

/// The Win64 rows of the per-call instruction counts: `(name, descriptor, capture, raw bound,
/// values bound)`. The bounds are the counts the compiler emits today: the stub's own
/// instructions on the normal path (the capture row's four calls into kernel32/ws2_32 are
/// counted as one `call` each; the functions' own instructions are not).
fn rows() -> Vec<(&'static str, FD, bool, usize, usize)> {
    let s16 = MemoryLayout::c_struct([V::I64, V::I64]).unwrap();
    vec![
        (
            "noop void(void)",
            FD::of_void(Vec::<MemoryLayout>::new()),
            false,
            2,
            2,
        ),
        ("int(int)", FD::of(V::I32, [V::I32]), false, 4, 5),
        (
            "add6 long long(6 x long long)",
            FD::of(V::I64, [V::I64; 6]),
            false,
            19,
            25,
        ),
        (
            "struct16(long long, long long)",
            FD::of(&s16, [V::I64, V::I64]),
            false,
            11,
            13,
        ),
        ("capture int(int)", FD::of(V::I32, [V::I32]), true, 29, 30),
    ]
}

#[test]
fn instruction_counts_per_call() {
    println!(
        "{:<32} {:>5} {:>7} {:>6}",
        "signature", "raw", "values", "bytes"
    );
    for (name, d, capture, raw_max, values_max) in rows() {
        let c = code_of(&d, None, capture);
        let (raw, values) = (path(&c.bytes, c.raw).len(), path(&c.bytes, c.values).len());
        println!("{name:<32} {raw:>5} {values:>7} {:>6}", c.bytes.len());
        assert!(
            raw <= raw_max,
            "{name}: raw entry {raw} instructions, at most {raw_max}"
        );
        assert!(
            values <= values_max,
            "{name}: values entry {values} instructions, at most {values_max}"
        );
    }
}

#[cfg(gatun_backend = "win64")]
mod differential;
#[cfg(gatun_backend = "win64")]
mod on_windows;
