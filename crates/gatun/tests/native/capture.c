/* Targets for the system-call adapter tests (tests/capture.rs, tests/capture_alloc.rs):
 * the JDK's TestCaptureStateUtil dummies as C functions. */
#include <errno.h>
#include <stdint.h>

/* Sets errno to `err` (always, like the JDK's dummy) and returns `ret`. */
int capture_int(int ret, int err) {
    errno = err;
    return ret;
}

/* The same with a 64-bit result (a C long on LP64; int64_t, as a long is 4 bytes on Windows). */
int64_t capture_long(int64_t ret, int err) {
    errno = err;
    return ret;
}

/* A short result: not adaptable. */
short capture_short(int64_t ret, int err) {
    errno = err;
    return (short)ret;
}

/* Returns `ret` and leaves errno alone (a "failure" that sets no errno). */
int capture_noset(int ret) {
    return ret;
}

/* Calls `cb(ctx)` (which may make adapted calls of its own), then sets errno to `err` and
 * returns -1: an adapted call in progress while another is made on the same thread. */
int capture_reenter(void (*cb)(void *), void *ctx, int err) {
    cb(ctx);
    errno = err;
    return -1;
}
