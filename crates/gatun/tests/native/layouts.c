/*
 * C layouts as the C compiler sees them, for tests/layouts_vs_gcc.rs.
 *
 * layouts_table(&count) returns `count` entries, one per struct or union below: its sizeof and
 * _Alignof and, for every field (nested members and array elements included, written as
 * offsetof member designators such as "in.tag" or "items[2].v"), its offsetof, sizeof and
 * __alignof__. The Rust test builds the same types with gatun's MemoryLayout and asserts every
 * figure is equal.
 */
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    const char *name;   /* offsetof member designator, e.g. "in.tag" */
    size_t offset;      /* offsetof(T, name) */
    size_t size;        /* sizeof(((T *)0)->name) */
    size_t align;       /* __alignof__(((T *)0)->name) */
} layouts_field;

typedef struct {
    const char *name;   /* the type's name, e.g. "s_char_double" */
    size_t size;        /* sizeof(T) */
    size_t align;       /* _Alignof(T) */
    size_t field_count;
    const layouts_field *fields;
} layouts_entry;

#define F(T, m) { #m, offsetof(T, m), sizeof(((T *)0)->m), __alignof__(((T *)0)->m) }
#define E(T, ...)                                                                 \
    static const layouts_field T##_fields[] = { __VA_ARGS__ };                    \
    static const layouts_entry T##_entry = { #T, sizeof(T), _Alignof(T),          \
        sizeof(T##_fields) / sizeof(T##_fields[0]), T##_fields };

/* ---- plain structs: padding between members and at the end ---- */
typedef struct { char c; double d; } s_char_double;
E(s_char_double, F(s_char_double, c), F(s_char_double, d))

typedef struct { char a; int b; char c; } s_char_int_char;
E(s_char_int_char, F(s_char_int_char, a), F(s_char_int_char, b), F(s_char_int_char, c))

typedef struct { double d; char c; } s_double_char;
E(s_double_char, F(s_double_char, d), F(s_double_char, c))

typedef struct { char a; short b; char c; int d; long e; float f; double g; } s_mixed;
E(s_mixed, F(s_mixed, a), F(s_mixed, b), F(s_mixed, c), F(s_mixed, d), F(s_mixed, e),
  F(s_mixed, f), F(s_mixed, g))

typedef struct {
    unsigned char a; unsigned short b; unsigned int c; unsigned long d; unsigned long long e;
    signed char f;
} s_unsigned;
E(s_unsigned, F(s_unsigned, a), F(s_unsigned, b), F(s_unsigned, c), F(s_unsigned, d),
  F(s_unsigned, e), F(s_unsigned, f))

typedef struct { int8_t a; int64_t b; uint16_t c; uint32_t d; uint8_t e; } s_fixed;
E(s_fixed, F(s_fixed, a), F(s_fixed, b), F(s_fixed, c), F(s_fixed, d), F(s_fixed, e))

typedef struct { float f; double d; float g; } s_floats;
E(s_floats, F(s_floats, f), F(s_floats, d), F(s_floats, g))

typedef struct { char c; void *p; int i; const char *name; } s_ptrs;
E(s_ptrs, F(s_ptrs, c), F(s_ptrs, p), F(s_ptrs, i), F(s_ptrs, name))

typedef struct { char c; size_t n; int i; ssize_t s; ptrdiff_t d; intptr_t ip; } s_sizes;
E(s_sizes, F(s_sizes, c), F(s_sizes, n), F(s_sizes, i), F(s_sizes, s), F(s_sizes, d),
  F(s_sizes, ip))

/* ---- bool and char tails ---- */
typedef struct { int i; bool b; } s_int_bool;
E(s_int_bool, F(s_int_bool, i), F(s_int_bool, b))

typedef struct { double d; char a, b, c; } s_double_chars;
E(s_double_chars, F(s_double_chars, d), F(s_double_chars, a), F(s_double_chars, b),
  F(s_double_chars, c))

typedef struct { char a, b, c; } s_three_chars;
E(s_three_chars, F(s_three_chars, a), F(s_three_chars, b), F(s_three_chars, c))

typedef struct { bool a; bool b; int c; bool d; } s_bools;
E(s_bools, F(s_bools, a), F(s_bools, b), F(s_bools, c), F(s_bools, d))

typedef struct { long l; char c; } s_long_char;
E(s_long_char, F(s_long_char, l), F(s_long_char, c))

/* ---- nested structs ---- */
struct inner { char tag; int value; };

typedef struct { char c; struct inner in; short s; } s_nested;
E(s_nested, F(s_nested, c), F(s_nested, in), F(s_nested, in.tag), F(s_nested, in.value),
  F(s_nested, s))

struct deep2 { char c; long long d; };
struct deep1 { short b; struct deep2 in2; };
typedef struct { char a; struct deep1 in1; char e; } s_deep;
E(s_deep, F(s_deep, a), F(s_deep, in1), F(s_deep, in1.b), F(s_deep, in1.in2),
  F(s_deep, in1.in2.c), F(s_deep, in1.in2.d), F(s_deep, e))

/* ---- arrays in structs ---- */
typedef struct { short s; char c[3]; } s_array;
E(s_array, F(s_array, s), F(s_array, c), F(s_array, c[2]))

struct item { char tag; double v; };
typedef struct { int n; struct item items[4]; } s_items;
E(s_items, F(s_items, n), F(s_items, items), F(s_items, items[0].tag), F(s_items, items[2].v),
  F(s_items, items[3].tag))

typedef struct { char c; short m[3][5]; int tail; } s_matrix;
E(s_matrix, F(s_matrix, c), F(s_matrix, m), F(s_matrix, m[1]), F(s_matrix, m[2][4]),
  F(s_matrix, tail))

typedef struct { double d[2]; char name[13]; } s_char_array_tail;
E(s_char_array_tail, F(s_char_array_tail, d), F(s_char_array_tail, d[1]),
  F(s_char_array_tail, name), F(s_char_array_tail, name[12]))

/* ---- unions ---- */
typedef union { char c; int i; double d; } u_scalars;
E(u_scalars, F(u_scalars, c), F(u_scalars, i), F(u_scalars, d))

typedef union { char c[9]; short s; } u_chars_short;
E(u_chars_short, F(u_chars_short, c), F(u_chars_short, c[8]), F(u_chars_short, s))

struct ua { char tag; int x; };
struct ub { char tag; double y; };
typedef union { struct ua a; struct ub b; } u_structs;
E(u_structs, F(u_structs, a), F(u_structs, a.tag), F(u_structs, a.x), F(u_structs, b),
  F(u_structs, b.tag), F(u_structs, b.y))

typedef struct { int kind; u_structs u; } s_tagged;
E(s_tagged, F(s_tagged, kind), F(s_tagged, u), F(s_tagged, u.a.x), F(s_tagged, u.b.y))

typedef struct { char c; union { int i; float f; } u; char t; } s_union_inside;
E(s_union_inside, F(s_union_inside, c), F(s_union_inside, u), F(s_union_inside, u.i),
  F(s_union_inside, u.f), F(s_union_inside, t))

/* ---- over-alignment ---- */
typedef struct { char c; alignas(16) int x; } s_aligned_member;
E(s_aligned_member, F(s_aligned_member, c), F(s_aligned_member, x))

/* ---- packed and #pragma pack ---- */
typedef struct __attribute__((packed)) { char c; int i; short s; double d; } s_packed;
E(s_packed, F(s_packed, c), F(s_packed, i), F(s_packed, s), F(s_packed, d))

typedef struct __attribute__((packed)) { char c; struct inner in; } s_packed_nested;
E(s_packed_nested, F(s_packed_nested, c), F(s_packed_nested, in), F(s_packed_nested, in.tag),
  F(s_packed_nested, in.value))

typedef union __attribute__((packed)) { char c[5]; int i; } u_packed;
E(u_packed, F(u_packed, c), F(u_packed, i))

#pragma pack(push, 2)
typedef struct { char c; int i; double d; char t; } s_pack2;
typedef union { char c[5]; int i; } u_pack2;
#pragma pack(pop)
E(s_pack2, F(s_pack2, c), F(s_pack2, i), F(s_pack2, d), F(s_pack2, t))
E(u_pack2, F(u_pack2, c), F(u_pack2, i))

#pragma pack(push, 4)
typedef struct { char c; double d; short s; struct item it; } s_pack4;
#pragma pack(pop)
E(s_pack4, F(s_pack4, c), F(s_pack4, d), F(s_pack4, s), F(s_pack4, it), F(s_pack4, it.v))

#pragma pack(push, 1)
typedef struct { short s; long long l; char arr[3]; int i; } s_pack1;
#pragma pack(pop)
E(s_pack1, F(s_pack1, s), F(s_pack1, l), F(s_pack1, arr), F(s_pack1, arr[1]), F(s_pack1, i))

static const layouts_entry *const layouts_entries[] = {
    &s_char_double_entry, &s_char_int_char_entry, &s_double_char_entry, &s_mixed_entry,
    &s_unsigned_entry, &s_fixed_entry, &s_floats_entry, &s_ptrs_entry, &s_sizes_entry,
    &s_int_bool_entry, &s_double_chars_entry, &s_three_chars_entry, &s_bools_entry,
    &s_long_char_entry, &s_nested_entry, &s_deep_entry, &s_array_entry, &s_items_entry,
    &s_matrix_entry, &s_char_array_tail_entry, &u_scalars_entry, &u_chars_short_entry,
    &u_structs_entry, &s_tagged_entry, &s_union_inside_entry, &s_aligned_member_entry,
    &s_packed_entry, &s_packed_nested_entry, &u_packed_entry, &s_pack2_entry, &u_pack2_entry,
    &s_pack4_entry, &s_pack1_entry,
};

/* The table of every type above; its length is stored in *count. */
const layouts_entry *const *layouts_table(size_t *count) {
    *count = sizeof(layouts_entries) / sizeof(layouts_entries[0]);
    return layouts_entries;
}
