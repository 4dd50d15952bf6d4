/*
 * C targets of gatun's benchmark suite (crates/gatun-bench). Compiled with -O2 by build.rs into
 * the static library libgatun_bench_natives.a and linked into gatun-bench, so that Rust can call
 * them directly through `extern "C"` (the floor rows) and through gatun's and libffi's handles
 * (by address). Every function is `noinline` so that the call itself is what is measured.
 *
 * Shapes follow the JDK microbenchmarks behind the seed tables:
 *   - CallOverheadByValue (libCallOverheadByValue.c): DoublePoint unit(void), unit_ptr(DoublePoint*)
 *   - PointsAlloc (points/support/libPoint.c): unit_rotated(phi), unit_rotated_ptr(out, phi)
 *   - a 24-byte {long, long, long} returned by value: MEMORY class on SysV AMD64 (through the
 *     hidden pointer in rdi, returned in rax), in x8 on AArch64.
 *   - CaptureStateUtilBench: a "system call" that sets errno and returns -1 on failure.
 * add6 takes six C `long`s (64-bit on LP64): all six SysV INTEGER argument registers.
 */
#include <errno.h>
#include <math.h>

#define NOINLINE __attribute__((noinline))

typedef struct {
    double x;
    double y;
} DoublePoint;

NOINLINE void noop(void) {
    __asm__ volatile("" ::: "memory");
}

NOINLINE int id_i32(int x) {
    __asm__ volatile("" ::: "memory");
    return x;
}

NOINLINE long add6(long a, long b, long c, long d, long e, long f) {
    return a + b + c + d + e + f;
}

/*
 * The floor of any dynamic call path for add6 (row call_overhead/image_add6): the six
 * arguments arrive as an untagged array of 64-bit slots in memory (as JNI's jvalue[] or
 * libffi's argument values), and this thunk loads them into the six argument registers and
 * tail-jumps to `f` (gcc -O2: six loads and `jmp *f`). No checks, no classification.
 */
typedef long (*add6_fn)(long, long, long, long, long, long);

NOINLINE long image_add6(const long *img, add6_fn f) {
    return f(img[0], img[1], img[2], img[3], img[4], img[5]);
}

NOINLINE double fma3(double a, double b, double c) {
    return a * b + c;
}

/* Returns {1, 0} in xmm0:xmm1 (two SSE eightbytes). */
NOINLINE DoublePoint unit(void) {
    DoublePoint p = {1.0, 0.0};
    __asm__ volatile("" ::: "memory");
    return p;
}

typedef struct {
    long a;
    long b;
    long c;
} Long3;

/* Returns {1, 2, 3}: 24 bytes, written through the hidden return pointer on SysV AMD64. */
NOINLINE Long3 long3(void) {
    Long3 r = {1, 2, 3};
    __asm__ volatile("" ::: "memory");
    return r;
}

NOINLINE void unit_ptr(DoublePoint *out) {
    *out = unit();
}

NOINLINE DoublePoint unit_rotated(double phi) {
    DoublePoint p = {cos(phi), sin(phi)};
    return p;
}

NOINLINE void unit_rotated_ptr(DoublePoint *out, double phi) {
    *out = unit_rotated(phi);
}

/* errno 13 (EACCES) and -1 when fail != 0, else 0 with errno untouched. */
NOINLINE int sys_like(int fail) {
    if (fail != 0) {
        errno = 13;
        return -1;
    }
    return 0;
}
