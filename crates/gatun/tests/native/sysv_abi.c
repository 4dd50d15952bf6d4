/* Downcall tests for the SysV AMD64 classifier. Every function checks or folds all of its
 * arguments into its result, so a misplaced byte changes what the test sees. 64-bit integers
 * are int64_t: the same as a long on LP64, and still 8 bytes on Windows (LLP64, where
 * tests/sysv_zero_alloc.rs calls some of these). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>

/* ---- scalars ---- */
int sysv_add_i32(int a, int b) { return a + b; }
double sysv_fma3(double a, double b, double c) { return a * b + c; }
int64_t sysv_add6(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f) { return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f; }
void sysv_noop(void) {}
float sysv_f32_mix(float a, int b, float c) { return a * 2.0f + (float)b + c * 0.5f; }
/* small-integer returns: the upper bits of rax are whatever the argument register held */
signed char sysv_ret_i8(int64_t x) { return (signed char)x; }
unsigned char sysv_ret_u8(int64_t x) { return (unsigned char)x; }
short sysv_ret_i16(int64_t x) { return (short)x; }
unsigned short sysv_ret_u16(int64_t x) { return (unsigned short)x; }
bool sysv_ret_bool(int64_t x) { return (x & 0xff) != 0; }
/* small-integer arguments: the callee reads the full register after a cast in asm-like way */
int64_t sysv_small_args(signed char a, unsigned char b, short c, unsigned short d, bool e, int f) {
    return (int64_t)a * 1 + (int64_t)b * 10 + (int64_t)c * 100 + (int64_t)d * 1000 + (int64_t)e * 100000 + (int64_t)f * 1000000;
}
int sysv_bool_as_int(bool b) { int r; memcpy(&r, &b, 1); return r & 0xff; }
void *sysv_ptr_offset(char *p, int64_t n) { return p + n; }

/* ---- {float; int}, {int; double}, {double; int} ---- */
typedef struct { float f; int i; } sysv_FI;
typedef struct { int i; double d; } sysv_ID;
typedef struct { double d; int i; } sysv_DI;
double sysv_fi_sum(sysv_FI s) { return s.f * 10.0 + s.i; }
sysv_FI sysv_fi_make(float f, int i) { sysv_FI s = { f, i }; return s; }
double sysv_id_sum(sysv_ID s) { return s.i * 10.0 + s.d; }
sysv_ID sysv_id_make(int i, double d) { sysv_ID s = { i, d }; return s; }
double sysv_di_sum(sysv_DI s) { return s.d * 10.0 + s.i; }
sysv_DI sysv_di_make(double d, int i) { sysv_DI s = { d, i }; return s; }

/* ---- Debian libffi 3.4.4 bug cases ---- */
typedef struct { char c; double d; } sysv_CD;
char sysv_ffi_bug1(char a, char b, char c, char d, char e, float f, sysv_CD s) {
    return (char)(a + b + c + d + e + (int)f + s.c + (int)s.d);
}
typedef struct { uint64_t l; float f; } sysv_LF;
float sysv_ffi_bug2(sysv_LF a, sysv_LF b, sysv_LF c, sysv_LF d, sysv_LF e, sysv_LF f) {
    if (a.l != 1 || b.l != 2 || c.l != 3 || d.l != 4 || e.l != 5 || f.l != 6) return -1.0f;
    if (b.f != 20.0f || c.f != 30.0f || d.f != 40.0f || e.f != 50.0f || f.f != 60.0f) return -2.0f;
    return a.f;
}

/* ---- register exhaustion ---- */
typedef struct { double a; double b; } sysv_DD;
typedef struct { double d; int64_t l; } sysv_DL;
double sysv_after_8_doubles(double d0, double d1, double d2, double d3, double d4, double d5, double d6, double d7,
                            sysv_DD s, int64_t after) {
    return d0 + d1 * 2 + d2 * 3 + d3 * 4 + d4 * 5 + d5 * 6 + d6 * 7 + d7 * 8 + s.a * 100 + s.b * 1000 + after * 10000;
}
/* {double; int64_t} needs one xmm and one gpr: with 8 doubles taken it goes wholly to the stack,
 * and the int64_t after it still gets rdi */
double sysv_dl_after_8_doubles(double d0, double d1, double d2, double d3, double d4, double d5, double d6, double d7,
                               sysv_DL s, int64_t after) {
    return d0 + d1 + d2 + d3 + d4 + d5 + d6 + d7 + s.d * 100 + s.l * 1000 + after * 10000;
}
typedef struct { int64_t x; int64_t y; } sysv_LL;
int64_t sysv_ll_after_5_longs(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, sysv_LL s, int64_t g) {
    return a + b * 2 + c * 3 + d * 4 + e * 5 + s.x * 100 + s.y * 1000 + g * 10000;
}
/* 16 ints and 16 doubles: 10 ints and 8 doubles on the stack */
double sysv_16i_16d(int i0, double d0, int i1, double d1, int i2, double d2, int i3, double d3,
                    int i4, double d4, int i5, double d5, int i6, double d6, int i7, double d7,
                    int i8, double d8, int i9, double d9, int i10, double d10, int i11, double d11,
                    int i12, double d12, int i13, double d13, int i14, double d14, int i15, double d15) {
    int is[16] = { i0, i1, i2, i3, i4, i5, i6, i7, i8, i9, i10, i11, i12, i13, i14, i15 };
    double ds[16] = { d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13, d14, d15 };
    double r = 0;
    for (int k = 0; k < 16; k++) r += is[k] * (k + 1) + ds[k] * (k + 1) * 1000.0;
    return r;
}

/* ---- large returns (MEMORY, hidden pointer in rdi) ---- */
typedef struct { int64_t a, b, c; } sysv_L3;
sysv_L3 sysv_l3_make(int64_t a, int64_t b, int64_t c) { sysv_L3 s = { a, b * 2, c * 3 }; return s; }
sysv_L3 sysv_l3_fixed(void) { sysv_L3 s = { -7, 11, 1 << 20 }; return s; }
typedef struct { unsigned char b[100]; } sysv_B100;
sysv_B100 sysv_b100_make(int seed, double scale) {
    sysv_B100 s;
    for (int k = 0; k < 100; k++) s.b[k] = (unsigned char)(seed + k * (int)scale);
    return s;
}
int64_t sysv_b100_sum(sysv_B100 s, int k) {
    int64_t r = 0;
    for (int j = 0; j < 100; j++) r += s.b[j] * (j + 1);
    return r + k;
}

/* ---- odd-sized structs (3/5/6/7/9/12/15 bytes): each byte + 1, and a checksum ---- */
#define ODD(N)                                                                   \
    typedef struct { unsigned char b[N]; } sysv_B##N;                            \
    sysv_B##N sysv_b##N##_inc(sysv_B##N s) {                                     \
        for (int k = 0; k < N; k++) s.b[k]++;                                    \
        return s;                                                                \
    }                                                                            \
    int64_t sysv_b##N##_sum(int64_t pre, sysv_B##N s, int64_t post) {                     \
        int64_t r = 0;                                                              \
        for (int k = 0; k < N; k++) r += (int64_t)s.b[k] * (k + 1);                 \
        return r + pre * 100000 + post * 10000000;                               \
    }
ODD(3) ODD(5) ODD(6) ODD(7) ODD(9) ODD(12) ODD(15)

/* ---- nested, arrays in structs, unions ---- */
typedef struct { float x; float y; } sysv_FF;
typedef struct { sysv_FF p; double d; } sysv_Nested;            /* SSE, SSE */
typedef struct { int a[3]; float f; } sysv_IntArr;                /* INTEGER, INTEGER */
typedef struct { float v[4]; } sysv_F4;                            /* SSE, SSE */
typedef struct { struct { char c; short s; } in; float f; int64_t l; } sysv_Nest2; /* INTEGER, INTEGER */
double sysv_nested_sum(sysv_Nested n) { return n.p.x + n.p.y * 10 + n.d * 100; }
sysv_Nested sysv_nested_make(float x, float y, double d) { sysv_Nested n = { { x, y }, d }; return n; }
double sysv_intarr_sum(sysv_IntArr s) { return s.a[0] + s.a[1] * 10 + s.a[2] * 100 + s.f * 1000; }
sysv_IntArr sysv_intarr_make(int a, int b, int c, float f) { sysv_IntArr s = { { a, b, c }, f }; return s; }
float sysv_f4_sum(sysv_F4 s) { return s.v[0] + s.v[1] * 10 + s.v[2] * 100 + s.v[3] * 1000; }
sysv_F4 sysv_f4_make(float a) { sysv_F4 s = { { a, a + 1, a + 2, a + 3 } }; return s; }
double sysv_nest2_sum(sysv_Nest2 s) { return s.in.c + s.in.s * 10 + s.f * 100 + s.l * 1000; }
typedef union { int i; float f; } sysv_UIF;        /* INTEGER */
typedef union { double d; float f; } sysv_UDF;     /* SSE */
typedef union { int64_t l; double d; } sysv_ULD;      /* INTEGER */
typedef struct { union { float f; int i; } u; float g; } sysv_UF2; /* INTEGER (merge) */
int sysv_uif_bits(sysv_UIF u, float g) { return u.i + (int)g; }
double sysv_udf_get(sysv_UDF u, int which) { return which ? u.f : u.d; }
sysv_ULD sysv_uld_make(int64_t l) { sysv_ULD u; u.l = l; return u; }
float sysv_uf2_sum(sysv_UF2 s) { return s.u.f + s.g; }

/* ---- packed (unaligned fields → MEMORY) ---- */
typedef struct __attribute__((packed)) { char c; int i; } sysv_PackedCI;     /* 5 bytes */
typedef struct __attribute__((packed)) { char c; double d; } sysv_PackedCD;  /* 9 bytes */
typedef struct __attribute__((packed)) { int a; int b; } sysv_PackedII;      /* aligned: INTEGER */
int64_t sysv_packed_ci(int64_t a, sysv_PackedCI s, int64_t b) { return a + s.c * 10 + s.i * 100 + b * 100000; }
double sysv_packed_cd(sysv_PackedCD s, double x) { return s.c + s.d * 10 + x * 1000; }
sysv_PackedCD sysv_packed_cd_make(char c, double d) { sysv_PackedCD s; s.c = c; s.d = d; return s; }
int64_t sysv_packed_ii(sysv_PackedII s) { return s.a + s.b * 1000L; }

/* ---- {int a, b, c} followed by an int ---- */
typedef struct { int a, b, c; } sysv_I3;
int64_t sysv_i3_then_int(sysv_I3 s, int d) { return s.a + s.b * 10L + s.c * 100L + d * 1000L; }
sysv_I3 sysv_i3_make(int a, int b, int c) { sysv_I3 s = { a, b, c }; return s; }

/* ---- two-register returns ---- */
sysv_DD sysv_dd_make(double a, double b) { sysv_DD s = { a, b }; return s; }
typedef struct { int64_t l; double d; } sysv_LDs;
sysv_LDs sysv_ld_make(int64_t l, double d) { sysv_LDs s = { l, d }; return s; }
sysv_DL sysv_dl_make(double d, int64_t l) { sysv_DL s = { d, l }; return s; }
sysv_LL sysv_ll_make(int64_t x, int64_t y) { sysv_LL s = { x, y }; return s; }
/* a MEMORY return with a struct argument after the hidden pointer */
sysv_L3 sysv_l3_from_ll(sysv_LL s, int64_t k) { sysv_L3 r = { s.x, s.y, k }; return r; }

/* ---- variadic: tags say what follows: 'd' double (from float or double), 'i' int (from
 * char/short/bool/int), 'l' int64_t, 'p' pointer, 's' a sysv_DD struct, 0 ends ---- */
double sysv_va_sum(const char *tags, ...) {
    va_list ap;
    va_start(ap, tags);
    double r = 0;
    int k = 1;
    for (const char *t = tags; *t; t++, k++) {
        switch (*t) {
        case 'd': r += va_arg(ap, double) * k; break;
        case 'i': r += va_arg(ap, int) * k; break;
        case 'l': r += (double)va_arg(ap, int64_t) * k; break;
        case 's': { sysv_DD s = va_arg(ap, sysv_DD); r += (s.a + s.b * 10) * k; break; }
        }
    }
    va_end(ap);
    return r;
}

/* ---- errno ---- */
int sysv_set_errno(int value, int ret) { errno = value; return ret; }
int sysv_get_errno(void) { return errno; }

/* ---- a 16-byte-aligned struct: 16-byte-aligned stack slot, padding before it ---- */
typedef struct __attribute__((aligned(16))) { int64_t a; } sysv_A16;
int64_t sysv_a16_on_stack(int64_t r0, int64_t r1, int64_t r2, int64_t r3, int64_t r4, int64_t r5, int64_t y, sysv_A16 s, int64_t z) {
    return r0 + r1 + r2 + r3 + r4 + r5 + y * 100 + s.a * 1000 + z * 10000;
}
int64_t sysv_a16_in_reg(sysv_A16 s, int64_t z) { return s.a * 1000 + z; }

/* A 16-byte aligned 32-byte struct: MEMORY class, returned through the hidden pointer in rdi,
 * which gcc -O2 writes with aligned vector stores (movaps), so a misaligned return buffer
 * faults. */
typedef struct __attribute__((aligned(16))) { double a, b, c, d; } sysv_A16x4;
sysv_A16x4 sysv_a16x4_make(double x) {
    sysv_A16x4 s = { x, x * 2, x * 3, x * 4 };
    return s;
}
/* The same struct by value (MEMORY class: a copy on the stack, 16-byte aligned by the caller). */
double sysv_a16x4_sum(sysv_A16x4 s) { return s.a + 10 * s.b + 100 * s.c + 1000 * s.d; }

/* ---- eight scalar arguments: stack arguments past six integers, all eight vector registers ---- */
int64_t sysv_add8(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g, int64_t h) {
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}
double sysv_sum8d(double a, double b, double c, double d, double e, double f, double g, double h) {
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}
double sysv_mix7i1d(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int32_t g, double x) {
    return (double)(a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g) + x;
}
