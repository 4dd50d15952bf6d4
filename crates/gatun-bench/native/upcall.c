/* C loops that call a callback n times, for the upcall benchmark rows: the callback is either
 * a gatun upcall stub or a plain Rust `extern "C" fn` (the floor). */

typedef struct { double x, y; } upcall_bench_point; /* SSE + SSE: xmm0, xmm1 both ways */

void upcall_loop_noop(void (*cb)(void), long n) {
    for (long i = 0; i < n; i++) cb();
}

int upcall_loop_id_i32(int (*cb)(int), long n) {
    int acc = 0;
    for (long i = 0; i < n; i++) acc += cb((int)i);
    return acc;
}

double upcall_loop_struct(upcall_bench_point (*cb)(upcall_bench_point), long n) {
    upcall_bench_point p = {1.0, 2.0};
    double acc = 0;
    for (long i = 0; i < n; i++) {
        p = cb(p);
        acc += p.x;
    }
    return acc;
}
