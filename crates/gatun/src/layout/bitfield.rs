//! C bitfields: where gcc puts them, and typed access to them in memory.
//!
//! gatun layouts are byte-granular, so a record with bitfields is laid out here bit by bit as
//! gcc does on the SysV x86-64, AArch64 (AAPCS64), RISC-V 64, s390x and PPC64LE targets, then
//! expressed as an ordinary
//! struct layout: ordinary members at their offsets, and each run of bytes that holds
//! bitfields (named or not) as an unnamed `u8` sequence (integer bytes, so the linker
//! classifies a struct passed by value as gcc does: bitfield bytes, even unnamed ones, are
//! INTEGER). The bitfields themselves are described
//! by [`BitField`]s, which read and write them in a segment.
//!
//! gcc's rules (`PCC_BITFIELD_TYPE_MATTERS`), checked against gcc in `tests/cdecl_layouts.rs`:
//! - a bitfield is placed at the next free bit, unless it would cross a boundary of a unit of
//!   its declared type's size — then it starts at the next multiple of the type's alignment;
//!   in a packed record (`__attribute__((packed))` on the record or the member) or under
//!   `#pragma pack` there is no such move;
//! - a named bitfield raises the record's alignment to its type's (1 when packed, at most
//!   `n` under `#pragma pack(n)`); unnamed ones do so only on AAPCS64 targets other than
//!   Apple's (gcc's `TARGET_ALIGN_ANON_BITFIELD`; see [`ANON_BITFIELDS_ALIGN`]);
//! - a zero-width bitfield moves the next member to a multiple of its type's alignment (even
//!   when packed); on x86-64 and Apple arm64 it does not raise the record's alignment, on the
//!   other AAPCS64 targets it raises it to its type's alignment, whatever the packing;
//! - in a union every member starts at bit 0; a bitfield member occupies whole bytes.
//!
//! Bit positions (a [`BitField`]'s offset, the rules above) count from the start of the
//! record in the target's bit order, and the rules place fields at the same positions on every
//! target; what differs is where a position is in memory:
//! - little-endian targets number bits from the least significant bit of each byte: position
//!   `p` is bit `p % 8` (counted from the least significant) of byte `p / 8`, and a field's
//!   value runs from its least significant bit at its first position (the field is a
//!   little-endian integer of its width);
//! - big-endian targets (s390x) number them from the most significant bit: position `p` is bit
//!   `7 - p % 8` of byte `p / 8`, and a field's value runs from its most significant bit at its
//!   first position (a big-endian integer of its width). This is how gcc allocates bitfields
//!   on big-endian targets, from the most significant bit of the storage unit (s390x ELF ABI
//!   Supplement, "Bit-Fields": bit-fields are allocated from left to right).

use std::sync::Arc;

use super::{MemoryLayout, ScalarKind, ValueLayout};
use crate::error::{Error, Result};
use crate::memory::MemorySegment;
use crate::value::Value;

/// One bitfield member of a record: its declared integer type, bit offset and width.
///
/// Offsets count bits from the start of the record; the value occupies bits `bit_offset() ..
/// bit_offset() + bit_width()` in the target's bit numbering (see the module docs: on a
/// little-endian target bit 0 is the least significant bit of byte 0 and the value's least
/// significant bit comes first; on a big-endian target bit 0 is the most significant bit of
/// byte 0 and the value's most significant bit comes first). `Send + Sync`, cheap to clone.
///
/// ```
/// use gatun::cdecl::Declarations;
/// use gatun::memory::{Arena, SegmentAllocator};
/// use gatun::Value;
///
/// let d = Declarations::parse("struct flags { unsigned ready : 1; int level : 3; };").unwrap();
/// let level = d.bitfield("struct flags", "level").unwrap();
/// assert_eq!((level.bit_offset(), level.bit_width()), (1, 3));
/// let arena = Arena::confined();
/// let s = arena.allocate_layout(d.layout("struct flags").unwrap()).unwrap();
/// level.set(&s, -2).unwrap();
/// assert_eq!(level.get(&s).unwrap(), Value::I32(-2));
/// assert!(level.set(&s, 4).is_err()); // 3 signed bits hold -4..=3
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BitField {
    name: Arc<str>,
    kind: ScalarKind,
    bit_offset: usize,
    bit_width: u32,
}

impl BitField {
    /// A bitfield `name` of integer type `kind`, `bit_width` bits at `bit_offset`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] if `kind` is not an integer or `bool` type, or `bit_width` is 0
    /// or wider than `kind`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{BitField, ScalarKind};
    /// let f = BitField::new("mode", ScalarKind::U32, 4, 3).unwrap();
    /// assert_eq!((f.name(), f.bit_offset(), f.bit_width()), ("mode", 4, 3));
    /// assert!(BitField::new("x", ScalarKind::U8, 0, 9).is_err()); // wider than its type
    /// assert!(BitField::new("x", ScalarKind::F32, 0, 1).is_err());
    /// ```
    pub fn new(
        name: impl Into<Arc<str>>,
        kind: ScalarKind,
        bit_offset: usize,
        bit_width: u32,
    ) -> Result<BitField> {
        let name = name.into();
        if kind.is_float() || kind == ScalarKind::Pointer {
            return Err(Error::Unsupported {
                type_name: kind.name().into(),
                reason: format!("bitfield `{name}` must have an integer or bool type"),
            });
        }
        let bits = kind.byte_size() * 8;
        if bit_width == 0 || bit_width as usize > bits {
            return Err(Error::Unsupported {
                type_name: kind.name().into(),
                reason: format!(
                    "bitfield `{name}` is {bit_width} bits wide; expected 1..={bits} bits"
                ),
            });
        }
        Ok(BitField {
            name,
            kind,
            bit_offset,
            bit_width,
        })
    }

    /// The member's name.
    ///
    /// ```
    /// use gatun::layout::{BitField, ScalarKind};
    /// assert_eq!(BitField::new("ready", ScalarKind::Bool, 0, 1).unwrap().name(), "ready");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The declared type (`I32` for `int x : 3`; `Bool` for `_Bool`).
    ///
    /// ```
    /// use gatun::layout::{BitField, ScalarKind};
    /// assert_eq!(BitField::new("n", ScalarKind::I16, 0, 5).unwrap().kind(), ScalarKind::I16);
    /// ```
    pub fn kind(&self) -> ScalarKind {
        self.kind
    }

    /// Offset of the first bit, in bits from the start of the record.
    ///
    /// ```
    /// use gatun::layout::{BitField, ScalarKind};
    /// assert_eq!(BitField::new("n", ScalarKind::U32, 9, 2).unwrap().bit_offset(), 9);
    /// ```
    pub fn bit_offset(&self) -> usize {
        self.bit_offset
    }

    /// Width, in bits.
    ///
    /// ```
    /// use gatun::layout::{BitField, ScalarKind};
    /// assert_eq!(BitField::new("n", ScalarKind::U32, 9, 2).unwrap().bit_width(), 2);
    /// ```
    pub fn bit_width(&self) -> u32 {
        self.bit_width
    }

    /// The same bitfield `bytes` bytes further into an enclosing record (for members of
    /// anonymous nested records).
    pub(crate) fn shifted(&self, bytes: usize) -> BitField {
        BitField {
            bit_offset: self.bit_offset + bytes * 8,
            ..self.clone()
        }
    }

    /// First byte and number of bytes holding the bits, relative to the record.
    fn byte_span(&self) -> (usize, usize) {
        let first = self.bit_offset / 8;
        let end_bit = self.bit_offset % 8 + self.bit_width as usize;
        (first, end_bit.div_ceil(8))
    }

    fn mask(&self) -> u128 {
        (1u128 << self.bit_width) - 1
    }

    /// How far the value is from bit 0 of the `n` bytes holding it, read as one integer in the
    /// target's byte order ([`load`]): its first position counted from the least significant
    /// bit (little-endian), or what follows its last one (big-endian).
    fn shift(&self, n: usize) -> usize {
        let first = self.bit_offset % 8;
        if cfg!(target_endian = "big") {
            n * 8 - first - self.bit_width as usize
        } else {
            first
        }
    }

    /// Reads the bitfield of the record that starts at byte 0 of `segment`, as a [`Value`] of
    /// its declared type (sign-extended for signed types); the same shape as
    /// [`Accessor::get`](super::Accessor::get).
    ///
    /// # Errors
    /// [`Error::OutOfBounds`] if the bytes holding it are not inside `segment`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{BitField, ScalarKind};
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Value;
    /// let hi = BitField::new("hi", ScalarKind::U8, 4, 4).unwrap();
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_from_bytes(&[0xA5]).unwrap();
    /// // Bits 4..8: the high nibble on a little-endian target, the low one on a big-endian one.
    /// let nibble = if cfg!(target_endian = "little") { 0xA } else { 0x5 };
    /// assert_eq!(hi.get(&seg).unwrap(), Value::U8(nibble));
    /// assert!(hi.get(&seg.slice(0, 0).unwrap()).is_err()); // the byte is not in the segment
    /// ```
    pub fn get(&self, segment: &MemorySegment<'_>) -> Result<Value<'static>> {
        self.get_at(segment, 0)
    }

    /// Reads the bitfield of the record that starts at byte `base` of `segment` (one element
    /// of an array of records: `base = i * layout.byte_size()`), as
    /// [`Accessor::get_at`](super::Accessor::get_at) does for an ordinary member.
    ///
    /// # Errors
    /// As [`BitField::get`]; [`Error::OutOfBounds`] also when `base` is so large that the
    /// bytes' offset overflows.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{BitField, ScalarKind};
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Value;
    /// let hi = BitField::new("hi", ScalarKind::U8, 4, 4).unwrap();
    /// let arena = Arena::confined();
    /// let records = arena.allocate_from_bytes(&[0xA5, 0x3C]).unwrap(); // two 1-byte records
    /// let nibble = if cfg!(target_endian = "little") { 0x3 } else { 0xC };
    /// assert_eq!(hi.get_at(&records, 1).unwrap(), Value::U8(nibble));
    /// assert!(hi.get_at(&records, 2).is_err()); // a record at byte 2 is outside the segment
    /// ```
    pub fn get_at(&self, segment: &MemorySegment<'_>, base: usize) -> Result<Value<'static>> {
        let (first, n) = self.byte_span();
        let mut buf = [0u8; 16];
        segment.copy_to_slice(self.at(base, first, n, segment)?, &mut buf[..n])?;
        let raw = (load(&buf, n) >> self.shift(n)) & self.mask();
        let signed = self.kind.is_signed();
        let v: i128 = if signed && (raw >> (self.bit_width - 1)) & 1 == 1 {
            raw as i128 - (1i128 << self.bit_width)
        } else {
            raw as i128
        };
        // In range of the declared type by construction (the width is at most its bits).
        Ok(match self.kind {
            ScalarKind::Bool => Value::Bool(v != 0),
            ScalarKind::I8 => Value::I8(v as i8),
            ScalarKind::U8 => Value::U8(v as u8),
            ScalarKind::I16 => Value::I16(v as i16),
            ScalarKind::U16 => Value::U16(v as u16),
            ScalarKind::I32 => Value::I32(v as i32),
            ScalarKind::U32 => Value::U32(v as u32),
            ScalarKind::I64 => Value::I64(v as i64),
            ScalarKind::U64 | ScalarKind::Pointer | ScalarKind::F32 | ScalarKind::F64 => {
                Value::U64(v as u64)
            }
        })
    }

    /// Writes `value` into the bitfield of the record that starts at byte 0 of `segment`,
    /// leaving every other bit as it was; the same shape as
    /// [`Accessor::set`](super::Accessor::set). `value` is converted to the declared type
    /// with [`Value::convert_to`] (so `set(&seg, 3)` works for any integer bitfield,
    /// range-checked) and must fit in the width.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] / [`Error::ValueMismatch`] from the conversion;
    /// [`Error::ValueMismatch`] for a value the width cannot hold (3 signed bits hold
    /// -4..=3); [`Error::OutOfBounds`] if the bytes are not inside `segment`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{BitField, ScalarKind};
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Error;
    /// let lo = BitField::new("lo", ScalarKind::U8, 0, 4).unwrap();
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_from_bytes(&[0xA5]).unwrap();
    /// lo.set(&seg, 3).unwrap(); // an i32 converted to u8
    /// // The other four bits are kept (bits 0..4 are the low nibble on a little-endian target).
    /// let byte = if cfg!(target_endian = "little") { 0xA3 } else { 0x35 };
    /// assert_eq!(seg.get::<u8>(0).unwrap(), byte);
    /// assert!(matches!(lo.set(&seg, 16), Err(Error::ValueMismatch { .. }))); // 4 bits
    /// assert!(matches!(lo.set(&seg, -1), Err(Error::OutOfRange { .. }))); // not a u8
    /// ```
    pub fn set<'v>(&self, segment: &MemorySegment<'_>, value: impl Into<Value<'v>>) -> Result<()> {
        self.set_at(segment, 0, value)
    }

    /// As [`BitField::set`], for the record that starts at byte `base` of `segment`.
    ///
    /// # Errors
    /// As [`BitField::set`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{BitField, ScalarKind};
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Value;
    /// let level = BitField::new("level", ScalarKind::I32, 1, 3).unwrap();
    /// let arena = Arena::confined();
    /// let records = arena.allocate(8, 4).unwrap(); // two 4-byte records
    /// records.fill(0);
    /// level.set_at(&records, 4, -2).unwrap();
    /// assert_eq!(level.get_at(&records, 4).unwrap(), Value::I32(-2));
    /// assert_eq!(level.get_at(&records, 0).unwrap(), Value::I32(0));
    /// ```
    pub fn set_at<'v>(
        &self,
        segment: &MemorySegment<'_>,
        base: usize,
        value: impl Into<Value<'v>>,
    ) -> Result<()> {
        let position = || format!("bitfield `{}`", self.name);
        let value = value.into().convert_to(self.kind).map_err(|e| match e {
            Error::ValueMismatch {
                expected, found, ..
            } => Error::ValueMismatch {
                position: position(),
                expected,
                found,
            },
            other => other,
        })?;
        let v: i128 = match value {
            Value::Bool(b) => i128::from(b),
            Value::I8(x) => i128::from(x),
            Value::U8(x) => i128::from(x),
            Value::I16(x) => i128::from(x),
            Value::U16(x) => i128::from(x),
            Value::I32(x) => i128::from(x),
            Value::U32(x) => i128::from(x),
            Value::I64(x) => i128::from(x),
            Value::U64(x) => i128::from(x),
            other => {
                // `convert_to` gives a value of the (integer) declared kind.
                return Err(Error::ValueMismatch {
                    position: position(),
                    expected: self.kind.name().into(),
                    found: format!("{other:?}"),
                });
            }
        };
        let (lo, hi) = if self.kind.is_signed() {
            (
                -(1i128 << (self.bit_width - 1)),
                (1i128 << (self.bit_width - 1)) - 1,
            )
        } else {
            (0, (1i128 << self.bit_width) - 1)
        };
        if v < lo || v > hi {
            return Err(Error::ValueMismatch {
                position: position(),
                expected: format!("a value of {} bits ({lo}..={hi})", self.bit_width),
                found: v.to_string(),
            });
        }
        let (first, n) = self.byte_span();
        let at = self.at(base, first, n, segment)?;
        let mut buf = [0u8; 16];
        segment.copy_to_slice(at, &mut buf[..n])?;
        let shift = self.shift(n);
        let mut word = load(&buf, n);
        word &= !(self.mask() << shift);
        word |= ((v as u128) & self.mask()) << shift;
        segment.copy_from_slice(at, &store(word, n)[..n])
    }

    /// The offset in `segment` of the `n` bytes holding the bits of the record at `base`
    /// (`first` is their offset in the record).
    fn at(
        &self,
        base: usize,
        first: usize,
        n: usize,
        segment: &MemorySegment<'_>,
    ) -> Result<usize> {
        base.checked_add(first).ok_or_else(|| Error::OutOfBounds {
            offset: base,
            access_size: n,
            segment_size: segment.byte_size(),
        })
    }
}

/// The first `n` (1 to 16) bytes of `buf` as one unsigned integer in the target's byte order.
fn load(buf: &[u8; 16], n: usize) -> u128 {
    if cfg!(target_endian = "big") {
        // The `n` bytes are the most significant of the 16: moved down to the low ones.
        u128::from_be_bytes(*buf) >> (8 * (16 - n))
    } else {
        u128::from_le_bytes(*buf)
    }
}

/// The inverse of [`load`]: `word` (at most `n` bytes wide) as bytes, its `n` bytes first.
fn store(word: u128, n: usize) -> [u8; 16] {
    if cfg!(target_endian = "big") {
        (word << (8 * (16 - n))).to_be_bytes()
    } else {
        word.to_le_bytes()
    }
}

/// Whether unnamed bitfields (zero-width ones included) raise the alignment of the record
/// holding them, as gcc's `TARGET_ALIGN_ANON_BITFIELD` has it for this build's target: true on
/// AArch64 (AAPCS64) except Apple's arm64, false on x86-64 System V, Apple arm64, RISC-V 64,
/// s390x and PPC64LE (checked with `riscv64-linux-gnu-gcc`, `s390x-linux-gnu-gcc` and
/// `powerpc64le-linux-gnu-gcc` in `tests/cdecl_layouts.rs`).
const ANON_BITFIELDS_ALIGN: bool = cfg!(all(target_arch = "aarch64", not(target_vendor = "apple")));

/// A member of a record with bitfields, for [`c_record_with_bitfields`].
#[derive(Debug, Clone)]
pub(crate) enum RecordField {
    /// An ordinary member, its alignment already what the record gives it (packing and
    /// `aligned` applied), with the bitfields of an anonymous nested record it is.
    Ordinary(MemoryLayout, Vec<BitField>),
    /// A bitfield: name (`None` if unnamed), declared type, width, whether it is packed
    /// (`packed` on the record or the member).
    Bits {
        name: Option<Arc<str>>,
        kind: ScalarKind,
        type_alignment: usize,
        width: u32,
        packed: bool,
    },
}

/// Lays out a struct (or, with `union`, a union) with bitfields as gcc does (see the module
/// docs); `pack` is the `#pragma pack` in force. Returns the layout and its named bitfields.
///
/// # Errors
/// [`Error::SizeOverflow`] for records too large; layout construction errors.
pub(crate) fn c_record_with_bitfields(
    fields: Vec<RecordField>,
    union: bool,
    pack: Option<usize>,
) -> Result<(MemoryLayout, Vec<BitField>)> {
    record_with_bitfields(fields, union, pack, ANON_BITFIELDS_ALIGN)
}

/// [`c_record_with_bitfields`] with the target's rule for unnamed bitfields given:
/// `anon_align` is [`ANON_BITFIELDS_ALIGN`] for the target laid out for.
fn record_with_bitfields(
    fields: Vec<RecordField>,
    union: bool,
    pack: Option<usize>,
    anon_align: bool,
) -> Result<(MemoryLayout, Vec<BitField>)> {
    let overflow = || Error::SizeOverflow {
        what: "record with bitfields".into(),
    };
    let mut bit: usize = 0; // next free bit (structs)
    let mut end_bits: usize = 0; // bits used (unions: the largest member)
    let mut align = 1usize;
    let mut ordinary: Vec<(usize, MemoryLayout)> = Vec::new();
    // The bytes of the record's own bitfields, named or not (they become `u8` runs: gcc
    // classifies even unnamed bitfields' bytes as INTEGER), and the named bitfields in
    // declaration order (with those of anonymous record members).
    let mut storage: Vec<(usize, usize)> = Vec::new();
    let mut bits: Vec<BitField> = Vec::new();
    for f in fields {
        match f {
            RecordField::Ordinary(l, inner) => {
                let a = l.byte_alignment();
                let start = if union {
                    0
                } else {
                    align_up(bit.div_ceil(8), a).ok_or_else(overflow)?
                };
                let end = start.checked_add(l.byte_size()).ok_or_else(overflow)?;
                let end = end.checked_mul(8).ok_or_else(overflow)?;
                bits.extend(inner.iter().map(|b| b.shifted(start)));
                ordinary.push((start, l));
                align = align.max(a);
                if union {
                    end_bits = end_bits.max(end);
                } else {
                    bit = end;
                }
            }
            RecordField::Bits {
                name,
                kind,
                type_alignment,
                width,
                packed,
            } => {
                let size_bits = kind.byte_size() * 8;
                let unit = type_alignment * 8;
                if width == 0 {
                    // Packing does not lower a zero-width bitfield's alignment.
                    if anon_align {
                        align = align.max(type_alignment);
                    }
                    if !union {
                        bit = align_up(bit, unit).ok_or_else(overflow)?;
                    }
                    continue;
                }
                let mut at = if union { 0 } else { bit };
                if !packed
                    && pack.is_none()
                    && at / size_bits != (at + width as usize - 1) / size_bits
                {
                    at = align_up(at, unit).ok_or_else(overflow)?;
                }
                let end = at.checked_add(width as usize).ok_or_else(overflow)?;
                storage.push((at / 8, end.div_ceil(8)));
                if name.is_some() || anon_align {
                    let eff = if packed {
                        1
                    } else {
                        pack.map_or(type_alignment, |p| type_alignment.min(p))
                    };
                    align = align.max(eff);
                }
                if let Some(n) = name {
                    bits.push(BitField::new(n, kind, at, width)?);
                }
                if union {
                    end_bits = end_bits.max(end.div_ceil(8) * 8);
                } else {
                    bit = end;
                }
            }
        }
    }
    let used_bytes = if union { end_bits / 8 } else { bit.div_ceil(8) };
    let size = align_up(used_bytes, align).ok_or_else(overflow)?;
    let layout = if union {
        union_with_bitfields(ordinary, &storage, size, align)?
    } else {
        struct_with_bitfields(ordinary, storage, size, align)?
    };
    Ok((layout, bits))
}

fn align_up(v: usize, a: usize) -> Option<usize> {
    v.checked_add(a - 1).map(|x| x / a * a)
}

/// The struct: ordinary members at their offsets, the bitfield bytes (`storage`: `start..end`
/// byte ranges) as `u8` runs, padding between, `size` bytes aligned to `align`.
fn struct_with_bitfields(
    ordinary: Vec<(usize, MemoryLayout)>,
    mut spans: Vec<(usize, usize)>,
    size: usize,
    align: usize,
) -> Result<MemoryLayout> {
    // The bytes holding bitfields, as sorted disjoint runs.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    spans.sort_unstable();
    for (s, e) in spans {
        match runs.last_mut() {
            Some((_, last_end)) if s <= *last_end => *last_end = (*last_end).max(e),
            _ => runs.push((s, e)),
        }
    }
    let mut items: Vec<(usize, MemoryLayout)> = ordinary;
    for (s, e) in runs {
        items.push((s, MemoryLayout::sequence_layout(e - s, ValueLayout::U8)?));
    }
    items.sort_by_key(|(off, _)| *off);
    let mut members: Vec<MemoryLayout> = Vec::with_capacity(items.len() * 2 + 1);
    let mut at = 0usize;
    for (off, l) in items {
        if off < at {
            // Members never overlap bitfield bytes by construction; refuse rather than
            // build a layout with wrong offsets.
            return Err(Error::SizeOverflow {
                what: format!("record with bitfields: member at byte {off} overlaps byte {at}"),
            });
        }
        if off > at {
            members.push(MemoryLayout::padding_layout(off - at)?);
        }
        at = off + l.byte_size();
        members.push(l);
    }
    if size > at {
        members.push(MemoryLayout::padding_layout(size - at)?);
    }
    let s = MemoryLayout::struct_layout(members)?;
    let a = align.max(s.byte_alignment());
    Ok(s.with_alignment_unchecked(a))
}

/// The union: ordinary members, and one `u8` run per bitfield (`storage`, all at offset 0).
fn union_with_bitfields(
    ordinary: Vec<(usize, MemoryLayout)>,
    storage: &[(usize, usize)],
    size: usize,
    align: usize,
) -> Result<MemoryLayout> {
    let mut members: Vec<MemoryLayout> = ordinary.into_iter().map(|(_, l)| l).collect();
    for &(_, end) in storage {
        members.push(MemoryLayout::sequence_layout(end, ValueLayout::U8)?);
    }
    if members.is_empty() || members.iter().all(|m| m.byte_size() < size) {
        members.push(MemoryLayout::padding_layout(size)?);
    }
    let u = MemoryLayout::union_layout(members)?;
    let a = align.max(u.byte_alignment());
    let u = u.with_alignment_unchecked(a);
    if u.byte_size() != size {
        return Err(Error::SizeOverflow {
            what: format!(
                "union with bitfields: {} bytes, expected {size}",
                u.byte_size()
            ),
        });
    }
    Ok(u)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_checks_kind_and_width() {
        assert!(BitField::new("f", ScalarKind::F32, 0, 3).is_err());
        assert!(BitField::new("p", ScalarKind::Pointer, 0, 3).is_err());
        assert!(BitField::new("z", ScalarKind::I32, 0, 0).is_err());
        assert!(BitField::new("w", ScalarKind::I8, 0, 9).is_err());
        assert!(BitField::new("ok", ScalarKind::U64, 3, 64).is_ok());
    }

    #[test]
    fn wide_fields_spanning_nine_bytes_round_trip() {
        let mut bytes = [0xAAu8; 10];
        let seg = MemorySegment::of_slice(&mut bytes);
        let u = BitField::new("u", ScalarKind::U64, 7, 64).unwrap();
        u.set(&seg, Value::U64(u64::MAX - 1)).unwrap();
        assert_eq!(u.get(&seg).unwrap(), Value::U64(u64::MAX - 1));
        // Bits outside the field are untouched: positions 0..7 of byte 0 and 71 of byte 8
        // (the low bits of byte 0 and the high bit of byte 8 on a little-endian target, the
        // reverse on a big-endian one).
        let (first, last) = if cfg!(target_endian = "little") {
            (0x7f, 0x80)
        } else {
            (0xfe, 0x01)
        };
        assert_eq!(seg.get::<u8>(0).unwrap() & first, 0xAA & first);
        assert_eq!(seg.get::<u8>(8).unwrap() & last, 0xAA & last);
        assert_eq!(seg.get::<u8>(9).unwrap(), 0xAA);
        let i = BitField::new("i", ScalarKind::I64, 7, 64).unwrap();
        i.set(&seg, Value::I64(i64::MIN)).unwrap();
        assert_eq!(i.get(&seg).unwrap(), Value::I64(i64::MIN));
        let s = BitField::new("s", ScalarKind::I8, 13, 3).unwrap();
        for v in -4..=3 {
            s.set(&seg, Value::I8(v)).unwrap();
            assert_eq!(s.get(&seg).unwrap(), Value::I8(v));
        }
        assert!(s.set(&seg, Value::I8(4)).is_err());
        assert!(s.set(&seg, Value::I8(-5)).is_err());
        let b = BitField::new("b", ScalarKind::Bool, 1, 1).unwrap();
        b.set(&seg, Value::Bool(true)).unwrap();
        assert_eq!(b.get(&seg).unwrap(), Value::Bool(true));
        // Out of bounds: the record would end past the segment.
        assert!(u.get_at(&seg, 2).is_err());
        assert!(u.get_at(&seg, usize::MAX).is_err());
    }

    #[test]
    fn bits_are_placed_in_the_targets_bit_order() {
        // struct { unsigned short a : 4, b : 12; } with a = 0x5, b = 0xABC: gcc stores
        // [0xC5, 0xAB] on a little-endian target (a in the low nibble of byte 0, b's low
        // nibble above it), [0x5A, 0xBC] on a big-endian one (a in the high nibble, b's high
        // nibble below it).
        let mut bytes = [0u8; 2];
        let seg = MemorySegment::of_slice(&mut bytes);
        let a = BitField::new("a", ScalarKind::U16, 0, 4).unwrap();
        let b = BitField::new("b", ScalarKind::U16, 4, 12).unwrap();
        a.set(&seg, Value::U16(0x5)).unwrap();
        b.set(&seg, Value::U16(0xABC)).unwrap();
        let want = if cfg!(target_endian = "little") {
            [0xC5, 0xAB]
        } else {
            [0x5A, 0xBC]
        };
        assert_eq!([seg.get::<u8>(0).unwrap(), seg.get::<u8>(1).unwrap()], want);
        assert_eq!(a.get(&seg).unwrap(), Value::U16(0x5));
        assert_eq!(b.get(&seg).unwrap(), Value::U16(0xABC));
        // A signed field of one bit in the middle of a byte: position 3.
        let mut byte = [0u8; 1];
        let seg = MemorySegment::of_slice(&mut byte);
        let s = BitField::new("s", ScalarKind::I8, 3, 1).unwrap();
        s.set(&seg, Value::I8(-1)).unwrap();
        let want = if cfg!(target_endian = "little") {
            0x08
        } else {
            0x10
        };
        assert_eq!(seg.get::<u8>(0).unwrap(), want);
        assert_eq!(s.get(&seg).unwrap(), Value::I8(-1));
    }

    #[test]
    fn records_follow_gccs_rules() {
        let bits = |name: &str, kind: ScalarKind, width: u32| RecordField::Bits {
            name: Some(name.into()),
            kind,
            type_alignment: kind.natural_alignment(),
            width,
            packed: false,
        };
        // struct { char c; int x : 30; int y : 4; }: x moves to bit 32, y to bit 64.
        let (l, b) = c_record_with_bitfields(
            vec![
                RecordField::Ordinary(ValueLayout::I8.into(), Vec::new()),
                bits("x", ScalarKind::I32, 30),
                bits("y", ScalarKind::I32, 4),
            ],
            false,
            None,
        )
        .unwrap();
        assert_eq!((l.byte_size(), l.byte_alignment()), (12, 4));
        assert_eq!((b[0].bit_offset(), b[1].bit_offset()), (32, 64));
        // Under #pragma pack(2) nothing moves: x at bit 8, y at bit 38; 6 bytes.
        let (l, b) = c_record_with_bitfields(
            vec![
                RecordField::Ordinary(ValueLayout::I8.into(), Vec::new()),
                bits("x", ScalarKind::I32, 30),
                bits("y", ScalarKind::I32, 4),
            ],
            false,
            Some(2),
        )
        .unwrap();
        assert_eq!((l.byte_size(), l.byte_alignment()), (6, 2));
        assert_eq!((b[0].bit_offset(), b[1].bit_offset()), (8, 38));
        // union { char c; int x : 12; }: 4 bytes, aligned to 4.
        let (l, _) = c_record_with_bitfields(
            vec![
                RecordField::Ordinary(ValueLayout::I8.into(), Vec::new()),
                bits("x", ScalarKind::I32, 12),
            ],
            true,
            None,
        )
        .unwrap();
        assert_eq!((l.byte_size(), l.byte_alignment()), (4, 4));
    }

    #[test]
    fn unnamed_bitfields_align_the_record_only_where_the_target_says() {
        let char_field = || RecordField::Ordinary(ValueLayout::I8.into(), Vec::new());
        let unnamed = |kind: ScalarKind, width: u32, packed: bool| RecordField::Bits {
            name: None,
            kind,
            type_alignment: kind.natural_alignment(),
            width,
            packed,
        };
        // (fields, union, pack) -> (size, alignment) without / with the AAPCS64 rule; the
        // figures are x86-64 gcc's and aarch64-linux-gnu-gcc's.
        type Case = (
            Vec<RecordField>,
            bool,
            Option<usize>,
            (usize, usize),
            (usize, usize),
        );
        let cases: Vec<Case> = vec![
            // struct { char c; int :0; char d; }
            (
                vec![
                    char_field(),
                    unnamed(ScalarKind::I32, 0, false),
                    char_field(),
                ],
                false,
                None,
                (5, 1),
                (8, 4),
            ),
            // struct { char c; int :3; char d; }
            (
                vec![
                    char_field(),
                    unnamed(ScalarKind::I32, 3, false),
                    char_field(),
                ],
                false,
                None,
                (3, 1),
                (4, 4),
            ),
            // #pragma pack(2) struct { char c; int :0; char d; }: packing does not cap it
            (
                vec![
                    char_field(),
                    unnamed(ScalarKind::I32, 0, false),
                    char_field(),
                ],
                false,
                Some(2),
                (5, 1),
                (8, 4),
            ),
            // #pragma pack(2) struct { char c; long long :3; char d; }
            (
                vec![
                    char_field(),
                    unnamed(ScalarKind::I64, 3, false),
                    char_field(),
                ],
                false,
                Some(2),
                (3, 1),
                (4, 2),
            ),
            // struct __attribute__((packed)) { char c; int :3; char d; }
            (
                vec![
                    char_field(),
                    unnamed(ScalarKind::I32, 3, true),
                    char_field(),
                ],
                false,
                None,
                (3, 1),
                (3, 1),
            ),
            // union { char c; long long :0; }
            (
                vec![char_field(), unnamed(ScalarKind::I64, 0, false)],
                true,
                None,
                (1, 1),
                (8, 8),
            ),
            // union { char c; int :3; }
            (
                vec![char_field(), unnamed(ScalarKind::I32, 3, false)],
                true,
                None,
                (1, 1),
                (4, 4),
            ),
        ];
        for (i, (fields, union, pack, sysv, aapcs)) in cases.into_iter().enumerate() {
            for (anon_align, want) in [(false, sysv), (true, aapcs)] {
                let (l, b) = record_with_bitfields(fields.clone(), union, pack, anon_align)
                    .unwrap_or_else(|e| panic!("case {i}: {e}"));
                assert_eq!(
                    (l.byte_size(), l.byte_alignment()),
                    want,
                    "case {i}, anon_align {anon_align}"
                );
                assert!(b.is_empty());
            }
        }
    }
}
