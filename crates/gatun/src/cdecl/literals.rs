//! The values of C literals whose tokens the lexer only delimits: floating constants (C17
//! §6.4.4.2: decimal and hexadecimal, with their suffix's type, correctly rounded), character
//! constants (§6.4.4.4, with GCC's values for multi-character ones) and string literals
//! (§6.4.5: escape sequences decoded, UTF-8 for universal character names).
//!
//! Every function takes the token's text and returns a message (no position: the caller has
//! the token) for what it does not accept. Nothing here panics: indices are checked and
//! arithmetic saturates or is checked.

use crate::layout::DataModel;

/// The type of a floating constant, from its suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FloatType {
    /// `f`, `F`, `f32`, `F32`: `float` (`_Float32`).
    Float,
    /// No suffix, `f64`, `F64`, `f32x`, `F32x`: `double` (`_Float64`, `_Float32x`).
    Double,
}

/// The value of floating constant `text` (`1.5`, `1e-3f`, `0x1.8p3`, `.5`), rounded to its
/// type (a `float` value is exactly representable as the returned `f64`).
///
/// # Errors
/// `long double` (`L`, unless [`DataModel::long_double_is_double`]), `_Float128`,
/// `_Float64x`, `_Float16`, `__float128` (`q`) and decimal floating suffixes (gatun has no
/// value of those types), and malformed constants.
pub(super) fn float_value(text: &str) -> Result<(f64, FloatType), String> {
    let lower = text.to_ascii_lowercase();
    let hex = lower.starts_with("0x");
    // The suffix starts after the last digit of the exponent, or of the mantissa when there
    // is no exponent (in a hexadecimal constant `f` is a digit, so a suffix needs `p`).
    let body_end = if hex {
        match lower.find('p') {
            Some(p) => exponent_end(&lower, p + 1),
            None => {
                return Err(format!(
                    "hexadecimal floating constant `{text}` needs a `p` exponent"
                ))
            }
        }
    } else {
        match lower.find('e') {
            Some(e) => exponent_end(&lower, e + 1),
            None => lower
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(lower.len()),
        }
    };
    let (body, suffix) = lower.split_at(body_end);
    let ty = match suffix {
        "" | "f64" | "f32x" => FloatType::Double,
        "f" | "f32" => FloatType::Float,
        // Where `long double` is `double` (Apple arm64) its constants are `double` values.
        "l" if DataModel::HOST.long_double_is_double => FloatType::Double,
        "l" | "f64x" | "w" => {
            return Err(format!(
                "`{text}` is a `long double` constant, which has no gatun value"
            ))
        }
        "q" | "f128" | "f128x" => {
            return Err(format!(
                "`{text}` is a 128-bit floating constant, which has no gatun value"
            ))
        }
        "f16" | "bf16" => {
            return Err(format!(
                "`{text}` is a 16-bit floating constant, which has no gatun value"
            ))
        }
        s if s.contains(['i', 'j']) => {
            return Err(format!(
                "`{text}` is an imaginary (`_Complex`) constant, which has no gatun value"
            ))
        }
        "df" | "dd" | "dl" => {
            return Err(format!(
                "`{text}` is a decimal floating constant, which has no gatun value"
            ))
        }
        _ => return Err(format!("invalid floating constant `{text}`")),
    };
    let bad = || format!("invalid floating constant `{text}`");
    let value = if hex {
        hex_float(&body[2..], ty).ok_or_else(bad)?
    } else {
        if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return Err(bad());
        }
        match ty {
            FloatType::Double => body.parse::<f64>().map_err(|_| bad())?,
            FloatType::Float => f64::from(body.parse::<f32>().map_err(|_| bad())?),
        }
    };
    Ok((value, ty))
}

/// The end of an exponent (`[+-]digits`) starting at `start`.
fn exponent_end(s: &str, start: usize) -> usize {
    let b = s.as_bytes();
    let mut i = start;
    if matches!(b.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// A hexadecimal floating constant's value: `body` is what follows `0x` up to the end of the
/// exponent (`1.8p3`), rounded to nearest, ties to even, as C requires for a constant that is
/// not exactly representable (and as GCC does).
fn hex_float(body: &str, ty: FloatType) -> Option<f64> {
    let (mantissa, exponent) = body.split_once('p')?;
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((i, f)) => (i, f),
        None => (mantissa, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let exp: i64 = match exponent.parse::<i64>() {
        Ok(e) => e.clamp(-1_000_000, 1_000_000),
        // Only digits with a sign reach here: an overlong exponent saturates.
        Err(_)
            if !exponent.is_empty()
                && exponent
                    .trim_start_matches(['+', '-'])
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                && exponent.len() > 1 =>
        {
            if exponent.starts_with('-') {
                -1_000_000
            } else {
                1_000_000
            }
        }
        Err(_) => return None,
    };
    // m × 2^e2, plus a nonzero remainder below m's last bit when `sticky`.
    let mut m: u128 = 0;
    let mut e2: i64 = exp;
    let mut sticky = false;
    for (frac, digits) in [(false, int_part), (true, frac_part)] {
        for c in digits.chars() {
            let d = u128::from(c.to_digit(16)?);
            if m >> 120 == 0 {
                m = m * 16 + d;
                if frac {
                    e2 -= 4;
                }
            } else {
                sticky |= d != 0;
                if !frac {
                    e2 += 4;
                }
            }
        }
    }
    Some(round_binary(m, e2, sticky, ty))
}

/// `m × 2^e2` (plus a remainder below `m`'s last bit when `sticky`) rounded to `ty`'s
/// precision and range, to nearest with ties to even; subnormals and overflow to infinity as
/// IEEE 754 binary32/binary64 have them.
fn round_binary(m: u128, e2: i64, sticky: bool, ty: FloatType) -> f64 {
    if m == 0 {
        return 0.0;
    }
    let (precision, emin, emax): (i64, i64, i64) = match ty {
        FloatType::Double => (53, -1022, 1023),
        FloatType::Float => (24, -126, 127),
    };
    let bits = i64::from(128 - m.leading_zeros());
    // The exponent of the leading bit.
    let lead = bits - 1 + e2;
    if lead > emax {
        return f64::INFINITY;
    }
    // How many bits are kept: `precision` for a normal result, fewer for a subnormal one.
    let keep = if lead >= emin {
        precision
    } else {
        precision - (emin - lead)
    };
    let shift = bits - keep;
    let (mut mant, mut scale) = if shift <= 0 {
        (m << (-shift).min(127), e2 + shift)
    } else if shift >= 128 {
        // Everything is below half of the smallest subnormal's last bit, unless exactly
        // representable rounding says otherwise: tiny values round to zero.
        return 0.0;
    } else {
        let kept = m >> shift;
        let rest = m & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let up = rest > half || (rest == half && (sticky || kept & 1 == 1));
        (kept + u128::from(up), e2 + shift)
    };
    // Rounding up may carry into a new bit: still exact (a power of two more).
    if mant >> precision != 0 && mant & 1 == 0 {
        mant >>= 1;
        scale += 1;
    }
    if i64::from(128 - mant.leading_zeros()) - 1 + scale > emax {
        return f64::INFINITY;
    }
    // `mant` has at most 54 bits, so it converts exactly; the two scalings by normal powers
    // of two are exact because the result is representable.
    let mut x = mant as f64;
    let first = scale.clamp(-1022, 1023);
    x *= pow2(first);
    let second = (scale - first).clamp(-1022, 1023);
    x *= pow2(second);
    x
}

/// 2^e for a normal exponent `e` (-1022..=1023), built from its bits.
fn pow2(e: i64) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// The prefix of a character constant or string literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Prefix {
    /// No prefix: `char` units.
    Plain,
    /// `u8`: UTF-8 `char` units.
    Utf8,
    /// `L`: `wchar_t` units.
    Wide,
    /// `u`: `char16_t` units.
    Utf16,
    /// `U`: `char32_t` units.
    Utf32,
}

/// The prefix, units and closing-quote-stripped content of the literal `text`: for a plain or
/// `u8` literal the bytes (characters outside ASCII and universal character names as UTF-8),
/// for a wide one the code points (escapes as written).
///
/// # Errors
/// A malformed literal: no quotes, a `\x` without digits, an escape too large for the unit
/// type, an invalid universal character name.
pub(super) fn literal_units(text: &str) -> Result<(Prefix, Vec<u32>), String> {
    let quote = text
        .find(['\'', '"'])
        .ok_or_else(|| format!("`{text}` is not a literal"))?;
    let prefix = match &text[..quote] {
        "" => Prefix::Plain,
        "u8" => Prefix::Utf8,
        "L" => Prefix::Wide,
        "u" => Prefix::Utf16,
        "U" => Prefix::Utf32,
        p => return Err(format!("unknown literal prefix `{p}`")),
    };
    let q = text.as_bytes()[quote] as char;
    let inner = text[quote + 1..]
        .strip_suffix(q)
        .ok_or_else(|| format!("unterminated literal `{text}`"))?;
    let narrow = matches!(prefix, Prefix::Plain | Prefix::Utf8);
    let max: u32 = match prefix {
        Prefix::Plain | Prefix::Utf8 => 0xff,
        Prefix::Utf16 => 0xffff,
        Prefix::Wide if DataModel::HOST.wchar_size == 2 => 0xffff,
        Prefix::Wide | Prefix::Utf32 => u32::MAX,
    };
    let mut units = Vec::with_capacity(inner.len());
    let push_char = |units: &mut Vec<u32>, c: char| {
        if narrow {
            let mut buf = [0u8; 4];
            units.extend(c.encode_utf8(&mut buf).bytes().map(u32::from));
        } else if prefix == Prefix::Utf16 || (prefix == Prefix::Wide && max == 0xffff) {
            let mut buf = [0u16; 2];
            units.extend(c.encode_utf16(&mut buf).iter().map(|&u| u32::from(u)));
        } else {
            units.push(u32::from(c));
        }
    };
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            push_char(&mut units, c);
            continue;
        }
        let Some(e) = chars.next() else {
            return Err(format!("unterminated escape sequence in `{text}`"));
        };
        let v: u32 = match e {
            'n' => 10,
            't' => 9,
            'r' => 13,
            'a' => 7,
            'b' => 8,
            'f' => 12,
            'v' => 11,
            'e' | 'E' => 27,
            '0'..='7' => {
                let mut v = e as u32 - '0' as u32;
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&d @ '0'..='7') => {
                            v = v * 8 + (d as u32 - '0' as u32);
                            chars.next();
                        }
                        _ => break,
                    }
                }
                if v > max {
                    return Err(format!("octal escape sequence out of range in `{text}`"));
                }
                v
            }
            'x' => {
                let mut v: u64 = 0;
                let mut n = 0;
                while let Some(d) = chars.peek().and_then(|c| c.to_digit(16)) {
                    v = v.saturating_mul(16).saturating_add(u64::from(d));
                    chars.next();
                    n += 1;
                }
                if n == 0 {
                    return Err(format!(
                        "`\\x` used with no following hex digits in `{text}`"
                    ));
                }
                if v > u64::from(max) {
                    return Err(format!("hex escape sequence out of range in `{text}`"));
                }
                v as u32
            }
            'u' | 'U' => {
                let n = if e == 'u' { 4 } else { 8 };
                let mut v: u32 = 0;
                for _ in 0..n {
                    let d = chars.next().and_then(|c| c.to_digit(16)).ok_or_else(|| {
                        format!("incomplete universal character name in `{text}`")
                    })?;
                    v = (v << 4) | d;
                }
                let c = char::from_u32(v)
                    .ok_or_else(|| format!("\\{e}{v:x} is not a valid universal character"))?;
                push_char(&mut units, c);
                continue;
            }
            // `\'`, `\"`, `\?`, `\\`, and (with a GCC warning) any other character as itself.
            other => {
                push_char(&mut units, other);
                continue;
            }
        };
        units.push(v);
    }
    Ok((prefix, units))
}

/// The value and C type of character constant `text`, as GCC gives them: a plain one-byte
/// constant is a `char` converted to `int` (negative for bytes over 0x7f where `char` is
/// signed); a plain multi-byte one is `int` built from its bytes, first byte most significant,
/// keeping the last four; `L'x'` is a `wchar_t`, `u'x'` a `char16_t`, `U'x'` a `char32_t`.
///
/// Returns the value and whether its type is unsigned with its width in bits (`int` is
/// (false, 32)).
///
/// # Errors
/// An empty constant, a prefixed constant of more than one character, `u8` constants (C23),
/// and malformed escapes.
pub(super) fn char_value(text: &str) -> Result<(i128, bool, u32), String> {
    let (prefix, units) = literal_units(text)?;
    if units.is_empty() {
        return Err(format!("empty character constant `{text}`"));
    }
    match prefix {
        Prefix::Plain => {
            if let [b] = units[..] {
                let v = i128::from(b);
                let v = if DataModel::HOST.char_signed && v >= 0x80 {
                    v - 0x100
                } else {
                    v
                };
                return Ok((v, false, 32));
            }
            let mut v: u32 = 0;
            for b in units {
                v = (v << 8) | (b & 0xff);
            }
            Ok((i128::from(v as i32), false, 32))
        }
        Prefix::Utf8 => Err(format!(
            "`{text}`: `u8` character constants are C23, not supported"
        )),
        _ if units.len() > 1 => Err(format!(
            "`{text}`: a prefixed character constant must hold one character"
        )),
        Prefix::Wide => {
            let v = units[0];
            let size = DataModel::HOST.wchar_size;
            if size == 2 {
                Ok((i128::from(v), true, 16))
            } else if DataModel::HOST.wchar_signed {
                Ok((i128::from(v as i32), false, 32))
            } else {
                Ok((i128::from(v), true, 32))
            }
        }
        Prefix::Utf16 => Ok((i128::from(units[0]), true, 16)),
        Prefix::Utf32 => Ok((i128::from(units[0]), true, 32)),
    }
}

/// The bytes of the (adjacent, concatenated) string literals `texts`, without the
/// terminating NUL.
///
/// # Errors
/// A wide (`L`, `u`, `U`) literal among them (gatun's string constants are `char` strings),
/// and malformed escapes.
pub(super) fn string_bytes<'t>(
    texts: impl IntoIterator<Item = &'t str>,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for text in texts {
        let (prefix, units) = literal_units(text)?;
        if !matches!(prefix, Prefix::Plain | Prefix::Utf8) {
            return Err(format!(
                "`{text}` is a wide string literal; only `char` strings are constants"
            ));
        }
        out.extend(units.into_iter().map(|u| u as u8));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_and_hex_floats_round_like_c() {
        assert_eq!(float_value("1.5").unwrap(), (1.5, FloatType::Double));
        assert_eq!(float_value("1.5f").unwrap(), (1.5, FloatType::Float));
        assert_eq!(float_value(".5e1").unwrap().0, 5.0);
        assert_eq!(float_value("1.").unwrap().0, 1.0);
        assert_eq!(float_value("0.1f").unwrap().0, f64::from(0.1f32));
        assert_eq!(float_value("0x1.8p3").unwrap().0, 12.0);
        assert_eq!(float_value("0x1p-1074").unwrap().0, f64::from_bits(1));
        assert_eq!(float_value("0x1p-1075").unwrap().0, 0.0); // a tie: to even (zero)
        assert_eq!(float_value("0x1.8p-1074").unwrap().0, f64::from_bits(2)); // tie: to even
        assert_eq!(float_value("0x1.fffffffffffff8p0").unwrap().0, 2.0); // tie: up to even
        assert_eq!(
            float_value("0x1.fffffffffffff7ffp0").unwrap().0,
            f64::from_bits(0x3fff_ffff_ffff_ffff)
        );
        assert_eq!(float_value("0x1p1024").unwrap().0, f64::INFINITY);
        assert_eq!(
            float_value("0x1.fffffep127f").unwrap().0,
            f64::from(f32::MAX)
        );
        assert_eq!(
            float_value("0x1p-149f").unwrap().0,
            f64::from(f32::from_bits(1))
        );
        assert_eq!(float_value("0xffp0").unwrap().0, 255.0);
        assert_eq!(float_value("1e3f32").unwrap(), (1000.0, FloatType::Float));
        if DataModel::HOST.long_double_is_double {
            assert_eq!(float_value("1.0L").unwrap(), (1.0, FloatType::Double));
        } else {
            assert!(float_value("1.0L").unwrap_err().contains("long double"));
        }
        assert!(float_value("1.0q").unwrap_err().contains("128-bit"));
        assert!(float_value("1.0df").unwrap_err().contains("decimal"));
        assert!(float_value("1.0iF").unwrap_err().contains("imaginary"));
        assert!(float_value("1.0x").is_err());
        assert!(float_value("0x1.8").is_err());
    }

    #[test]
    fn character_constants_take_gccs_values() {
        assert_eq!(char_value("'a'").unwrap(), (97, false, 32));
        let ff = if DataModel::HOST.char_signed { -1 } else { 255 };
        assert_eq!(char_value("'\\xff'").unwrap().0, ff);
        assert_eq!(char_value("'\\377'").unwrap().0, ff);
        assert_eq!(char_value("'ab'").unwrap().0, 0x6162);
        assert_eq!(char_value("'\\xff\\xff\\xff\\xff'").unwrap().0, -1);
        assert_eq!(char_value("'abcde'").unwrap().0, 0x6263_6465);
        assert_eq!(char_value("U'\\U0001F600'").unwrap(), (0x1F600, true, 32));
        assert_eq!(char_value("u'é'").unwrap(), (0xe9, true, 16));
        assert!(char_value("''").is_err());
        assert!(char_value("L'ab'").is_err());
        assert!(char_value("'\\x100'").is_err());
        assert!(char_value("'\\x'").is_err());
    }

    #[test]
    fn strings_decode_escapes_and_concatenate() {
        assert_eq!(
            string_bytes(["\"a\\tb\\0\"", "u8\"é\\u00e9\""]).unwrap(),
            b"a\tb\0\xc3\xa9\xc3\xa9"
        );
        assert_eq!(string_bytes(["\"\\x41\\101\\\"\""]).unwrap(), b"AA\"");
        assert!(string_bytes(["\"a\"", "L\"b\""])
            .unwrap_err()
            .contains("wide"));
        assert!(string_bytes(["\"\\777\""]).is_err());
    }
}
