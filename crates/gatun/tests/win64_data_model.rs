//! `DataModel::WINDOWS_X64` against mingw-w64 gcc: for every name in `DataModel::NAMES`, the
//! size, alignment and signedness `x86_64-w64-mingw32-gcc -O1 -S` computes (`sizeof`,
//! `_Alignof`, `(T)-1 < 0`) must be the value layout's; `long double` must be the 16-byte,
//! 16-aligned type that the model rejects. Runs on the build host (no Windows code runs);
//! skipped when the compiler is missing (Debian: `gcc-mingw-w64-x86-64`).

use std::collections::HashMap;
use std::process::Command;

use gatun::layout::{DataModel, ScalarKind};

#[test]
fn windows_x64_model_matches_mingw_gcc() {
    let gcc = "x86_64-w64-mingw32-gcc";
    if Command::new(gcc).arg("--version").output().is_err() {
        eprintln!("skipped: {gcc} not found (Debian: gcc-mingw-w64-x86-64)");
        return;
    }
    let mut src = String::from(
        "#include <stddef.h>\n#include <stdint.h>\n#include <stdbool.h>\n#include <wchar.h>\n\
         #include <sys/types.h>\n",
    );
    for (k, name) in DataModel::NAMES.iter().enumerate() {
        let t = name;
        src.push_str(&format!(
            "int size_{k} = sizeof({t});\nint align_{k} = _Alignof({t});\n"
        ));
        let kind = DataModel::WINDOWS_X64.layout(name).unwrap().kind();
        if !kind.is_float() && kind != ScalarKind::Pointer && kind != ScalarKind::Bool {
            src.push_str(&format!("int signed_{k} = ({t})-1 < 0;\n"));
        }
    }
    src.push_str("int size_ld = sizeof(long double);\nint align_ld = _Alignof(long double);\n");
    let dir = std::env::temp_dir().join(format!("gatun-win64-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c_path = dir.join("model.c");
    let s_path = dir.join("model.s");
    std::fs::write(&c_path, &src).unwrap();
    let out = Command::new(gcc)
        .args(["-O1", "-S", "-o"])
        .arg(&s_path)
        .arg(&c_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{gcc} failed:\n{}\n{src}",
        String::from_utf8_lossy(&out.stderr)
    );
    let asm = std::fs::read_to_string(&s_path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // `name:` followed by `.long N` (or `.space 4` for zero).
    let mut values = HashMap::new();
    let mut label: Option<&str> = None;
    for line in asm.lines() {
        let l = line.trim();
        if let Some(name) = l.strip_suffix(':') {
            label = Some(name);
        } else if let Some(name) = label.take() {
            let v = if let Some(n) = l.strip_prefix(".long") {
                n.trim().parse::<i64>().ok()
            } else if l.starts_with(".space") {
                Some(0)
            } else {
                None
            };
            if let Some(v) = v {
                values.insert(name.to_string(), v);
            }
        }
    }
    let get = |name: &str| -> i64 {
        *values
            .get(name)
            .unwrap_or_else(|| panic!("{name} not in the assembly:\n{asm}"))
    };
    let mut bad = Vec::new();
    for (k, name) in DataModel::NAMES.iter().enumerate() {
        let v = DataModel::WINDOWS_X64.layout(name).unwrap();
        let (size, align) = (get(&format!("size_{k}")), get(&format!("align_{k}")));
        if (size, align) != (v.byte_size() as i64, v.byte_alignment() as i64) {
            bad.push(format!(
                "{name}: gcc size {size} align {align}, gatun {} {}",
                v.byte_size(),
                v.byte_alignment()
            ));
        }
        if let Some(&signed) = values.get(&format!("signed_{k}")) {
            if (signed != 0) != v.kind().is_signed() {
                bad.push(format!(
                    "{name}: gcc signed = {signed}, gatun {:?}",
                    v.kind()
                ));
            }
        }
    }
    assert_eq!((get("size_ld"), get("align_ld")), (16, 16), "long double");
    assert!(DataModel::WINDOWS_X64.layout("long double").is_err());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
