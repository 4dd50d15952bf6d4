//! C type names → value layouts, per target data model (Java's `Linker.canonicalLayouts()`).

use super::{ScalarKind, ValueLayout};
use crate::error::{Error, Result};

/// The C data model of a target: how wide `long` and `wchar_t` are, whether plain `char` is
/// signed and whether `long double` is just `double`. Sizes come from the platform ABIs: SysV
/// AMD64 ABI §3.1.2 (LP64), AAPCS64 §5.1 and the Arm C language ABI (LP64, `char` unsigned,
/// `long double` IEEE binary128), the RISC-V psABI (LP64, `char` unsigned, `wchar_t` `int`,
/// `long double` IEEE binary128), the s390x ELF ABI Supplement ("Fundamental Types": LP64,
/// `char` unsigned, `wchar_t` `int`, `long double` IEEE binary128), the 64-bit ELFv2 ABI
/// (PPC64LE, "Fundamental Types": LP64, `char` unsigned, `wchar_t` `int`, a 16-byte
/// `long double`), Apple's arm64 ABI (LP64, `char` signed, `long double` = `double`),
/// Microsoft x64 (LLP64: `long` is 4 bytes, `wchar_t` 2).
///
/// ```
/// use gatun::layout::{DataModel, ScalarKind};
/// assert_eq!(DataModel::APPLE_ARM64.layout("long double").unwrap().kind(), ScalarKind::F64);
/// assert!(DataModel::LINUX_AARCH64.layout("long double").is_err());
/// assert_eq!(DataModel::LINUX_AARCH64.layout("char").unwrap().kind(), ScalarKind::U8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataModel {
    /// Size of `long` / `unsigned long`, in bytes (8 on LP64, 4 on LLP64).
    pub long_size: usize,
    /// `true` when plain `char` is signed.
    pub char_signed: bool,
    /// Size of `wchar_t`, in bytes.
    pub wchar_size: usize,
    /// `true` when `wchar_t` is a signed type (`int` on x86-64, Apple arm64, RISC-V 64, s390x
    /// and PPC64LE; AArch64 Linux has `unsigned int`, Windows an unsigned 16-bit type).
    pub wchar_signed: bool,
    /// `true` when `long double` has the representation of `double` (8 bytes, IEEE binary64;
    /// Apple arm64), so it maps to [`ScalarKind::F64`]. `false` where it is wider (the 80-bit
    /// x87 format in 16 bytes on x86-64, IEEE binary128 in 16 bytes on AArch64, RISC-V 64 and
    /// s390x Linux, IBM double-double or binary128 in 16 bytes on PPC64LE Linux) and
    /// [`DataModel::layout`] rejects it.
    pub long_double_is_double: bool,
}

impl DataModel {
    /// x86-64 Linux / BSD / macOS (LP64, signed `char`, 4-byte `wchar_t`).
    pub const SYSV_X86_64: DataModel = DataModel {
        long_size: 8,
        char_signed: true,
        wchar_size: 4,
        wchar_signed: true,
        long_double_is_double: false,
    };
    /// AArch64 Linux (LP64, unsigned `char`, 4-byte unsigned `wchar_t`, 16-byte binary128
    /// `long double`).
    pub const LINUX_AARCH64: DataModel = DataModel {
        long_size: 8,
        char_signed: false,
        wchar_size: 4,
        wchar_signed: false,
        long_double_is_double: false,
    };
    /// RISC-V 64 Linux (LP64D: LP64, unsigned `char`, 4-byte signed `wchar_t`, 16-byte
    /// binary128 `long double`; RISC-V psABI, "C/C++ type details").
    pub const LINUX_RISCV64: DataModel = DataModel {
        long_size: 8,
        char_signed: false,
        wchar_size: 4,
        wchar_signed: true,
        long_double_is_double: false,
    };
    /// s390x Linux (LP64, unsigned `char`, 4-byte signed `wchar_t`, 16-byte binary128 `long
    /// double`; s390x ELF ABI Supplement, "Fundamental Types"). Big-endian.
    pub const LINUX_S390X: DataModel = DataModel {
        long_size: 8,
        char_signed: false,
        wchar_size: 4,
        wchar_signed: true,
        long_double_is_double: false,
    };
    /// PPC64LE Linux (LP64, unsigned `char`, 4-byte signed `wchar_t`, 16-byte `long double`:
    /// IBM double-double or binary128 by the toolchain's choice; 64-bit ELFv2 ABI,
    /// "Fundamental Types").
    pub const LINUX_PPC64LE: DataModel = DataModel {
        long_size: 8,
        char_signed: false,
        wchar_size: 4,
        wchar_signed: true,
        long_double_is_double: false,
    };
    /// Apple arm64: macOS, iOS (LP64, signed `char`, 4-byte `wchar_t`, `long double` =
    /// `double`).
    pub const APPLE_ARM64: DataModel = DataModel {
        long_size: 8,
        char_signed: true,
        wchar_size: 4,
        wchar_signed: true,
        long_double_is_double: true,
    };
    /// 64-bit Windows (LLP64: 4-byte `long`; signed `char`, 2-byte unsigned `wchar_t`).
    /// `long double` follows mingw-w64 gcc, the toolchain of `*-windows-gnu` (checked with
    /// `x86_64-w64-mingw32-gcc` 12): the 80-bit x87 format in 16 bytes, 16-byte aligned (and
    /// passed by reference), so [`DataModel::layout`] rejects it; MSVC's `long double` is
    /// `double`.
    pub const WINDOWS_X64: DataModel = DataModel {
        long_size: 4,
        char_signed: true,
        wchar_size: 2,
        wchar_signed: false,
        long_double_is_double: false,
    };

    /// The data model of the target gatun was compiled for.
    pub const HOST: DataModel = if cfg!(windows) {
        DataModel::WINDOWS_X64
    } else if cfg!(all(target_arch = "aarch64", target_vendor = "apple")) {
        DataModel::APPLE_ARM64
    } else if cfg!(target_arch = "aarch64") {
        DataModel::LINUX_AARCH64
    } else if cfg!(target_arch = "riscv64") {
        DataModel::LINUX_RISCV64
    } else if cfg!(target_arch = "s390x") {
        DataModel::LINUX_S390X
    } else if cfg!(target_arch = "powerpc64") {
        DataModel::LINUX_PPC64LE
    } else {
        DataModel::SYSV_X86_64
    };

    /// The names [`DataModel::layout`] knows, in a stable order.
    pub const NAMES: &'static [&'static str] = &[
        "bool",
        "_Bool",
        "char",
        "signed char",
        "unsigned char",
        "short",
        "unsigned short",
        "int",
        "unsigned int",
        "long",
        "unsigned long",
        "long long",
        "unsigned long long",
        "float",
        "double",
        "void*",
        "size_t",
        "ssize_t",
        "ptrdiff_t",
        "intptr_t",
        "uintptr_t",
        "wchar_t",
        "int8_t",
        "uint8_t",
        "int16_t",
        "uint16_t",
        "int32_t",
        "uint32_t",
        "int64_t",
        "uint64_t",
    ];

    /// The value layout of the C scalar type `name` (one of [`DataModel::NAMES`]; spaces are
    /// normalised, so `"unsigned   int"` works; `"long int"`, `"unsigned"`, `"signed"` and
    /// `"short int"` style spellings are accepted too).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for `long double` unless [`DataModel::long_double_is_double`]
    /// (80-bit x87 on x86-64, binary128 on AArch64, RISC-V 64 and s390x Linux, IBM
    /// double-double or binary128 on PPC64LE Linux by the callee's compiler options; gatun will
    /// not pass it silently wrong, nor guess), the reason naming the formats;
    /// [`Error::UnknownType`] for anything else it does not know.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{DataModel, ScalarKind};
    /// use gatun::Error;
    /// let win = DataModel::WINDOWS_X64;
    /// assert_eq!(win.layout("unsigned long").unwrap().kind(), ScalarKind::U32);
    /// assert_eq!(DataModel::SYSV_X86_64.layout("unsigned   long int").unwrap().kind(), ScalarKind::U64);
    /// assert_eq!(win.layout("wchar_t").unwrap().byte_size(), 2);
    /// assert!(matches!(win.layout("quad"), Err(Error::UnknownType { .. })));
    /// ```
    pub fn layout(&self, name: &str) -> Result<ValueLayout> {
        let normalized = name.split_whitespace().collect::<Vec<_>>().join(" ");
        let words: Vec<&str> = normalized
            .split(' ')
            .filter(|w| !w.is_empty() && *w != "int" || normalized == "int")
            .collect();
        let canonical = words.join(" ");
        let long = if self.long_size == 8 {
            (ScalarKind::I64, ScalarKind::U64)
        } else {
            (ScalarKind::I32, ScalarKind::U32)
        };
        let ptr_int = if std::mem::size_of::<usize>() == 8 {
            (ScalarKind::I64, ScalarKind::U64)
        } else {
            (ScalarKind::I32, ScalarKind::U32)
        };
        let kind = match canonical.as_str() {
            "bool" | "_Bool" => ScalarKind::Bool,
            "char" if self.char_signed => ScalarKind::I8,
            "char" => ScalarKind::U8,
            "signed char" | "int8_t" => ScalarKind::I8,
            "unsigned char" | "uint8_t" => ScalarKind::U8,
            "short" | "signed short" | "int16_t" => ScalarKind::I16,
            "unsigned short" | "uint16_t" => ScalarKind::U16,
            "int" | "signed" | "signed int" | "int32_t" => ScalarKind::I32,
            "unsigned" | "unsigned int" | "uint32_t" => ScalarKind::U32,
            "long" | "signed long" => long.0,
            "unsigned long" => long.1,
            "long long" | "signed long long" | "int64_t" => ScalarKind::I64,
            "unsigned long long" | "uint64_t" => ScalarKind::U64,
            "float" => ScalarKind::F32,
            "double" => ScalarKind::F64,
            "void*" | "void *" | "pointer" => ScalarKind::Pointer,
            "size_t" | "uintptr_t" => ptr_int.1,
            "ssize_t" | "ptrdiff_t" | "intptr_t" => ptr_int.0,
            "wchar_t" => match (self.wchar_size, self.wchar_signed) {
                (2, false) => ScalarKind::U16,
                (2, true) => ScalarKind::I16,
                (_, false) => ScalarKind::U32,
                (_, true) => ScalarKind::I32,
            },
            "long double" if self.long_double_is_double => ScalarKind::F64,
            "long double" => {
                return Err(Error::Unsupported {
                    type_name: "long double".into(),
                    reason: "it is wider than double on this target (80-bit x87 on x86-64, \
                             128-bit IEEE binary128 on AArch64, RISC-V 64 and s390x Linux; on \
                             PPC64LE Linux 128-bit IBM double-double or IEEE binary128, as the \
                             callee's compiler chose with -mabi=ibmlongdouble, gcc's default, \
                             or -mabi=ieeelongdouble, which gatun cannot see from a \
                             declaration), which is not supported; pass a double instead"
                        .into(),
                })
            }
            _ => {
                return Err(Error::UnknownType {
                    name: name.to_string(),
                })
            }
        };
        Ok(ValueLayout::new(kind))
    }
}

/// The largest alignment gcc gives a type on this build's target (`__BIGGEST_ALIGNMENT__`):
/// what `__attribute__((aligned))` without an argument asks for, and the most a vector type is
/// aligned to. 16 on x86-64, AArch64, RISC-V 64 and PPC64LE; 8 on s390x, whose ABI aligns no
/// type, vectors included, to more than 8 bytes (s390x ELF ABI Supplement, "Fundamental
/// Types").
pub(crate) const BIGGEST_ALIGNMENT: usize = if cfg!(target_arch = "s390x") { 8 } else { 16 };

/// The alignment of this build's target's 16-byte scalars that have no gatun layout (`long
/// double` where it is 16 bytes, `__int128`, `_Float128`): their size, but 8 on s390x (see
/// [`BIGGEST_ALIGNMENT`]).
pub(crate) const WIDE_SCALAR_ALIGNMENT: usize = BIGGEST_ALIGNMENT;

/// Every C scalar name in [`DataModel::NAMES`] with its value layout on the host target, in that
/// order (Java's `Linker.nativeLinker().canonicalLayouts()`).
///
/// ```
/// use gatun::layout::{canonical_layouts, ScalarKind};
/// let long = canonical_layouts().into_iter().find(|(n, _)| *n == "long").unwrap().1;
/// assert_eq!(long.byte_size(), if cfg!(windows) { 4 } else { 8 });
/// ```
pub fn canonical_layouts() -> Vec<(&'static str, ValueLayout)> {
    DataModel::NAMES
        .iter()
        .map(|&n| {
            (
                n,
                DataModel::HOST
                    .layout(n)
                    .expect("every listed name has a layout"),
            )
        })
        .collect()
}
