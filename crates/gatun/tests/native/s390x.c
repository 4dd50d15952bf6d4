/* Callees and callers of the s390x executor tests (src/backend/s390x/tests.rs). Portable C,
 * compiled into the test library of every target; only the register recorders at the end are
 * s390x assembly (and exist only there).
 *
 * The callees read their arguments as gcc's code does: on s390x a narrow integer argument is
 * used without extending it again (the caller extended it to 64 bits), so a wrongly extended
 * register changes the result; a float argument is read from the high word of its FPR. The
 * callers check an upcall's results the same way. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct { uint8_t a; } sz_B1;
typedef struct { uint8_t a, b; } sz_B2;
typedef struct { int16_t a, b; } sz_H2;
typedef struct { float a, b; } sz_FF;
typedef struct { float f; } sz_F1;
typedef struct { double d; } sz_D1;
typedef struct { sz_F1 inner; } sz_F1N;
typedef struct { float f[1]; } sz_FA;
typedef struct { uint8_t a, b, c; } sz_B3;
typedef struct { int32_t a, b, c; } sz_I3;
typedef struct { float a, b, c; } sz_F3;
typedef struct { int64_t a, b; } sz_LL;

/* ---- narrow integers, read without extension ---- */
int64_t sz_u32_widened(uint32_t x) { return x; }
int64_t sz_i32_widened(int32_t x) { return x; }
int64_t sz_u16_widened(uint16_t x) { return x; }
int64_t sz_i16_widened(int16_t x) { return x; }
int64_t sz_u8_widened(uint8_t x) { return x; }
int64_t sz_i8_widened(int8_t x) { return x; }
int64_t sz_bool_widened(bool x) { return x; }
/* the sixth argument on the stack (right-justified in its slot) */
int64_t sz_u32_on_stack(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, uint32_t x) {
    (void)a, (void)b, (void)c, (void)d, (void)e;
    return (int32_t)x;
}
/* results: the callee extends them; the handle reads the declared width */
uint32_t sz_u32_ret(int64_t x) { return (uint32_t)x; }
uint16_t sz_u16_ret(int64_t x) { return (uint16_t)x; }
int8_t sz_i8_ret(int64_t x) { return (int8_t)x; }

/* ---- floats and doubles: f0, f2, f4, f6 (a float in the high word), then the stack ---- */
float sz_f32_scale(float x, float y) { return x * y; }
double sz_f32_to_f64(float x) { return x; }
double sz_fp7(float a, double b, float c, double d, float e, double f, float g) {
    return a + 2.0 * b + 3.0 * c + 4.0 * d + 5.0 * e + 6.0 * f + 7.0 * g;
}

/* ---- structs of 1, 2, 4, 8 bytes: their image in a GPR, whatever their members ---- */
int64_t sz_b1_get(sz_B1 s) { return s.a; }
int64_t sz_b2_sum(sz_B2 s) { return s.a + 1000 * s.b; }
int64_t sz_h2_sum(sz_H2 s) { return s.a + 100000 * (int64_t)s.b; }
double sz_ff_sum(sz_FF s) { return s.a * 10.0 + s.b; }
/* one-float structs (nested too) in an FPR; a one-element array is an ordinary struct */
double sz_f1_sum(sz_F1 a, sz_D1 b, sz_F1N c, sz_FA d) {
    return a.f + 10.0 * b.d + 100.0 * c.inner.f + 1000.0 * d.f[0];
}

/* ---- other sizes: by reference to a copy the callee may write ---- */
int64_t sz_ll_sum(int32_t x, sz_LL s, int32_t y) {
    int64_t r = x + 10 * s.a + 100 * s.b + 1000 * (int64_t)y;
    *(volatile int64_t *)&s.a = -1;
    *(volatile int64_t *)&s.b = -1;
    return r;
}
int64_t sz_b3_sum(sz_B3 s) { return s.a + 10 * s.b + 100 * s.c; }

/* ---- every struct result in memory, its address in r2 ---- */
sz_H2 sz_h2_make(int16_t a, int16_t b) { sz_H2 s = { a, b }; return s; }
sz_F1 sz_f1_make(float f) { sz_F1 s = { f }; return s; }
sz_LL sz_ll_make(int64_t a, int32_t b) { sz_LL s = { a, b }; return s; }
sz_B3 sz_b3_next(sz_B3 s) { sz_B3 r = { (uint8_t)(s.a + 1), (uint8_t)(s.b + 1), (uint8_t)(s.c + 1) }; return r; }
sz_I3 sz_i3_next(sz_I3 s) { sz_I3 r = { s.a + 1, s.b + 1, s.c + 1 }; return r; }
sz_F3 sz_f3_next(sz_F3 s) { sz_F3 r = { s.a + 1, s.b + 1, s.c + 1 }; return r; }

/* ---- more than five integers, more than four floats: the stack ---- */
double sz_stacked(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int32_t f, int8_t g,
                  double h, double i, float j, double k, float l, double m, sz_H2 n, sz_F1 o) {
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6.0 * f + 7.0 * g + 8 * h + 9 * i + 10.0 * j +
           11 * k + 12.0 * l + 13 * m + 14.0 * n.a + 15.0 * n.b + 16.0 * o.f;
}

/* ---- variadic: the same registers; a float promoted to double ---- */
double sz_va_doubles(int n, ...) {
    va_list ap;
    va_start(ap, n);
    double s = 0;
    for (int k = 0; k < n; k++) s += va_arg(ap, double) * (k + 1);
    va_end(ap);
    return s;
}
/* n int64_t, then an sz_H2, an sz_F1 and an sz_LL (by reference) */
double sz_va_structs(int n, ...) {
    va_list ap;
    va_start(ap, n);
    int64_t s = 0;
    for (int k = 0; k < n; k++) s += va_arg(ap, int64_t);
    sz_H2 h = va_arg(ap, sz_H2);
    sz_F1 f = va_arg(ap, sz_F1);
    sz_LL l = va_arg(ap, sz_LL);
    va_end(ap);
    return s + 1000.0 * h.a + 10000.0 * h.b + 100000.0 * f.f + 1e6 * l.a + 1e7 * l.b;
}

/* ---- callers of upcalls ---- */
int64_t sz_cb_u8(uint8_t (*f)(void)) { return f(); }
int64_t sz_cb_u16(uint16_t (*f)(void)) { return f(); }
int64_t sz_cb_u32(uint32_t (*f)(void)) { return f(); }
int64_t sz_cb_i8(int8_t (*f)(void)) { return f(); }
int64_t sz_cb_i16(int16_t (*f)(void)) { return f(); }
int64_t sz_cb_i32(int32_t (*f)(void)) { return f(); }
int64_t sz_cb_bool(bool (*f)(void)) { return f(); }
float sz_cb_f32(float (*f)(float, double), float x) { return f(x, 0.5) + 1.0f; }
int64_t sz_cb_h2(sz_H2 (*f)(int16_t, int16_t), int16_t a, int16_t b) {
    sz_H2 r = f(a, b);
    return r.a + 100000 * (int64_t)r.b;
}
double sz_cb_f1(sz_F1 (*f)(sz_F1), float x) {
    sz_F1 s = { x };
    return f(s).f;
}
int64_t sz_cb_ll(sz_LL (*f)(int64_t, int32_t), int64_t a, int32_t b) {
    sz_LL r = f(a, b);
    return r.a + 10 * r.b;
}
int64_t sz_cb_b3(sz_B3 (*f)(sz_B3)) {
    sz_B3 s = { 1, 2, 3 };
    sz_B3 r = f(s);
    return r.a + 10 * r.b + 100 * r.c;
}
/* every argument class in one upcall: four doubles and floats (f0..f6), a fifth float and a
 * one-float struct on the stack, five integer registers (an sz_H2, an sz_FF and an sz_B1 among
 * them), a 16-byte struct by reference on the stack, an unsigned int and an int8_t on the
 * stack; the callee's writes to its by-reference copy must not reach `ll` */
typedef double (*sz_mixed_fn)(double, float, sz_F1, double, float, sz_D1, int64_t, sz_H2, sz_FF,
                              sz_B1, int32_t, sz_LL, uint32_t, int8_t);
double sz_cb_mixed(sz_mixed_fn f) {
    sz_F1 f1 = { 2.5f };
    sz_D1 d1 = { -6.0 };
    sz_H2 h = { -7, 8 };
    sz_FF ff = { 1.5f, -2.5f };
    sz_B1 b = { 200 };
    sz_LL ll = { 11, 12 };
    double r = f(0.5, 1.5f, f1, 3.0, -4.5f, d1, 5, h, ff, b, -9, ll, 0xFFFFFFF0u, -3);
    return (ll.a != 11 || ll.b != 12) ? -1.0 : r;
}

#if defined(__s390x__)
/* sz_record: stores r2..r6, f0, f2, f4, f6 (64-bit images) and the first four stack-argument
 * slots (160(%r15) on) of its caller into sz_seen and returns with r2 and f0 unchanged.
 * sz_call_raw(f): calls f with no arguments and stores r2 and f0 (its 64-bit image) after the
 * call into sz_seen_ret. */
__attribute__((visibility("hidden"))) uint64_t sz_seen[13];
__attribute__((visibility("hidden"))) uint64_t sz_seen_ret[2];
const uint64_t *sz_seen_regs(void) { return sz_seen; }
const uint64_t *sz_seen_ret_regs(void) { return sz_seen_ret; }
__asm__(
    ".text\n"
    ".p2align 3\n"
    ".globl sz_record\n"
    ".type sz_record, @function\n"
    "sz_record:\n"
    "  larl %r1, sz_seen\n"
    "  stmg %r2, %r6, 0(%r1)\n"
    "  std %f0, 40(%r1)\n  std %f2, 48(%r1)\n  std %f4, 56(%r1)\n  std %f6, 64(%r1)\n"
    "  mvc 72(32, %r1), 160(%r15)\n"
    "  br %r14\n"
    ".size sz_record, . - sz_record\n"
    ".globl sz_call_raw\n"
    ".type sz_call_raw, @function\n"
    "sz_call_raw:\n"
    "  stmg %r14, %r15, 112(%r15)\n"
    "  lay %r15, -160(%r15)\n"
    "  lgr %r1, %r2\n"
    "  basr %r14, %r1\n"
    "  larl %r1, sz_seen_ret\n"
    "  stg %r2, 0(%r1)\n"
    "  std %f0, 8(%r1)\n"
    "  lmg %r14, %r15, 272(%r15)\n"
    "  br %r14\n"
    ".size sz_call_raw, . - sz_call_raw\n");
#endif
