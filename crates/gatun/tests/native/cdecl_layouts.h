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
