/* Callees and callers of the PPC64LE (ELFv2) executor tests (src/backend/ppc64le/tests.rs).
 * Portable C, compiled into the test library of every target; only the register recorders at
 * the end are PPC64LE assembly (and exist only there).
 *
 * The callees read their arguments as gcc's code does: on PPC64LE a narrow integer argument
 * is used without extending it again (the caller extended it), so a wrongly extended register
 * changes the result; a float in an FPR is read in double format. The callers use an
 * upcall's narrow result without extending it again either. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct { float a; } pp_F1;
typedef struct { float a, b; } pp_F2;
typedef struct { float a, b, c; } pp_F3;
typedef struct { float a, b, c, d; } pp_F4;
typedef struct { float a, b, c, d, e; } pp_F5;
typedef struct { float m[8]; } pp_F8;
typedef struct { double a; } pp_D1;
typedef struct { double a, b; } pp_D2;
typedef struct { double m[5]; } pp_D5;
typedef struct { double m[8]; } pp_D8;
typedef struct { float f; int32_t i; } pp_FI;
typedef struct { int64_t a, b; } pp_LL;
typedef struct { int64_t a, b, c; } pp_L3;
typedef struct { _Alignas(16) int64_t a; int64_t b; } pp_A16;
typedef struct { uint8_t a, b, c; } pp_B3;
typedef struct { int32_t a, b, c; } pp_I3;

/* ---- narrow integers, read without extension ---- */
int64_t pp_u32_widened(uint32_t x) { return x; }
int64_t pp_i32_widened(int32_t x) { return x; }
int64_t pp_u16_widened(uint16_t x) { return x; }
int64_t pp_i16_widened(int16_t x) { return x; }
int64_t pp_u8_widened(uint8_t x) { return x; }
int64_t pp_i8_widened(int8_t x) { return x; }
int64_t pp_bool_widened(bool x) { return x; }
/* the ninth argument in memory (parameter save area offset 64): read as gcc does */
int64_t pp_i32_in_memory(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f,
                         int64_t g, int64_t h, int32_t x) {
    (void)a, (void)b, (void)c, (void)d, (void)e, (void)f, (void)g, (void)h;
    return x;
}
uint32_t pp_u32_ret(int64_t x) { return (uint32_t)x; }
uint16_t pp_u16_ret(int64_t x) { return (uint16_t)x; }
int8_t pp_i8_ret(int64_t x) { return (int8_t)x; }

/* ---- more than eight integer arguments ---- */
int64_t pp_int11(int64_t a, int32_t b, int64_t c, uint16_t d, int64_t e, int64_t f, int64_t g,
                 int64_t h, int8_t i, uint32_t j, int64_t k) {
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * (int64_t)j +
           11 * k;
}

/* ---- floats and doubles: f1..f13, then memory; each takes its doubleword ---- */
float pp_f32_scale(float x, float y) { return x * y; }
double pp_f32_to_f64(float x) { return x; }
double pp_fp15(float a, double b, float c, double d, float e, double f, float g, double h,
               float i, double j, float k, double l, float m, double n, float o) {
    return a + 2.0 * b + 3.0 * c + 4.0 * d + 5.0 * e + 6.0 * f + 7.0 * g + 8.0 * h + 9.0 * i +
           10.0 * j + 11.0 * k + 12.0 * l + 13.0 * m + 14.0 * n + 15.0 * o;
}
/* integers and floating-point values mixed: a double in f1 leaves r4 unused */
double pp_mixed(int32_t a, double b, int64_t c, float d, uint8_t e, double f) {
    return a + 10.0 * b + 100.0 * c + 1000.0 * d + 1e4 * e + 1e5 * f;
}

/* ---- homogeneous floating-point aggregates: one FPR per member ---- */
double pp_f1_sum(pp_F1 s) { return s.a; }
double pp_f3_sum(pp_F3 s) { return s.a + 10.0 * s.b + 100.0 * s.c; }
double pp_f8_sum(pp_F8 s) {
    double r = 0;
    for (int k = 0; k < 8; k++) r += s.m[k] * (k + 1);
    return r;
}
double pp_d2_sum(pp_D2 s) { return s.a + 10.0 * s.b; }
double pp_d8_sum(pp_D8 s) {
    double r = 0;
    for (int k = 0; k < 8; k++) r += s.m[k] * (k + 1);
    return r;
}
/* f1..f8 for the first, f9..f13 for five members of the second, its last three in r9, r10
 * (the doubleword of members 4 and 5 in r9: member 4 is in f13 and in r9) */
double pp_two_f8(pp_F8 a, pp_F8 b) {
    double r = 0;
    for (int k = 0; k < 8; k++) r += a.m[k] * (k + 1) + b.m[k] * (k + 11);
    return r;
}
/* nine doubles in f1..f9, then members 0..3 in f10..f13 and 4..7 in memory */
double pp_f8_after_nine(double a, double b, double c, double d, double e, double f, double g,
                        double h, double i, pp_F8 s, int64_t x) {
    double r = a + b + c + d + e + f + g + h + i + 1000.0 * x;
    for (int k = 0; k < 8; k++) r += s.m[k] * (k + 11);
    return r;
}
pp_F1 pp_f1_make(float x) { pp_F1 r = { x }; return r; }
pp_F2 pp_f2_make(float x) { pp_F2 r = { x, x + 1 }; return r; }
pp_F5 pp_f5_make(float x) { pp_F5 r = { x, x + 1, x + 2, x + 3, x + 4 }; return r; }
pp_F8 pp_f8_make(float x) {
    pp_F8 r;
    for (int k = 0; k < 8; k++) r.m[k] = x + k;
    return r;
}
pp_D1 pp_d1_make(double x) { pp_D1 r = { x }; return r; }
pp_D5 pp_d5_make(double x) {
    pp_D5 r;
    for (int k = 0; k < 5; k++) r.m[k] = x * (k + 1);
    return r;
}
pp_D8 pp_d8_make(double x) {
    pp_D8 r;
    for (int k = 0; k < 8; k++) r.m[k] = x * (k + 1);
    return r;
}

/* ---- other aggregates: their image in GPRs and memory ---- */
double pp_fi_sum(pp_FI s) { return s.f * 10.0 + s.i; }
pp_FI pp_fi_make(float f, int32_t i) { pp_FI s = { f, i }; return s; }
pp_LL pp_ll_make(int64_t a, int64_t b) { pp_LL s = { a, b }; return s; }
pp_B3 pp_b3_next(pp_B3 s) { pp_B3 r = { (uint8_t)(s.a + 1), (uint8_t)(s.b + 1), (uint8_t)(s.c + 1) }; return r; }
pp_I3 pp_i3_next(pp_I3 s) { pp_I3 r = { s.a + 1, s.b + 1, s.c + 1 }; return r; }
pp_F3 pp_f3_next(pp_F3 s) { pp_F3 r = { s.a + 1, s.b + 1, s.c + 1 }; return r; }
/* 24 bytes after seven int64_t: r10 and two doublewords of memory */
int64_t pp_l3_after_seven(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f,
                          int64_t g, pp_L3 s, int64_t h) {
    return a + b + c + d + e + f + g + 1000 * s.a + 100000 * s.b + 10000000 * s.c +
           1000000000 * h;
}
/* the callee may write its by-value copy: the caller's struct is not touched */
int64_t pp_l3_sum(int32_t x, pp_L3 big, int32_t y) {
    int64_t r = x + 10 * big.a + 100 * big.b + 1000 * big.c + 10000 * (int64_t)y;
    *(volatile int64_t *)&big.a = -1;
    return r;
}
pp_L3 pp_l3_make(int64_t a, int32_t c) { pp_L3 r = { a, a + 1, c }; return r; }
/* a 16-aligned struct starts at an even doubleword */
int64_t pp_a16_after(int32_t x, pp_A16 s, int64_t y) { return x + 10 * s.a + 100 * s.b + 1000 * y; }

/* ---- variadic: floating-point values in FPRs and in their doublewords ---- */
double pp_va_doubles(int n, ...) {
    va_list ap;
    va_start(ap, n);
    double s = 0;
    for (int k = 0; k < n; k++) s += va_arg(ap, double) * (k + 1);
    va_end(ap);
    return s;
}
double pp_va_d2(int n, ...) {
    va_list ap;
    va_start(ap, n);
    double s = 0;
    for (int k = 0; k < n; k++) {
        pp_D2 d = va_arg(ap, pp_D2);
        s += (d.a + 10.0 * d.b) * (k + 1);
    }
    va_end(ap);
    return s;
}

/* ---- callers of upcalls ---- */
int64_t pp_cb_u8(uint8_t (*f)(void)) { return f(); }
int64_t pp_cb_u16(uint16_t (*f)(void)) { return f(); }
int64_t pp_cb_u32(uint32_t (*f)(void)) { return f(); }
int64_t pp_cb_i8(int8_t (*f)(void)) { return f(); }
int64_t pp_cb_i16(int16_t (*f)(void)) { return f(); }
int64_t pp_cb_bool(bool (*f)(void)) { return f(); }
float pp_cb_f32(float (*f)(float), float x) { return f(x) + 1.0f; }
double pp_cb_fi(pp_FI (*f)(float, int32_t), float a, int32_t b) {
    pp_FI r = f(a, b);
    return r.f * 10.0 + r.i;
}
double pp_cb_f2(pp_F2 (*f)(float, float), float a, float b) {
    pp_F2 r = f(a, b);
    return r.a * 10.0 + r.b;
}
double pp_cb_f8(pp_F8 (*f)(float), float x) {
    pp_F8 r = f(x);
    double s = 0;
    for (int k = 0; k < 8; k++) s += r.m[k] * (k + 1);
    return s;
}
double pp_cb_d5(pp_D5 (*f)(double), double x) {
    pp_D5 r = f(x);
    double s = 0;
    for (int k = 0; k < 5; k++) s += r.m[k] * (k + 1);
    return s;
}
double pp_cb_d8(pp_D8 (*f)(double), double x) {
    pp_D8 r = f(x);
    double s = 0;
    for (int k = 0; k < 8; k++) s += r.m[k] * (k + 1);
    return s;
}
int64_t pp_cb_big(pp_L3 (*f)(int64_t, int32_t), int64_t a, int32_t c) {
    pp_L3 r = f(a, c);
    return r.a + 10 * r.b + 100 * r.c;
}
int64_t pp_cb_b3(pp_B3 (*f)(pp_B3)) {
    pp_B3 s = { 1, 2, 3 };
    pp_B3 r = f(s);
    return r.a + 10 * r.b + 100 * r.c;
}
/* every argument class in one upcall: an int in r3, nine doubles in f1..f9, a float in f10,
 * an HFA of four floats in f11..f13 and memory, a float in memory (no FPR left), an int64_t,
 * an HFA of two doubles and a 24-byte struct in memory, an unsigned int and an int8_t */
typedef double (*pp_mixed_fn)(int32_t, double, double, double, double, double, double, double,
                              double, double, float, pp_F4, float, int64_t, pp_D2, pp_L3,
                              uint32_t, int8_t);
double pp_cb_mixed(pp_mixed_fn f) {
    pp_F4 h = { 1.5f, 2.5f, 3.5f, 4.5f };
    pp_D2 d = { 5.5, 6.5 };
    pp_L3 big = { 21, 22, 23 };
    double r = f(-3, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 0.25f, h, 0.75f, 7, d, big,
                 0xFFFFFFF0u, -9);
    return (big.a != 21 || big.b != 22 || big.c != 23) ? -1.0 : r;
}

#if defined(__powerpc64__) && defined(__LITTLE_ENDIAN__) && _CALL_ELF == 2
/* pp_record: stores r3..r10, f1..f13 (double images) and the parameter save area's
 * doublewords 8..11 (its first four in memory) of its caller into pp_seen and returns with r3
 * and f1 unchanged. pp_call_raw(f): calls f with no arguments and stores r3, r4, f1..f8
 * (double images) after the call into pp_seen_ret. */
__attribute__((visibility("hidden"))) uint64_t pp_seen[25];
__attribute__((visibility("hidden"))) uint64_t pp_seen_ret[10];
const uint64_t *pp_seen_regs(void) { return pp_seen; }
const uint64_t *pp_seen_ret_regs(void) { return pp_seen_ret; }
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".globl pp_record\n"
    ".type pp_record, @function\n"
    "pp_record:\n"
    "0: addis 2, 12, .TOC.-0b@ha\n"
    "  addi 2, 2, .TOC.-0b@l\n"
    "  .localentry pp_record, .-pp_record\n"
    "  addis 11, 2, pp_seen@toc@ha\n"
    "  addi 11, 11, pp_seen@toc@l\n"
    "  std 3, 0(11)\n  std 4, 8(11)\n  std 5, 16(11)\n  std 6, 24(11)\n"
    "  std 7, 32(11)\n  std 8, 40(11)\n  std 9, 48(11)\n  std 10, 56(11)\n"
    "  stfd 1, 64(11)\n  stfd 2, 72(11)\n  stfd 3, 80(11)\n  stfd 4, 88(11)\n"
    "  stfd 5, 96(11)\n  stfd 6, 104(11)\n  stfd 7, 112(11)\n  stfd 8, 120(11)\n"
    "  stfd 9, 128(11)\n  stfd 10, 136(11)\n  stfd 11, 144(11)\n  stfd 12, 152(11)\n"
    "  stfd 13, 160(11)\n"
    "  ld 12, 96(1)\n  std 12, 168(11)\n  ld 12, 104(1)\n  std 12, 176(11)\n"
    "  ld 12, 112(1)\n  std 12, 184(11)\n  ld 12, 120(1)\n  std 12, 192(11)\n"
    "  blr\n"
    ".size pp_record, . - pp_record\n"
    ".globl pp_call_raw\n"
    ".type pp_call_raw, @function\n"
    "pp_call_raw:\n"
    "0: addis 2, 12, .TOC.-0b@ha\n"
    "  addi 2, 2, .TOC.-0b@l\n"
    "  .localentry pp_call_raw, .-pp_call_raw\n"
    "  mflr 0\n"
    "  std 0, 16(1)\n"
    "  stdu 1, -96(1)\n"
    "  std 2, 24(1)\n"
    "  mr 12, 3\n"
    "  mtctr 12\n"
    "  bctrl\n"
    "  ld 2, 24(1)\n"
    "  addis 11, 2, pp_seen_ret@toc@ha\n"
    "  addi 11, 11, pp_seen_ret@toc@l\n"
    "  std 3, 0(11)\n  std 4, 8(11)\n"
    "  stfd 1, 16(11)\n  stfd 2, 24(11)\n  stfd 3, 32(11)\n  stfd 4, 40(11)\n"
    "  stfd 5, 48(11)\n  stfd 6, 56(11)\n  stfd 7, 64(11)\n  stfd 8, 72(11)\n"
    "  addi 1, 1, 96\n"
    "  ld 0, 16(1)\n"
    "  mtlr 0\n"
    "  blr\n"
    ".size pp_call_raw, . - pp_call_raw\n");
#endif
