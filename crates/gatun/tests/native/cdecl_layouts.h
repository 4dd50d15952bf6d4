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
