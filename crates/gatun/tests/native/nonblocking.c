/* Non-blocking call tests (tests/nonblocking.rs): C functions that block until the test
 * opens a gate, so that the test knows how many calls are in flight at once. Threads block
 * on a pthread condition variable, or a Win32 one under _WIN32. */
#include <stdint.h>
#include <stdlib.h>
#ifdef _WIN32
#include <windows.h>
static SRWLOCK nb_lock = SRWLOCK_INIT;
static CONDITION_VARIABLE nb_cond = CONDITION_VARIABLE_INIT;
static void nb_acquire(void) { AcquireSRWLockExclusive(&nb_lock); }
static void nb_release(void) { ReleaseSRWLockExclusive(&nb_lock); }
static void nb_wait(void) { SleepConditionVariableSRW(&nb_cond, &nb_lock, INFINITE, 0); }
static void nb_broadcast(void) { WakeAllConditionVariable(&nb_cond); }
#else
#include <pthread.h>
static pthread_mutex_t nb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nb_cond = PTHREAD_COND_INITIALIZER;
static void nb_acquire(void) { pthread_mutex_lock(&nb_lock); }
static void nb_release(void) { pthread_mutex_unlock(&nb_lock); }
static void nb_wait(void) { pthread_cond_wait(&nb_cond, &nb_lock); }
static void nb_broadcast(void) { pthread_cond_broadcast(&nb_cond); }
#endif

/* A gate: calls wait at it until it is opened; `waiters` counts the calls waiting now and
 * `passed` those that went through. */
typedef struct {
    int open;
    int waiters;
    int passed;
} nb_gate;

nb_gate *nb_gate_new(void) { return calloc(1, sizeof(nb_gate)); }

void nb_gate_free(nb_gate *g) { free(g); }

void nb_gate_open(nb_gate *g) {
    nb_acquire();
    g->open = 1;
    nb_broadcast();
    nb_release();
}

int nb_gate_waiters(nb_gate *g) {
    nb_acquire();
    int n = g->waiters;
    nb_release();
    return n;
}

int nb_gate_passed(nb_gate *g) {
    nb_acquire();
    int n = g->passed;
    nb_release();
    return n;
}

/* Waits until `g` is open, then returns v * 2 + 1. */
int64_t nb_gate_wait(nb_gate *g, int64_t v) {
    nb_acquire();
    g->waiters++;
    while (!g->open) nb_wait();
    g->waiters--;
    g->passed++;
    nb_release();
    return v * 2 + 1;
}

/* Waits until `g` is open, then writes `len` bytes of `byte` to `out` and returns len. */
int64_t nb_gate_fill(nb_gate *g, unsigned char *out, int64_t len, int byte) {
    nb_gate_wait(g, 0);
    for (int64_t i = 0; i < len; i++) out[i] = (unsigned char)byte;
    return len;
}

/* A struct returned by value: INTEGER, INTEGER on SysV, x0/x1 on AAPCS64, by reference on
 * Win64 (16 bytes). */
typedef struct {
    int64_t sum;
    int64_t product;
} nb_pair;

nb_pair nb_pair_of(int64_t a, int64_t b) {
    nb_pair p = {a + b, a * b};
    return p;
}

/* Sums the bytes of a 40-byte struct passed by value (in memory on every ABI). */
typedef struct {
    unsigned char bytes[40];
} nb_block;

int64_t nb_block_sum(nb_block b) {
    int64_t s = 0;
    for (int i = 0; i < 40; i++) s += b.bytes[i];
    return s;
}

/* Calls `cb(x)` on the calling thread (an upcall from the thread that made the downcall). */
int64_t nb_call_back(int64_t (*cb)(int64_t), int64_t x) { return cb(x); }

/* A struct aligned to 32 bytes, returned by value (through the hidden pointer on every ABI
 * here): the callee may store it with 32-byte-aligned vector stores. */
typedef struct {
    _Alignas(32) int64_t a;
    int64_t b;
} nb_aligned;

nb_aligned nb_aligned_of(int64_t a, int64_t b) {
    nb_aligned r = {a, b};
    return r;
}
