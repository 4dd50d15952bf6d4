/* Declarations parsed by both gcc (through cdecl_layouts.c) and gatun::cdecl (through
 * tests/cdecl_layouts.rs, with include_str!): the same text, two compilers, same layouts.
 * Plain declarations only: no #include, no macros (gatun parses no preprocessor). */

struct cl_plain { char c; double d; int i[3]; };
struct __attribute__((packed)) cl_packed { char c; int x; double d; short s; };
struct cl_packed_after { char c; long l; } __attribute__((__packed__));
struct cl_outer_packed { char c; struct cl_packed p; int after; };

#pragma pack(push, 2)
struct cl_pack2 { char c; int x; double d; char tail; };
struct cl_pack2_nested { char c; struct cl_pack2_in { char a; double d; } in; };
#pragma pack(push, 1)
struct cl_pack1 { char c; long long x; short s; };
union cl_upack1 { char c; int i; double d; };
#pragma pack(pop)
struct cl_pack2_again { char c; int x; };
#pragma pack(pop)
struct cl_after_pop { char c; int x; };
#pragma pack(4)
struct cl_pack4 { char c; double d; short s; };
#pragma pack()

struct cl_member_packed { char c; int x __attribute__((packed)); short s; };
struct __attribute__((packed)) cl_packed_aligned_member { char c; int x __attribute__((aligned(8))); char d; };
struct __attribute__((packed, aligned(4))) cl_packed_aligned { char c; int x; char d; };
struct cl_aligned16 { char c; } __attribute__((aligned(16)));
struct cl_alignas { char c; _Alignas(16) int x; };
struct cl_unpacked_inner_in_packed { char c; struct { char a; double d; } in; } __attribute__((packed));

enum cl_color { CL_RED, CL_GREEN = 5, CL_COUNT = CL_GREEN + 4 };
struct cl_enum_sized { enum cl_color c; char names[CL_COUNT]; uint64_t u; };
typedef struct { uint8_t tag; union { int32_t i; float f; }; uint16_t tail; } cl_anon;
struct cl_flex { uint32_t n; uint16_t data[]; };
struct cl_fnptr { void (*cb)(int); char c; int (*table[3])(void); bool flag; };
struct cl_matrix { float m[3][3]; size_t rows; ssize_t cols; };
union cl_big_union { char bytes[13]; long long ll; struct cl_plain p; };

/* `mode` attributes: integers keep their signedness and take the mode's width. */
typedef int cl_register_t __attribute__((__mode__(__word__)));
typedef unsigned int cl_u8m __attribute__((mode(QI)));
typedef int cl_s16m __attribute__((__mode__(__HI__)));
typedef unsigned cl_u64m __attribute__((__mode__(DI)));
typedef int cl_ptrm __attribute__((mode(pointer)));
typedef int cl_bytem __attribute__((mode(byte)));
typedef float cl_dfm __attribute__((mode(DF)));
typedef double cl_sfm __attribute__((mode(SF)));
struct cl_modes { cl_u8m a; cl_register_t r; cl_s16m s; int b __attribute__((mode(QI))); cl_dfm d; cl_sfm f; };
/* Vector types have no gatun layout, but sizeof/_Alignof know them. */
typedef int cl_v4si __attribute__((vector_size(16)));
typedef float cl_v8sf __attribute__((vector_size(32)));
typedef short cl_v4hi __attribute__((vector_size(8)));
enum cl_vec_sizes {
    CL_V4SI_SIZE = sizeof(cl_v4si), CL_V4SI_ALIGN = _Alignof(cl_v4si),
    CL_V8SF_SIZE = sizeof(cl_v8sf), CL_V8SF_ALIGN = _Alignof(cl_v8sf),
    CL_V4HI_SIZE = sizeof(cl_v4hi), CL_V4HI_ALIGN = _Alignof(cl_v4hi),
    CL_LD_SIZE = sizeof(long double), CL_LD_ALIGN = _Alignof(long double),
    CL_CF_SIZE = sizeof(_Complex float), CL_CLD_SIZE = sizeof(_Complex long double),
    CL_I128_SIZE = sizeof(__int128), CL_F128_ALIGN = _Alignof(_Float128)
};

/* Bitfields, laid out as gcc does (sizes and ordinary offsets in the table, bit positions
 * from cdecl_bitfields()). */
struct cl_bf_zero { char c; int :0; char d; };
struct cl_bf_unnamed { char c; int :3; char d; };
struct cl_bf_ll { char c; long long x:3; };
struct cl_bf_straddle { char c; int x:30; int y:4; };
struct __attribute__((packed)) cl_bf_packed { char c; int x:30; int y:4; };
#pragma pack(2)
struct cl_bf_pack2 { char c; int x:30; int y:4; };
#pragma pack()
#pragma pack(1)
struct cl_bf_pack1_zero { char c; int :0; char d; int x:5; };
#pragma pack()
struct __attribute__((packed)) cl_bf_packed_zero { char c; int :0; char d; };
struct cl_bf_short { char c; short x:9; short y:9; };
union cl_bf_union { char c; int x:12; };
struct cl_bf_chars { unsigned char a:4, b:4, c:4; };
struct cl_bf_member_packed { char c; int x:7 __attribute__((packed)); int y:9; };
struct cl_bf_long { char c; long x:60; };
struct cl_bf_mixed { int a:1; long long b:40; char c; };
struct cl_bf_bool { char a; _Bool b:1; unsigned u:31; signed char s:3; };
enum cl_bf_e { CL_BF_A, CL_BF_B = 5 };
struct cl_bf_enum { enum cl_bf_e e:3; unsigned short us:16; double d; };
struct cl_bf_anon { int k; struct { unsigned lo:4, hi:4; }; char tail; };
struct cl_bf_byval { unsigned a:3; int b:5; unsigned c:20; int d:8; };
struct cl_bf_float { float f; int tag:4; };
struct cl_bf_wide { unsigned long long lo:63; unsigned long long hi:63; };
long long cl_bf_byval_sum(struct cl_bf_byval s);
struct cl_bf_byval cl_bf_byval_make(int a, int b, int c, int d);
int cl_bf_float_tag(struct cl_bf_float s);
struct cl_bf_unnamed_float { float f; int :8; };
float cl_bf_unnamed_float_get(struct cl_bf_unnamed_float s);
