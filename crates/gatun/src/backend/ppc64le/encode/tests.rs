//! The encoder against the GNU assembler: a table of (word, text) pairs whose words were
//! produced by `powerpc64le-linux-gnu-as` (runs on every host), the same text assembled again
//! when the assembler is installed, and the assembler's label arithmetic.

use super::*;

/// Every encoder, with the text `powerpc64le-linux-gnu-as` assembles to the same word.
fn table() -> Vec<(u32, &'static str)> {
    let (r0, r1, r2, r3, r11, r12) = (R::R0, R::SP, R::TOC, R::arg(0), R::new(11), R::new(12));
    let (r26, r30, r31) = (R::new(26), R::new(30), R::new(31));
    vec![
        (load(Load::Bz, r11, r3, 0), "lbz 11, 0(3)"),
        (load(Load::Hz, R::arg(7), r30, 32766), "lhz 10, 32766(30)"),
        (load(Load::Ha, r0, r12, -2), "lha 0, -2(12)"),
        (load(Load::Wz, r26, r11, 12), "lwz 26, 12(11)"),
        (load(Load::Wa, R::arg(2), r30, 8), "lwa 5, 8(30)"),
        (load(Load::D, r12, r30, -32768), "ld 12, -32768(30)"),
        (store(Store::B, r0, r1, 35), "stb 0, 35(1)"),
        (store(Store::H, r26, r12, 2), "sth 26, 2(12)"),
        (store(Store::W, r0, r11, -4), "stw 0, -4(11)"),
        (store(Store::D, r2, r1, 24), "std 2, 24(1)"),
        (stdu(r1, r1, -4096), "stdu 1, -4096(1)"),
        (ldu(r0, r11, 8), "ldu 0, 8(11)"),
        (lfs(F::arg(12), r30, 4), "lfs 13, 4(30)"),
        (lfd(F::arg(0), r12, 8), "lfd 1, 8(12)"),
        (stfs(F::arg(7), r31, 100), "stfs 8, 100(31)"),
        (stfd(F::F0, r1, 32), "stfd 0, 32(1)"),
        (addi(r3, R::R0, -1), "li 3, -1"),
        (addi(r11, r30, 32767), "addi 11, 30, 32767"),
        (addis(r11, r1, -16), "addis 11, 1, -16"),
        (ori(r12, r12, 0xFFFF), "ori 12, 12, 65535"),
        (xori(r11, r11, 7), "xori 11, 11, 7"),
        (cmpldi(r11, 65535), "cmpldi 11, 65535"),
        (cmpld(r11, r12), "cmpld 11, 12"),
        (or(r0, r26, r0), "or 0, 26, 0"),
        (mr(r31, r1), "mr 31, 1"),
        (extsb(r3, r3), "extsb 3, 3"),
        (cntlzd(r0, r0), "cntlzd 0, 0"),
        (sldi(r26, r26, 24), "sldi 26, 26, 24"),
        (sldi(r26, r26, 48), "sldi 26, 26, 48"),
        (srdi(r0, r0, 6), "srdi 0, 0, 6"),
        (srdi(r0, r0, 40), "srdi 0, 0, 40"),
        (mfvsrd(r3, F::arg(0)), "mfvsrd 3, 1"),
        (mfvsrd(r0, F::arg(12)), "mfvsrd 0, 13"),
        (mtvsrd(F::arg(0), r0), "mtvsrd 1, 0"),
        (mflr(r0), "mflr 0"),
        (mtlr(r0), "mtlr 0"),
        (mtctr(r12), "mtctr 12"),
        (BCTRL, "bctrl"),
        (BLR, "blr"),
        (TRAP, "trap"),
        (b(8), "b .+8"),
        (b(-4), "b .-4"),
        (bc(Cond::Ne, 12), "bne .+12"),
        (bc(Cond::Lt, 32764), "blt .+32764"),
        (bc(Cond::Dnz, -32768), "bdnz .-32768"),
    ]
}

/// The table's words, as `powerpc64le-linux-gnu-as` produced them.
#[test]
fn every_encoder_gives_the_assemblers_word() {
    let want: [u32; 45] = [
        0x8963_0000,
        0xA15E_7FFE,
        0xA80C_FFFE,
        0x834B_000C,
        0xE8BE_000A,
        0xE99E_8000,
        0x9801_0023,
        0xB34C_0002,
        0x900B_FFFC,
        0xF841_0018,
        0xF821_F001,
        0xE80B_0009,
        0xC1BE_0004,
        0xC82C_0008,
        0xD11F_0064,
        0xD801_0020,
        0x3860_FFFF,
        0x397E_7FFF,
        0x3D61_FFF0,
        0x618C_FFFF,
        0x696B_0007,
        0x282B_FFFF,
        0x7C2B_6040,
        0x7F40_0378,
        0x7C3F_0B78,
        0x7C63_0774,
        0x7C00_0074,
        0x7B5A_C1E4,
        0x7B5A_83C6,
        0x7800_D182,
        0x7800_C220,
        0x7C23_0066,
        0x7DA0_0066,
        0x7C20_0166,
        0x7C08_02A6,
        0x7C08_03A6,
        0x7D89_03A6,
        0x4E80_0421,
        0x4E80_0020,
        0x7FE0_0008,
        0x4800_0008,
        0x4BFF_FFFC,
        0x4082_000C,
        0x4180_7FFC,
        0x4200_8000,
    ];
    let table = table();
    assert_eq!(table.len(), want.len());
    for ((got, text), want) in table.into_iter().zip(want) {
        assert_eq!(got, want, "{text}: {got:#010x} vs {want:#010x}");
    }
}

#[test]
fn displacements_split_into_addis_and_a_signed_low_half() {
    for disp in [
        0i64,
        1,
        32767,
        32768,
        65535,
        65536,
        -32768,
        -32769,
        1 << 20,
        (1 << 31) - 1,
    ] {
        let (ha, lo) = split_ha_lo(disp);
        assert!((-32768..=32767).contains(&lo), "{disp}");
        assert_eq!(i64::from(ha) * 65536 + i64::from(lo), disp);
    }
    assert_eq!(li32(R::new(12), 5), [addi(R::new(12), R::R0, 5)]);
    assert_eq!(
        li32(R::new(12), 0x12_3456),
        [
            addis(R::new(12), R::R0, 0x12),
            ori(R::new(12), R::new(12), 0x3456)
        ]
    );
    assert_eq!(
        li32(R::new(12), 0x10_0000),
        [addis(R::new(12), R::R0, 0x10)]
    );
}

#[test]
fn labels_patch_branches_forward_and_back() {
    let mut a = Asm::default();
    let (back, fwd) = (a.label(), a.label());
    a.bind(back);
    a.emit(BLR);
    a.branch(Cond::Ne, fwd);
    a.jump(back);
    a.bind(fwd);
    a.emit(BLR);
    assert!(a.branches_reach());
    assert_eq!(a.finish(), [BLR, bc(Cond::Ne, 8), b(-8), BLR]);
    let mut a = Asm::default();
    let l = a.label();
    a.branch(Cond::Lt, l);
    (0..8192).for_each(|_| a.emit(BLR));
    a.bind(l);
    assert!(!a.branches_reach()); // +32772 bytes
}

/// Assembles `text` (one instruction a line) with the cross assembler and returns the words,
/// or `None` when the assembler is not installed (skipped, except in CI).
#[cfg(unix)]
fn assemble(text: &str) -> Option<Vec<u32>> {
    use std::process::Command;
    let (as_, objcopy) = ("powerpc64le-linux-gnu-as", "powerpc64le-linux-gnu-objcopy");
    if Command::new(as_).arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{as_} is missing in CI (the PPC64LE stage installs binutils-powerpc64le-linux-gnu)"
        );
        eprintln!("skipped: {as_} is not installed");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("gatun-ppc64le-encode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, obj, bin) = (dir.join("t.s"), dir.join("t.o"), dir.join("t.bin"));
    std::fs::write(&src, text).unwrap();
    let ok = Command::new(as_)
        .args(["-mpower8", "-o"])
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
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect(),
    )
}

/// [`table`]'s text assembled again (when the assembler is installed), word for word.
#[cfg(unix)]
#[cfg_attr(miri, ignore = "starts the cross assembler")]
#[test]
fn the_table_matches_the_cross_assembler() {
    let table = table();
    let text: String = table.iter().map(|(_, t)| format!("{t}\n")).collect();
    let Some(words) = assemble(&text) else {
        return;
    };
    assert_eq!(words.len(), table.len());
    for ((got, text), want) in table.iter().zip(words) {
        assert_eq!(*got, want, "{text}: {got:#010x} vs {want:#010x}");
    }
}
