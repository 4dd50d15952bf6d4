/* Callees and callers of the RISC-V 64 (LP64D) executor tests (src/backend/riscv64/tests.rs).
 * Portable C, compiled into the test library of every target; only the register recorders at
 * the end are RISC-V 64 assembly (and exist only there).
 *
 * The callees read their arguments as gcc's code does: on RISC-V 64 a narrow integer argument
 * is used without extending it again (the caller extended it), so a wrongly extended register
 * changes the result; a float argument in an FPR that is not NaN-boxed reads as the canonical
 * NaN. The callers check an upcall's results the same way. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct { float f; int32_t i; } rv_FI;
typedef struct { int32_t i; float f; } rv_IF;
typedef struct { float a, b; } rv_FF;
typedef struct { double d; int64_t l; } rv_DL;
typedef struct { float a, b, c; } rv_F3;
typedef struct { int64_t a, b; } rv_LL;
typedef struct { int64_t a, b, c; } rv_L3;
typedef struct { _Alignas(16) int64_t a; int64_t b; } rv_A16;
typedef struct { uint8_t a, b, c; } rv_B3;
typedef struct { int32_t a, b, c; } rv_I3;

/* ---- narrow integers, read without extension ---- */
int64_t rv_u32_widened(uint32_t x) { return (int32_t)x; }
int64_t rv_i32_widened(int32_t x) { return x; }
int64_t rv_u16_widened(uint16_t x) { return x; }
int64_t rv_i16_widened(int16_t x) { return x; }
int64_t rv_u8_widened(uint8_t x) { return x; }
int64_t rv_i8_widened(int8_t x) { return x; }
int64_t rv_bool_widened(bool x) { return x; }
/* the ninth argument on the stack: read from its slot as gcc does */
int64_t rv_u32_on_stack(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f,
                        int64_t g, int64_t h, uint32_t x) {
    (void)a, (void)b, (void)c, (void)d, (void)e, (void)f, (void)g, (void)h;
    return (int32_t)x;
}
uint32_t rv_u32_ret(int64_t x) { return (uint32_t)x; }
uint16_t rv_u16_ret(int64_t x) { return (uint16_t)x; }
int8_t rv_i8_ret(int64_t x) { return (int8_t)x; }

/* ---- floats and doubles: fa0..fa7, then GPRs ---- */
float rv_f32_scale(float x, float y) { return x * y; }
double rv_f32_to_f64(float x) { return x; }
double rv_fp10(float a, double b, float c, double d, float e, double f, float g, double h,
               float i, double j) {
    return a + 2.0 * b + 3.0 * c + 4.0 * d + 5.0 * e + 6.0 * f + 7.0 * g + 8.0 * h + 9.0 * i +
           10.0 * j;
}

/* ---- structs of a float and an integer, or two floats: FPR + GPR, two FPRs ---- */
double rv_fi_sum(rv_FI s) { return s.f * 10.0 + s.i; }
double rv_if_sum(rv_IF s) { return s.f * 10.0 + s.i; }
double rv_ff_sum(rv_FF s) { return s.a * 10.0 + s.b; }
double rv_dl_sum(rv_DL s) { return s.d * 10.0 + (double)s.l; }
rv_FI rv_fi_make(float f, int32_t i) { rv_FI s = { f, i }; return s; }
rv_FF rv_ff_make(float a, float b) { rv_FF s = { a, b }; return s; }
rv_DL rv_dl_make(double d, int64_t l) { rv_DL s = { d, l }; return s; }
/* three floats: no FPR flattening, two GPRs (8 + 4 bytes) */
rv_F3 rv_f3_next(rv_F3 s) { rv_F3 r = { s.a + 1, s.b + 1, s.c + 1 }; return r; }

/* ---- FPR exhaustion: 7 doubles leave fa7; rv_FF needs two FPRs (integer convention), rv_FI
 * takes fa7 and a GPR, the float after it a GPR ---- */
double rv_fpr_left_one(double a, double b, double c, double d, double e, double f, double g,
                       rv_FF s, rv_FI t, float u) {
    return a + b + c + d + e + f + g + 100.0 * s.a + 1000.0 * s.b + 1e4 * t.f + 1e5 * t.i +
           1e6 * u;
}

/* ---- a 16-byte struct split between a7 and the stack ---- */
int64_t rv_split(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g,
                 rv_LL s, int64_t h) {
    return a + b + c + d + e + f + g + 1000 * s.a + 100000 * s.b + 10000000 * h;
}

/* ---- over 16 bytes: by reference (the callee may write its copy), results through a0 ---- */
int64_t rv_big_sum(int32_t x, rv_L3 big, int32_t y) {
    int64_t r = x + 10 * big.a + 100 * big.b + 1000 * big.c + 10000 * (int64_t)y;
    /* stores the compiler keeps: into the caller's copy on RISC-V 64 */
    *(volatile int64_t *)&big.a = -1;
    *(volatile int64_t *)&big.c = -1;
    return r;
}
rv_L3 rv_big_make(int64_t a, int32_t c) { rv_L3 r = { a, a + 1, c }; return r; }

/* ---- variadic: doubles in GPRs, a 16-aligned struct at an even register pair ---- */
double rv_va_doubles(int n, ...) {
    va_list ap;
    va_start(ap, n);
    double s = 0;
    for (int k = 0; k < n; k++) s += va_arg(ap, double) * (k + 1);
    va_end(ap);
    return s;
}
/* n int64_t, then one rv_A16 */
int64_t rv_va_a16(int n, ...) {
    va_list ap;
    va_start(ap, n);
    int64_t s = 0;
    for (int k = 0; k < n; k++) s += va_arg(ap, int64_t);
    rv_A16 x = va_arg(ap, rv_A16);
    va_end(ap);
    return s + 1000 * x.a + 100000 * x.b;
}

/* ---- sizes that are not powers of two ---- */
rv_B3 rv_b3_next(rv_B3 s) { rv_B3 r = { (uint8_t)(s.a + 1), (uint8_t)(s.b + 1), (uint8_t)(s.c + 1) }; return r; }
rv_I3 rv_i3_next(rv_I3 s) { rv_I3 r = { s.a + 1, s.b + 1, s.c + 1 }; return r; }

/* ---- callers of upcalls ---- */
int64_t rv_cb_u8(uint8_t (*f)(void)) { return f(); }
int64_t rv_cb_u16(uint16_t (*f)(void)) { return f(); }
int64_t rv_cb_i8(int8_t (*f)(void)) { return f(); }
int64_t rv_cb_i16(int16_t (*f)(void)) { return f(); }
int64_t rv_cb_bool(bool (*f)(void)) { return f(); }
float rv_cb_f32(float (*f)(float), float x) { return f(x) + 1.0f; }
double rv_cb_fi(rv_FI (*f)(float, int32_t), float a, int32_t b) {
    rv_FI r = f(a, b);
    return r.f * 10.0 + r.i;
}
double rv_cb_ff(rv_FF (*f)(float, float), float a, float b) {
    rv_FF r = f(a, b);
    return r.a * 10.0 + r.b;
}
double rv_cb_dl(rv_DL (*f)(double, int64_t), double d, int64_t l) {
    rv_DL r = f(d, l);
    return r.d * 10.0 + (double)r.l;
}
int64_t rv_cb_big(rv_L3 (*f)(int64_t, int32_t), int64_t a, int32_t c) {
    rv_L3 r = f(a, c);
    return r.a + 10 * r.b + 100 * r.c;
}
int64_t rv_cb_b3(rv_B3 (*f)(rv_B3)) {
    rv_B3 s = { 1, 2, 3 };
    rv_B3 r = f(s);
    return r.a + 10 * r.b + 100 * r.c;
}
/* every argument class in one upcall: 7 doubles, {float, float} in a GPR, {float, int} in fa7
 * and a GPR, a float in a GPR, four int64_t, a 16-byte struct split between a7 and the stack,
 * a 24-byte struct by reference (a stack slot), an unsigned int on the stack; the callee's
 * writes to its by-reference copy must not reach `big` */
typedef double (*rv_mixed_fn)(double, double, double, double, double, double, double, rv_FF,
                              rv_FI, float, int64_t, int64_t, int64_t, int64_t, rv_LL, rv_L3,
                              uint32_t);
double rv_cb_mixed(rv_mixed_fn f) {
    rv_FF s = { 1.5f, 2.5f };
    rv_FI t = { 3.5f, -4 };
    rv_LL ll = { 11, 12 };
    rv_L3 big = { 21, 22, 23 };
    double r = f(0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, s, t, 4.5f, 5, 6, 7, 8, ll, big, 0xFFFFFFF0u);
    return (big.a != 21 || big.b != 22 || big.c != 23) ? -1.0 : r;
}

#if defined(__riscv) && __riscv_xlen == 64 && defined(__riscv_float_abi_double)
/* rv_record: stores a0..a7, fa0..fa7 (64-bit images) and the first four stack slots of its
 * caller into rv_seen and returns with a0 and fa0 unchanged. rv_call_raw(f): calls f with no
 * arguments and stores a0, a1, fa0, fa1 (64-bit images) after the call into rv_seen_ret. */
__attribute__((visibility("hidden"))) uint64_t rv_seen[20];
__attribute__((visibility("hidden"))) uint64_t rv_seen_ret[4];
const uint64_t *rv_seen_regs(void) { return rv_seen; }
const uint64_t *rv_seen_ret_regs(void) { return rv_seen_ret; }
__asm__(
    ".text\n"
    ".p2align 2\n"
    ".globl rv_record\n"
    ".type rv_record, @function\n"
    "rv_record:\n"
    "  lla t0, rv_seen\n"
    "  sd a0, 0(t0)\n  sd a1, 8(t0)\n  sd a2, 16(t0)\n  sd a3, 24(t0)\n"
    "  sd a4, 32(t0)\n  sd a5, 40(t0)\n  sd a6, 48(t0)\n  sd a7, 56(t0)\n"
    "  fsd fa0, 64(t0)\n  fsd fa1, 72(t0)\n  fsd fa2, 80(t0)\n  fsd fa3, 88(t0)\n"
    "  fsd fa4, 96(t0)\n  fsd fa5, 104(t0)\n  fsd fa6, 112(t0)\n  fsd fa7, 120(t0)\n"
    "  ld t1, 0(sp)\n  sd t1, 128(t0)\n  ld t1, 8(sp)\n  sd t1, 136(t0)\n"
    "  ld t1, 16(sp)\n  sd t1, 144(t0)\n  ld t1, 24(sp)\n  sd t1, 152(t0)\n"
    "  ret\n"
    ".size rv_record, . - rv_record\n"
    ".globl rv_call_raw\n"
    ".type rv_call_raw, @function\n"
    "rv_call_raw:\n"
    "  addi sp, sp, -16\n"
    "  sd ra, 8(sp)\n"
    "  mv t1, a0\n"
    "  jalr t1\n"
    "  lla t0, rv_seen_ret\n"
    "  sd a0, 0(t0)\n  sd a1, 8(t0)\n  fsd fa0, 16(t0)\n  fsd fa1, 24(t0)\n"
    "  ld ra, 8(sp)\n"
    "  addi sp, sp, 16\n"
    "  ret\n"
    ".size rv_call_raw, . - rv_call_raw\n");
#endif
