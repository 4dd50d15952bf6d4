//! The check of a `RUNTIME_FUNCTION` table carried inside generated code, before Windows is
//! given it (`ExecutableCode::with_function_table`); compiled on every host for its tests.

use crate::error::{Error, Result};

/// Checks a `RUNTIME_FUNCTION` table of `count` entries at byte `offset` of `code` (see
/// [`ExecutableCode::with_function_table`]): 4-aligned, inside `code`, every entry's code range
/// non-empty and inside `code`, its `UNWIND_INFO` offset 4-aligned with at least the 4-byte
/// header inside `code`.
pub(crate) fn check(code: &[u8], offset: usize, count: usize) -> Result<()> {
    let bad = |expected: String| Error::InvalidSize {
        size: offset,
        expected,
    };
    let end = count
        .checked_mul(12)
        .and_then(|b| b.checked_add(offset))
        .filter(|&e| count > 0 && offset % 4 == 0 && e <= code.len())
        .ok_or_else(|| {
            bad(format!(
                "a 4-aligned offset of {count} (at least one) 12-byte RUNTIME_FUNCTIONs inside {} bytes of code",
                code.len()
            ))
        })?;
    for (k, e) in code[offset..end].chunks_exact(12).enumerate() {
        let word = |i: usize| u32::from_le_bytes([e[i], e[i + 1], e[i + 2], e[i + 3]]) as usize;
        let (begin, stop, info) = (word(0), word(4), word(8));
        if begin >= stop || stop > code.len() || info % 4 != 0 || info + 4 > code.len() {
            return Err(bad(format!(
                "RUNTIME_FUNCTION {k} ([{begin:#x}, {stop:#x}), UNWIND_INFO at {info:#x}) inside {} bytes of code",
                code.len()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 16 bytes of "code", an UNWIND_INFO header at 16 and one RUNTIME_FUNCTION at 24.
    fn image(begin: u32, end: u32, info: u32) -> Vec<u8> {
        let mut b = vec![0xC3u8; 16];
        b.extend([1, 0, 0, 0, 0, 0, 0, 0]);
        for w in [begin, end, info] {
            b.extend(w.to_le_bytes());
        }
        b
    }

    #[test]
    fn a_table_inside_the_code_is_accepted_and_anything_else_named() {
        assert!(check(&image(0, 16, 16), 24, 1).is_ok());
        for (code, offset, count) in [
            (image(0, 16, 16), 24, 0),          // empty
            (image(0, 16, 16), 22, 1),          // misaligned
            (image(0, 16, 16), 28, 1),          // past the end
            (image(0, 16, 16), 24, usize::MAX), // overflowing
            (image(8, 8, 16), 24, 1),           // empty range
            (image(0, 64, 16), 24, 1),          // range past the end
            (image(0, 16, 18), 24, 1),          // misaligned UNWIND_INFO
            (image(0, 16, 34), 24, 1),          // UNWIND_INFO past the end
        ] {
            let err = check(&code, offset, count).unwrap_err();
            assert!(matches!(err, Error::InvalidSize { .. }), "{err}");
            assert!(err.to_string().contains("RUNTIME_FUNCTION"), "{err}");
        }
    }
}
