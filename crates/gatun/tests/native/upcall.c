/* Upcall tests: C code that calls Rust closures through gatun upcall stubs. Every callback's
 * arguments are chosen so that a misplaced byte changes what the test sees. 64-bit integers
 * are int64_t (a C long is 4 bytes on Windows); threads are pthreads, or Win32 threads under
 * _WIN32. */
#include <stdbool.h>
#include <stdint.h>
#ifdef _WIN32
#include <windows.h>
typedef HANDLE upcall_thread;
#define UPCALL_THREAD_FN(name, arg) static DWORD WINAPI name(LPVOID arg)
/* Starts f(a) on a new thread; 0 on success. */
static int upcall_thread_start(upcall_thread *t, LPTHREAD_START_ROUTINE f, void *a) {
    *t = CreateThread(NULL, 0, f, a, 0, NULL);
    return *t ? 0 : -1;
}
static void upcall_thread_join(upcall_thread t) {
    WaitForSingleObject(t, INFINITE);
    CloseHandle(t);
}
#else
#include <pthread.h>
typedef pthread_t upcall_thread;
#define UPCALL_THREAD_FN(name, arg) static void *name(void *arg)
static int upcall_thread_start(upcall_thread *t, void *(*f)(void *), void *a) {
    return pthread_create(t, 0, f, a);
}
static void upcall_thread_join(upcall_thread t) { pthread_join(t, 0); }
#endif

/* ---- the JDK's deep-stack test (TestBufferStack.testDeepStack) ---- */
typedef struct { double x, y, z; } HVAPoint3D; /* 24 bytes: MEMORY class on SysV AMD64 */

HVAPoint3D upcall_recurse(int depth, HVAPoint3D (*cb)(int)) {
    if (depth == 0) {
        HVAPoint3D p = {2, 1, 0};
        return p;
    }
    HVAPoint3D p = cb(depth - 1);
    p.x += 1;
    p.y += 1;
    p.z += 1;
    return p;
}

/* ---- C threads Rust never saw ---- */
typedef struct { int thread; int iteration; } upcall_ticket; /* INTEGER, 8 bytes */
typedef int64_t (*upcall_ticket_cb)(upcall_ticket);

struct upcall_thread_arg {
    upcall_ticket_cb cb;
    int thread;
    int iterations;
    int64_t sum;
};

UPCALL_THREAD_FN(upcall_thread_main, p) {
    struct upcall_thread_arg *a = p;
    int64_t sum = 0;
    for (int i = 0; i < a->iterations; i++) {
        upcall_ticket t = {a->thread, i};
        sum += a->cb(t);
    }
    a->sum = sum;
    return 0;
}

/* Starts `nthreads` (at most 64) threads, each calling cb({thread, i}) for i in
 * 0..iterations and summing the results into sums[thread]. Returns 0, or -1 on failure. */
int upcall_run_threads(upcall_ticket_cb cb, int nthreads, int iterations, int64_t *sums) {
    upcall_thread threads[64];
    struct upcall_thread_arg args[64];
    if (nthreads < 0 || nthreads > 64) return -1;
    int started = 0;
    for (; started < nthreads; started++) {
        args[started] = (struct upcall_thread_arg){cb, started, iterations, 0};
        if (upcall_thread_start(&threads[started], upcall_thread_main, &args[started]) != 0) break;
    }
    for (int i = 0; i < started; i++) upcall_thread_join(threads[i]);
    for (int i = 0; i < started; i++) sums[i] = args[i].sum;
    return started == nthreads ? 0 : -1;
}

/* ---- structs of each SysV class, through S cb(S, int) ---- */
typedef struct { int a; short b; } upcall_I8;        /* INTEGER (6 bytes + 2 padding) */
typedef struct { char c[3]; } upcall_I3;             /* INTEGER, odd size 3 */
typedef struct { int64_t a, b; } upcall_II;             /* INTEGER, INTEGER */
typedef struct { float x, y, z; } upcall_SS12;       /* SSE, SSE (12 bytes) */
typedef struct { double d; } upcall_S8;              /* SSE */
typedef struct { int64_t a; double b; } upcall_IS;      /* INTEGER, SSE */
typedef struct { int i; float f; double d; } upcall_IS16; /* INTEGER (int+float), SSE */
typedef struct { double d; int i; } upcall_SI;       /* SSE, INTEGER (12 bytes + 4 padding) */
typedef struct { float x, y; char c; } upcall_SI9;  /* SSE, INTEGER (9 bytes + 3 padding) */
typedef struct { int i; float f, g; } upcall_IS12;   /* INTEGER (int+float), SSE (12 bytes) */
typedef struct { int64_t a, b, c; } upcall_M24;         /* MEMORY */
typedef struct { char c[17]; } upcall_M17;           /* MEMORY, odd size 17 */

#define UPCALL_CLASS(S) \
    S upcall_call_##S(S (*cb)(S, int), S s, int k) { return cb(s, k); }
UPCALL_CLASS(upcall_I8)
UPCALL_CLASS(upcall_I3)
UPCALL_CLASS(upcall_II)
UPCALL_CLASS(upcall_SS12)
UPCALL_CLASS(upcall_S8)
UPCALL_CLASS(upcall_IS)
UPCALL_CLASS(upcall_IS16)
UPCALL_CLASS(upcall_SI)
UPCALL_CLASS(upcall_SI9)
UPCALL_CLASS(upcall_IS12)
UPCALL_CLASS(upcall_M24)
UPCALL_CLASS(upcall_M17)

/* ---- many arguments: registers run out, structs and scalars spill to the stack ---- */
typedef double (*upcall_many_cb)(int, int64_t, double, float, upcall_II, upcall_SI, short,
                                 signed char, double, double, double, double, double, double,
                                 upcall_M24, int, unsigned short, upcall_IS, float, double);

static double upcall_many_sum(int a0, int64_t a1, double a2, float a3, upcall_II a4, upcall_SI a5,
                              short a6, signed char a7, double a8, double a9, double a10,
                              double a11, double a12, double a13, upcall_M24 a14, int a15,
                              unsigned short a16, upcall_IS a17, float a18, double a19) {
    return 1.0 * a0 + 2.0 * a1 + 3.0 * a2 + 4.0 * a3 + 5.0 * a4.a + 6.0 * a4.b + 7.0 * a5.d +
           8.0 * a5.i + 9.0 * a6 + 10.0 * a7 + 11.0 * a8 + 12.0 * a9 + 13.0 * a10 + 14.0 * a11 +
           15.0 * a12 + 16.0 * a13 + 17.0 * a14.a + 18.0 * a14.b + 19.0 * a14.c + 20.0 * a15 +
           21.0 * a16 + 22.0 * a17.a + 23.0 * a17.b + 24.0 * a18 + 25.0 * a19;
}

#define UPCALL_MANY_ARGS \
    -1, INT64_C(2000000000000), 3.5, -4.25f, (upcall_II){5, -6}, (upcall_SI){7.5, -8}, -9, -10, 11.5, \
        12.5, 13.5, 14.5, 15.5, 16.5, (upcall_M24){-17, 18, -19}, 20, 65000, \
        (upcall_IS){-22, 23.25}, 24.5f, -25.5

/* Calls cb with fixed arguments; returns its result. */
double upcall_many(upcall_many_cb cb) { return cb(UPCALL_MANY_ARGS); }
/* What a correct callback computes: the weighted sum above. */
double upcall_many_expected(void) { return upcall_many_sum(UPCALL_MANY_ARGS); }

/* ---- scalars: small integers are extended by the callee; void; pointers ---- */
int upcall_call_i8(signed char (*cb)(signed char), signed char x) { return cb(x); }
unsigned upcall_call_u16(unsigned short (*cb)(unsigned short), unsigned short x) { return cb(x); }
int upcall_call_bool(bool (*cb)(bool), bool x) { return cb(x); }
void upcall_call_void(void (*cb)(int64_t, float), int64_t a, float b) { cb(a, b); }
void *upcall_call_ptr(void *(*cb)(void *, int64_t), void *p, int64_t n) { return cb(p, n); }

/* ---- cb(x) on a new thread (for the confined-stub check) ---- */
struct upcall_i8_job {
    signed char (*cb)(signed char);
    signed char x;
    int result;
};

UPCALL_THREAD_FN(upcall_i8_job_main, p) {
    struct upcall_i8_job *j = p;
    j->result = j->cb(j->x);
    return 0;
}

int upcall_call_i8_on_thread(signed char (*cb)(signed char), signed char x) {
    upcall_thread t;
    struct upcall_i8_job j = {cb, x, 0};
    if (upcall_thread_start(&t, upcall_i8_job_main, &j) != 0) return -1000;
    upcall_thread_join(t);
    return j.result;
}
/* Calls an int(int) callback (tests/stub_memory.rs). */
int upcall_call_int(int (*cb)(int), int x) { return cb(x); }
