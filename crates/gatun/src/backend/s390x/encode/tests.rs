//! Tests of the s390x encoder: every encoder against the bytes of the GNU assembler (a table
//! of its bytes everywhere, the assembler itself when installed), and the assembler's label
//! patching.

use super::*;

fn r(n: u8) -> R {
    R::new(n)
}
fn f(n: u8) -> F {
    F::new(n)
}
fn at(b: u8, d: i32) -> Addr {
    Addr::new(r(b), d)
}
fn ix(x: u8, b: u8, d: i32) -> Addr {
    Addr::indexed(r(x), r(b), d)
}

/// Every encoder with the text the GNU assembler reads for it, and what it encodes.
pub(crate) fn table() -> Vec<(&'static str, Insn)> {
    vec![
        // loads of every width into a whole register, boundary displacements
        ("lg %r2,0(%r7)", rxy(Rxy::Lg, r(2), at(7, 0))),
        (
            "lg %r6,-524288(%r14,%r7)",
            rxy(Rxy::Lg, r(6), ix(14, 7, -524_288)),
        ),
        ("lg %r1,524287(%r2)", rxy(Rxy::Lg, r(1), at(2, 524_287))),
        ("lgf %r3,8(%r1)", rxy(Rxy::Lgf, r(3), at(1, 8))),
        ("llgf %r0,4096(%r1)", rxy(Rxy::Llgf, r(0), at(1, 4096))),
        ("lgh %r4,-2(%r15)", rxy(Rxy::Lgh, r(4), at(15, -2))),
        ("llgh %r5,32(%r7)", rxy(Rxy::Llgh, r(5), at(7, 32))),
        ("lgb %r2,4095(%r1)", rxy(Rxy::Lgb, r(2), at(1, 4095))),
        ("llgc %r0,24(%r2)", rxy(Rxy::Llgc, r(0), at(2, 24))),
        ("ly %r0,0(%r9)", rxy(Rxy::Ly, r(0), at(9, 0))),
        // stores
        ("stg %r0,160(%r15)", rxy(Rxy::Stg, r(0), at(15, 160))),
        ("stg %r0,0(%r14,%r15)", rxy(Rxy::Stg, r(0), ix(14, 15, 0))),
        ("sty %r0,0(%r13)", rxy(Rxy::Sty, r(0), at(13, 0))),
        ("sthy %r2,-4096(%r8)", rxy(Rxy::Sthy, r(2), at(8, -4096))),
        ("stcy %r2,7(%r8)", rxy(Rxy::Stcy, r(2), at(8, 7))),
        ("lay %r15,-4096(%r15)", rxy(Rxy::Lay, r(15), at(15, -4096))),
        ("lay %r15,-4095(%r15)", rxy(Rxy::Lay, r(15), at(15, -4095))),
        ("lay %r1,0(%r1,%r7)", rxy(Rxy::Lay, r(1), ix(1, 7, 0))),
        // floating-point loads and stores
        ("ley %f0,8(%r7)", frxy(FRxy::Ley, f(0), at(7, 8))),
        ("ley %f6,0(%r14,%r1)", frxy(FRxy::Ley, f(6), ix(14, 1, 0))),
        ("ldy %f2,-8(%r1)", frxy(FRxy::Ldy, f(2), at(1, -8))),
        ("stey %f0,4(%r8)", frxy(FRxy::Stey, f(0), at(8, 4))),
        ("stdy %f1,168(%r15)", frxy(FRxy::Stdy, f(1), at(15, 168))),
        (
            "stdy %f15,524287(%r15)",
            frxy(FRxy::Stdy, f(15), at(15, 524_287)),
        ),
        ("ldeb %f4,4095(%r1,%r7)", ldeb(f(4), ix(1, 7, 4095))),
        ("ldeb %f1,0(%r1)", ldeb(f(1), at(1, 0))),
        // multiple, shifts, characters under mask
        (
            "stmg %r6,%r15,48(%r15)",
            rsy(Rsy::Stmg, r(6), r(15), Some(r(15)), 48),
        ),
        (
            "lmg %r6,%r15,48(%r11)",
            rsy(Rsy::Lmg, r(6), r(15), Some(r(11)), 48),
        ),
        ("sllg %r0,%r0,32", sllg(r(0), r(0), 32)),
        ("sllg %r3,%r3,8", sllg(r(3), r(3), 8)),
        ("srlg %r2,%r2,32", srlg(r(2), r(2), 32)),
        ("srlg %r5,%r5,63", srlg(r(5), r(5), 63)),
        ("icmy %r3,7,-8(%r1)", mask_op(Mask::Icmy, r(3), 7, r(1), -8)),
        (
            "icmy %r0,15,4(%r14)",
            mask_op(Mask::Icmy, r(0), 15, r(14), 4),
        ),
        ("icmh %r3,1,8(%r1)", mask_op(Mask::Icmh, r(3), 1, r(1), 8)),
        ("icmh %r2,3,0(%r1)", mask_op(Mask::Icmh, r(2), 3, r(1), 0)),
        ("stcmy %r0,3,4(%r8)", mask_op(Mask::Stcmy, r(0), 3, r(8), 4)),
        ("stcmh %r2,7,0(%r8)", mask_op(Mask::Stcmh, r(2), 7, r(8), 0)),
        ("cliy 524287(%r2),255", cliy(r(2), 524_287, 255)),
        ("cliy 0(%r1),7", cliy(r(1), 0, 7)),
        ("cliy -24(%r2),16", cliy(r(2), -24, 16)),
        ("la %r1,160(%r15)", la(r(1), at(15, 160))),
        ("la %r14,0(%r14,%r7)", la(r(14), ix(14, 7, 0))),
        // register-register
        ("lgr %r7,%r2", lgr(r(7), r(2))),
        ("lgr %r11,%r15", lgr(r(11), r(15))),
        ("lcgr %r5,%r5", lcgr(r(5), r(5))),
        ("lgdr %r2,%f0", lgdr(r(2), f(0))),
        ("lgdr %r0,%f6", lgdr(r(0), f(6))),
        ("ldgr %f6,%r0", ldgr(f(6), r(0))),
        // immediates
        ("lghi %r0,1", lghi(r(0), 1)),
        ("lghi %r0,0", lghi(r(0), 0)),
        ("lghi %r2,-32768", lghi(r(2), -32768)),
        ("aghi %r15,32767", aghi(r(15), 32767)),
        ("aghi %r15,-160", aghi(r(15), -160)),
        ("lgfi %r14,-2147483648", lgfi(r(14), i32::MIN)),
        ("lgfi %r1,1048736", lgfi(r(1), 1_048_736)),
        ("clgfi %r0,4294967295", clgfi(r(0), u32::MAX)),
        ("clgfi %r0,12", clgfi(r(0), 12)),
        // relative branches and addresses
        ("larl %r1,.+24", larl(r(1), 24)),
        ("larl %r1,.-4294967296", larl(r(1), -(1 << 32))),
        ("brcl 7,.+12", brcl(Cond::Ne, 12)),
        ("brcl 4,.-6", brcl(Cond::Low, -6)),
        ("brcl 15,.+4294967294", brcl(Cond::Always, (1 << 32) - 2)),
        ("brctg %r1,.-8", brctg(r(1), -8)),
        ("brctg %r0,.+65534", brctg(r(0), 65534)),
        ("basr %r14,%r10", basr(r(14), r(10))),
        ("basr %r14,%r1", basr(r(14), r(1))),
        ("br %r14", br(r(14))),
        ("br %r1", br(r(1))),
        ("nopr %r7", nopr()),
    ]
}

/// The bytes `s390x-linux-gnu-as` produced for [`table`]'s text, in the same order.
const EXPECTED: &[&str] = &[
    "e32070000004",
    "e36e70008004",
    "e3102fff7f04",
    "e33010080014",
    "e30010000116",
    "e340fffeff15",
    "e35070200091",
    "e3201fff0077",
    "e30020180090",
    "e30090000058",
    "e300f0a00024",
    "e30ef0000024",
    "e300d0000050",
    "e3208000ff70",
    "e32080070072",
    "e3f0f000ff71",
    "e3f0f001ff71",
    "e31170000071",
    "ed0070080064",
    "ed6e10000064",
    "ed201ff8ff65",
    "ed0080040066",
    "ed10f0a80067",
    "edf0ffff7f67",
    "ed417fff0004",
    "ed1010000004",
    "eb6ff0300024",
    "eb6fb0300004",
    "eb000020000d",
    "eb330008000d",
    "eb220020000c",
    "eb55003f000c",
    "eb371ff8ff81",
    "eb0fe0040081",
    "eb3110080080",
    "eb2310000080",
    "eb038004002d",
    "eb278000002c",
    "ebff2fff7f55",
    "eb0710000055",
    "eb102fe8ff55",
    "4110f0a0",
    "41ee7000",
    "b9040072",
    "b90400bf",
    "b9030055",
    "b3cd0020",
    "b3cd0006",
    "b3c10060",
    "a7090001",
    "a7090000",
    "a7298000",
    "a7fb7fff",
    "a7fbff60",
    "c0e180000000",
    "c011001000a0",
    "c20effffffff",
    "c20e0000000c",
    "c0100000000c",
    "c01080000000",
    "c07400000006",
    "c044fffffffd",
    "c0f47fffffff",
    "a717fffc",
    "a7077fff",
    "0dea",
    "0de1",
    "07fe",
    "07f1",
    "0707",
];

/// The hex text of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn encoders_match_the_gnu_assembler_bytes() {
    let t = table();
    assert_eq!(t.len(), EXPECTED.len());
    for ((text, got), want) in t.iter().zip(EXPECTED) {
        assert_eq!(
            hex(got.bytes()),
            *want,
            "{text}: encoded {}, the assembler gives {want}",
            hex(got.bytes())
        );
    }
}

#[test]
fn registers_have_their_abi_numbers_and_names() {
    assert_eq!(
        (0..5).map(|n| R::arg(n).num()).collect::<Vec<_>>(),
        [2, 3, 4, 5, 6]
    );
    assert_eq!(
        (0..4).map(|n| F::arg(n).num()).collect::<Vec<_>>(),
        [0, 2, 4, 6]
    );
    assert_eq!(R::R15.to_string(), "%r15");
    assert_eq!(F::F1.to_string(), "%f1");
    assert_eq!((R::R0.num(), R::R14.num(), R::R11.num()), (0, 14, 11));
}

#[test]
fn displacement_ranges_are_the_formats() {
    assert!(fits_long(-(1 << 19)) && fits_long((1 << 19) - 1));
    assert!(!fits_long(1 << 19) && !fits_long(-(1 << 19) - 1));
    assert!(fits_short(0) && fits_short(4095) && !fits_short(4096) && !fits_short(-1));
    assert!(fits_i16(-32768) && fits_i16(32767) && !fits_i16(32768));
}

#[test]
fn labels_patch_forward_and_backward_branches() {
    let mut a = Asm::default();
    let fwd = a.label();
    let back = a.label();
    a.bind(back);
    a.emit(lghi(R::R0, 1)); // 0..4
    a.branch(Cond::Ne, fwd); // 4..10
    a.branch(Cond::Always, back); // 10..16
    a.emit(br(R::R14)); // 16..18
    a.bind(fwd);
    a.emit(br(R::R1)); // 18..20
    assert_eq!((a.len(), a.insns()), (20, 5));
    let bytes = a.finish();
    assert_eq!(bytes[4..10], *brcl(Cond::Ne, 14).bytes());
    assert_eq!(bytes[10..16], *brcl(Cond::Always, -10).bytes());
    // padding is invalid operations
    let mut a = Asm::default();
    a.emit(nopr());
    a.pad(6);
    assert_eq!(a.finish(), [0x07, 0x07, 0, 0, 0, 0, 0, 0]);
}

/// Assembles `text` (one instruction a line) with the cross assembler and returns the bytes,
/// or `None` when the assembler is not installed (skipped, except in CI).
#[cfg(unix)]
pub(crate) fn assemble(text: &str, what: &str) -> Option<Vec<u8>> {
    use std::process::Command;
    let (as_, objcopy) = ("s390x-linux-gnu-as", "s390x-linux-gnu-objcopy");
    if Command::new(as_).arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{as_} is missing in CI (install binutils-s390x-linux-gnu)"
        );
        eprintln!("skipped: {as_} is not installed");
        return None;
    }
    let dir = std::env::temp_dir().join(format!(
        "gatun-s390x-{what}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, obj, bin) = (dir.join("t.s"), dir.join("t.o"), dir.join("t.bin"));
    std::fs::write(&src, format!(".machine z10\n{text}")).unwrap();
    let ok = Command::new(as_)
        .arg("-o")
        .arg(&obj)
        .arg(&src)
        .status()
        .unwrap();
    assert!(ok.success(), "{as_} failed");
    let ok = Command::new(objcopy)
        .args(["-O", "binary", "-j", ".text"])
        .arg(&obj)
        .arg(&bin)
        .status()
        .unwrap();
    assert!(ok.success(), "{objcopy} failed");
    let bytes = std::fs::read(&bin).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Some(bytes)
}

/// Assembles [`table`]'s text with the cross assembler (when installed) and compares every
/// instruction's bytes.
#[test]
#[cfg(unix)]
#[cfg_attr(miri, ignore = "runs the cross assembler")]
fn encoders_match_the_cross_assembler_when_installed() {
    let t = table();
    let text: String = t.iter().map(|(t, _)| format!("{t}\n")).collect();
    let Some(bytes) = assemble(&text, "encode") else {
        return;
    };
    let mut at = 0;
    for (text, got) in &t {
        let want = &bytes[at..at + got.bytes().len()];
        assert_eq!(
            hex(got.bytes()),
            hex(want),
            "{text}: encoded {}, the assembler gives {}",
            hex(got.bytes()),
            hex(want)
        );
        at += got.bytes().len();
    }
    // the assembler pads the section with `nopr %r7`
    assert!(bytes[at..].chunks(2).all(|c| c == [0x07, 0x07]));
}
