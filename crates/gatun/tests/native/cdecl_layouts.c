/* Sizes, alignments and offsets of the declarations in cdecl_layouts.h as gcc lays them out,
 * exported as one table (cdecl_layouts_table, ended by a NULL type) for tests/cdecl_layouts.rs. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "cdecl_layouts.h"

struct cdecl_layouts_entry {
    const char *type; /* as gatun's Declarations::layout names it */
    const char *path; /* "#size", "#align", "#signed" (1 or 0), "#const" (the type is an enum
                         constant's name), or a layout path for MemoryLayout::byte_offset_of */
    size_t value;
};

#define SZ(T, name) {name, "#size", sizeof(T)}, {name, "#align", _Alignof(T)}
#define S(tag) SZ(struct tag, "struct " #tag)
#define OFF(tag, f) {"struct " #tag, #f, offsetof(struct tag, f)}
#define SIGNED(T) {#T, "#signed", (T)-1 < (T)1}
#define CONST(name) {#name, "#const", name}

const struct cdecl_layouts_entry cdecl_layouts_table[] = {
    S(cl_plain), OFF(cl_plain, d), OFF(cl_plain, i),
    S(cl_packed), OFF(cl_packed, x), OFF(cl_packed, d), OFF(cl_packed, s),
    S(cl_packed_after), OFF(cl_packed_after, l),
    S(cl_outer_packed), OFF(cl_outer_packed, p), OFF(cl_outer_packed, after),
    S(cl_pack2), OFF(cl_pack2, x), OFF(cl_pack2, d), OFF(cl_pack2, tail),
    S(cl_pack2_nested), OFF(cl_pack2_nested, in), OFF(cl_pack2_nested, in.d),
    S(cl_pack2_in),
    S(cl_pack1), OFF(cl_pack1, x), OFF(cl_pack1, s),
    SZ(union cl_upack1, "union cl_upack1"),
    S(cl_pack2_again), OFF(cl_pack2_again, x),
    S(cl_after_pop), OFF(cl_after_pop, x),
    S(cl_pack4), OFF(cl_pack4, d), OFF(cl_pack4, s),
    S(cl_member_packed), OFF(cl_member_packed, x), OFF(cl_member_packed, s),
    S(cl_packed_aligned_member), OFF(cl_packed_aligned_member, x), OFF(cl_packed_aligned_member, d),
    S(cl_packed_aligned), OFF(cl_packed_aligned, x), OFF(cl_packed_aligned, d),
    S(cl_aligned16),
    S(cl_alignas), OFF(cl_alignas, x),
    S(cl_unpacked_inner_in_packed), OFF(cl_unpacked_inner_in_packed, in),
    OFF(cl_unpacked_inner_in_packed, in.d),
    SZ(enum cl_color, "enum cl_color"),
    S(cl_enum_sized), OFF(cl_enum_sized, names), OFF(cl_enum_sized, u),
    SZ(cl_anon, "cl_anon"), {"cl_anon", "[1]", offsetof(cl_anon, i)},
    {"cl_anon", "tail", offsetof(cl_anon, tail)},
    S(cl_flex), OFF(cl_flex, data),
    S(cl_fnptr), OFF(cl_fnptr, c), OFF(cl_fnptr, table), OFF(cl_fnptr, flag),
    S(cl_matrix), OFF(cl_matrix, m[2][1]), OFF(cl_matrix, rows), OFF(cl_matrix, cols),
    SZ(union cl_big_union, "union cl_big_union"),
    SZ(cl_register_t, "cl_register_t"), SZ(cl_u8m, "cl_u8m"), SZ(cl_s16m, "cl_s16m"),
    SZ(cl_u64m, "cl_u64m"), SZ(cl_ptrm, "cl_ptrm"), SZ(cl_bytem, "cl_bytem"),
    SZ(cl_dfm, "cl_dfm"), SZ(cl_sfm, "cl_sfm"),
    SIGNED(cl_register_t), SIGNED(cl_u8m), SIGNED(cl_s16m), SIGNED(cl_u64m), SIGNED(cl_bytem),
    S(cl_modes), OFF(cl_modes, r), OFF(cl_modes, s), OFF(cl_modes, b), OFF(cl_modes, d),
    OFF(cl_modes, f),
    CONST(CL_V4SI_SIZE), CONST(CL_V4SI_ALIGN), CONST(CL_V8SF_SIZE), CONST(CL_V8SF_ALIGN),
    CONST(CL_V4HI_SIZE), CONST(CL_V4HI_ALIGN), CONST(CL_LD_SIZE), CONST(CL_LD_ALIGN),
    CONST(CL_CF_SIZE), CONST(CL_CLD_SIZE), CONST(CL_I128_SIZE), CONST(CL_F128_ALIGN),
    S(cl_bf_zero), OFF(cl_bf_zero, d), S(cl_bf_unnamed), OFF(cl_bf_unnamed, d), S(cl_bf_ll),
    S(cl_bf_straddle), S(cl_bf_packed), S(cl_bf_pack2), S(cl_bf_pack1_zero),
    OFF(cl_bf_pack1_zero, d), S(cl_bf_packed_zero), OFF(cl_bf_packed_zero, d), S(cl_bf_short),
    SZ(union cl_bf_union, "union cl_bf_union"), S(cl_bf_chars), S(cl_bf_member_packed),
    S(cl_bf_long), S(cl_bf_mixed), OFF(cl_bf_mixed, c), S(cl_bf_bool), OFF(cl_bf_bool, a),
    S(cl_bf_enum), OFF(cl_bf_enum, d), S(cl_bf_anon), OFF(cl_bf_anon, tail), S(cl_bf_byval),
    S(cl_bf_float), OFF(cl_bf_float, f), S(cl_bf_wide), S(cl_bf_unnamed_float),
    {NULL, NULL, 0},
};

/* Bitfield positions as gcc places them: each field is set to all ones in a zeroed struct,
 * then its bits are found, numbered in the target's bit order (gatun's `BitField`): from the
 * least significant bit of each byte on a little-endian target, from the most significant on a
 * big-endian one. The set bits must be one run in that order (else the width is reported as
 * 0). Then the field is set to a pattern in a zeroed struct: the value C reads back and the
 * struct's bytes are recorded, for gatun to read the same value from those bytes and to write
 * the same bytes from that value. */
#define BF_BYTES 32
struct cdecl_bitfield_entry {
    const char *type;
    const char *field;
    size_t bit_offset;
    size_t bit_width;
    int is_signed;
    long long value;                 /* the pattern as the field holds it */
    size_t size;                     /* sizeof the record */
    unsigned char bytes[BF_BYTES];   /* the record holding only that value */
};

static int bf_bit(const unsigned char *p, size_t i) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (p[i / 8] >> (7 - i % 8)) & 1;
#else
    return (p[i / 8] >> (i % 8)) & 1;
#endif
}

static void bf_scan(const unsigned char *p, size_t size, size_t *off, size_t *width) {
    *off = (size_t)-1;
    *width = 0;
    size_t last = 0;
    for (size_t i = 0; i < size * 8; i++) {
        if (bf_bit(p, i)) {
            if (*off == (size_t)-1) *off = i;
            (*width)++;
            last = i;
        }
    }
    if (*width != 0 && last - *off + 1 != *width) *width = 0; /* not one run */
}

/* A field of width w is set to the top w bits of this pattern, which for no w above 2 read
 * the same reversed (so a field whose bits were read in the wrong order shows), and whose
 * first bit makes signed fields negative. */
#define BF_PATTERN 0xD2B74407B1CE6E93ull

#define BF(T, name, f)                                                                    \
    do {                                                                                  \
        _Static_assert(sizeof(T) <= BF_BYTES, "record too large for the table");          \
        T s_;                                                                             \
        memset(&s_, 0, sizeof s_);                                                        \
        s_.f = s_.f - 1;                                                                  \
        long long v_ = s_.f;                                                              \
        struct cdecl_bitfield_entry *e_ = &table[n++];                                    \
        e_->type = name;                                                                  \
        e_->field = #f;                                                                   \
        e_->is_signed = v_ < 0;                                                           \
        bf_scan((const unsigned char *)&s_, sizeof s_, &e_->bit_offset, &e_->bit_width);  \
        memset(&s_, 0, sizeof s_);                                                        \
        if (e_->bit_width != 0) s_.f = BF_PATTERN >> (64 - e_->bit_width);               \
        e_->value = s_.f;                                                                 \
        e_->size = sizeof s_;                                                             \
        memcpy(e_->bytes, &s_, sizeof s_);                                                \
    } while (0)
#define SBF(tag, f) BF(struct tag, "struct " #tag, f)

size_t cdecl_bitfields(const struct cdecl_bitfield_entry **out) {
    static struct cdecl_bitfield_entry table[64];
    size_t n = 0;
    SBF(cl_bf_ll, x);
    SBF(cl_bf_straddle, x); SBF(cl_bf_straddle, y);
    SBF(cl_bf_packed, x); SBF(cl_bf_packed, y);
    SBF(cl_bf_pack2, x); SBF(cl_bf_pack2, y);
    SBF(cl_bf_pack1_zero, x);
    SBF(cl_bf_short, x); SBF(cl_bf_short, y);
    BF(union cl_bf_union, "union cl_bf_union", x);
    SBF(cl_bf_chars, a); SBF(cl_bf_chars, b); SBF(cl_bf_chars, c);
    SBF(cl_bf_member_packed, x); SBF(cl_bf_member_packed, y);
    SBF(cl_bf_long, x);
    SBF(cl_bf_mixed, a); SBF(cl_bf_mixed, b);
    SBF(cl_bf_bool, b); SBF(cl_bf_bool, u); SBF(cl_bf_bool, s);
    SBF(cl_bf_enum, e); SBF(cl_bf_enum, us);
    SBF(cl_bf_anon, lo); SBF(cl_bf_anon, hi);
    SBF(cl_bf_byval, a); SBF(cl_bf_byval, b); SBF(cl_bf_byval, c); SBF(cl_bf_byval, d);
    SBF(cl_bf_float, tag);
    SBF(cl_bf_wide, lo); SBF(cl_bf_wide, hi);
    *out = table;
    return n;
}

/* Bitfield structs passed and returned by value. */
long long cl_bf_byval_sum(struct cl_bf_byval s) { return (long long)s.a + s.b + s.c + s.d; }
struct cl_bf_byval cl_bf_byval_make(int a, int b, int c, int d) {
    struct cl_bf_byval s = {(unsigned)a, b, (unsigned)c, d};
    return s;
}
int cl_bf_float_tag(struct cl_bf_float s) { return s.tag + (int)s.f; }
float cl_bf_unnamed_float_get(struct cl_bf_unnamed_float s) { return s.f; }
