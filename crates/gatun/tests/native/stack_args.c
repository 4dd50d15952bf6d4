/* Large stack-argument areas (tests/stack_args.rs): by-value structs of 4 KiB, 64 KiB and
 * 1 MiB (arguments and returns), 250 and 1,000 mixed arguments, 250 24-byte structs, and a
 * variadic function taking as many 8-byte arguments as the caller likes. Every function folds
 * every byte or argument into an order-sensitive hash (FNV-1a over 64-bit words or bytes), so
 * a misplaced, lost or swapped byte changes what the test sees; the Rust side computes the
 * same hash. Returned structs are filled deterministically from a seed (stack_fill). */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

/* One 64-bit word into the hash. */
static uint64_t mix(uint64_t h, uint64_t x) { return (h ^ x) * FNV_PRIME; }

static uint64_t hash_bytes(uint64_t h, const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++) h = mix(h, p[i]);
    return h;
}

/* Byte i of a struct made from `seed`. */
static unsigned char stack_fill(uint32_t seed, size_t i) {
    return (unsigned char)(seed + i * 131u + (i >> 9));
}

typedef struct { unsigned char b[4096]; } stack_big4k;
typedef struct { unsigned char b[65536]; } stack_big64k;
typedef struct { unsigned char b[1048576]; } stack_big1m;

/* The struct's bytes hashed between the two scalars around it. */
uint64_t stack_take4k(int32_t before, stack_big4k s, int64_t after) {
    uint64_t h = mix(FNV_OFFSET, (uint64_t)(int64_t)before);
    h = hash_bytes(h, s.b, sizeof s.b);
    return mix(h, (uint64_t)after);
}

uint64_t stack_take64k(int32_t before, stack_big64k s, int64_t after) {
    uint64_t h = mix(FNV_OFFSET, (uint64_t)(int64_t)before);
    h = hash_bytes(h, s.b, sizeof s.b);
    return mix(h, (uint64_t)after);
}

/* Exactly the 1 MiB limit of stack arguments on x86-64 System V (by reference elsewhere). */
uint64_t stack_take1m(stack_big1m s) { return hash_bytes(FNV_OFFSET, s.b, sizeof s.b); }

stack_big4k stack_make4k(uint32_t seed) {
    stack_big4k s;
    for (size_t i = 0; i < sizeof s.b; i++) s.b[i] = stack_fill(seed, i);
    return s;
}

stack_big64k stack_make64k(uint32_t seed) {
    stack_big64k s;
    for (size_t i = 0; i < sizeof s.b; i++) s.b[i] = stack_fill(seed, i);
    return s;
}

/* Argument and return at once: the argument's bytes reversed, each xor `key`. */
stack_big64k stack_flip64k(stack_big64k s, unsigned char key) {
    stack_big64k r;
    for (size_t i = 0; i < sizeof s.b; i++) r.b[i] = s.b[sizeof s.b - 1 - i] ^ key;
    return r;
}

/* ---- mixed arguments: groups of ten, one of each kind ---- */
typedef struct { unsigned char a, b, c; } stack_s3;

#define STACK_GROUP(g)                                                                      \
    int8_t i8_##g, uint8_t u8_##g, int16_t i16_##g, uint16_t u16_##g, int32_t i32_##g,     \
        uint32_t u32_##g, int64_t i64_##g, float f32_##g, double f64_##g, stack_s3 s3_##g
#define STACK_MIX(g)                                                                        \
    do {                                                                                    \
        uint32_t fb;                                                                        \
        uint64_t db;                                                                        \
        memcpy(&fb, &f32_##g, 4);                                                           \
        memcpy(&db, &f64_##g, 8);                                                           \
        h = mix(h, (uint64_t)(int64_t)i8_##g);                                              \
        h = mix(h, u8_##g);                                                                 \
        h = mix(h, (uint64_t)(int64_t)i16_##g);                                             \
        h = mix(h, u16_##g);                                                                \
        h = mix(h, (uint64_t)(int64_t)i32_##g);                                             \
        h = mix(h, u32_##g);                                                                \
        h = mix(h, (uint64_t)i64_##g);                                                      \
        h = mix(h, fb);                                                                     \
        h = mix(h, db);                                                                     \
        h = mix(h, s3_##g.a | (uint64_t)s3_##g.b << 8 | (uint64_t)s3_##g.c << 16);          \
    } while (0)
#define STACK_PARAMS10(p)                                                                   \
    STACK_GROUP(p##0), STACK_GROUP(p##1), STACK_GROUP(p##2), STACK_GROUP(p##3),             \
        STACK_GROUP(p##4), STACK_GROUP(p##5), STACK_GROUP(p##6), STACK_GROUP(p##7),         \
        STACK_GROUP(p##8), STACK_GROUP(p##9)
#define STACK_MIX10(p)                                                                      \
    STACK_MIX(p##0); STACK_MIX(p##1); STACK_MIX(p##2); STACK_MIX(p##3); STACK_MIX(p##4);    \
    STACK_MIX(p##5); STACK_MIX(p##6); STACK_MIX(p##7); STACK_MIX(p##8); STACK_MIX(p##9)

/* 250 arguments: 25 groups. */
uint64_t stack_mixed250(STACK_PARAMS10(a), STACK_PARAMS10(b), STACK_GROUP(c0), STACK_GROUP(c1),
                        STACK_GROUP(c2), STACK_GROUP(c3), STACK_GROUP(c4)) {
    uint64_t h = FNV_OFFSET;
    STACK_MIX10(a);
    STACK_MIX10(b);
    STACK_MIX(c0); STACK_MIX(c1); STACK_MIX(c2); STACK_MIX(c3); STACK_MIX(c4);
    return h;
}

/* 1,000 arguments: 100 groups. */
uint64_t stack_mixed1000(STACK_PARAMS10(a), STACK_PARAMS10(b), STACK_PARAMS10(c),
                         STACK_PARAMS10(d), STACK_PARAMS10(e), STACK_PARAMS10(f),
                         STACK_PARAMS10(g), STACK_PARAMS10(h), STACK_PARAMS10(i),
                         STACK_PARAMS10(j)) {
    uint64_t h = FNV_OFFSET;
    STACK_MIX10(a); STACK_MIX10(b); STACK_MIX10(c); STACK_MIX10(d); STACK_MIX10(e);
    STACK_MIX10(f); STACK_MIX10(g); STACK_MIX10(h); STACK_MIX10(i); STACK_MIX10(j);
    return h;
}

/* ---- 250 24-byte structs (MEMORY class on SysV, by reference on AArch64 and Win64) ---- */
typedef struct { int64_t a, b, c; } stack_l3;

#define STACK_L3(g) stack_l3 l_##g
#define STACK_L3_MIX(g) (h = mix(mix(mix(h, (uint64_t)l_##g.a), (uint64_t)l_##g.b), (uint64_t)l_##g.c))
#define STACK_L3_PARAMS10(p)                                                                \
    STACK_L3(p##0), STACK_L3(p##1), STACK_L3(p##2), STACK_L3(p##3), STACK_L3(p##4),         \
        STACK_L3(p##5), STACK_L3(p##6), STACK_L3(p##7), STACK_L3(p##8), STACK_L3(p##9)
#define STACK_L3_MIX10(p)                                                                   \
    STACK_L3_MIX(p##0); STACK_L3_MIX(p##1); STACK_L3_MIX(p##2); STACK_L3_MIX(p##3);         \
    STACK_L3_MIX(p##4); STACK_L3_MIX(p##5); STACK_L3_MIX(p##6); STACK_L3_MIX(p##7);         \
    STACK_L3_MIX(p##8); STACK_L3_MIX(p##9)
#define STACK_L3_PARAMS50(p)                                                                \
    STACK_L3_PARAMS10(p##0), STACK_L3_PARAMS10(p##1), STACK_L3_PARAMS10(p##2),              \
        STACK_L3_PARAMS10(p##3), STACK_L3_PARAMS10(p##4)
#define STACK_L3_MIX50(p)                                                                   \
    STACK_L3_MIX10(p##0); STACK_L3_MIX10(p##1); STACK_L3_MIX10(p##2); STACK_L3_MIX10(p##3); \
    STACK_L3_MIX10(p##4)

uint64_t stack_l3x250(STACK_L3_PARAMS50(a), STACK_L3_PARAMS50(b), STACK_L3_PARAMS50(c),
                      STACK_L3_PARAMS50(d), STACK_L3_PARAMS50(e)) {
    uint64_t h = FNV_OFFSET;
    STACK_L3_MIX50(a); STACK_L3_MIX50(b); STACK_L3_MIX50(c); STACK_L3_MIX50(d);
    STACK_L3_MIX50(e);
    return h;
}

/* ---- as many 8-byte arguments as the caller passes: up to a 1 MiB stack area anywhere ---- */
uint64_t stack_sum_va(int32_t n, ...) {
    va_list ap;
    uint64_t h = FNV_OFFSET;
    va_start(ap, n);
    for (int32_t i = 0; i < n; i++) h = mix(h, (uint64_t)va_arg(ap, int64_t));
    va_end(ap);
    return h;
}

/* ---- upcalls: the callback gets a 4 KiB or 64 KiB struct made from `seed` ---- */
typedef uint64_t (*stack_cb4k)(int32_t, stack_big4k, int64_t);
typedef uint64_t (*stack_cb64k)(int32_t, stack_big64k, int64_t);

uint64_t stack_call_cb4k(stack_cb4k cb, uint32_t seed) {
    return cb(-7, stack_make4k(seed), 0x0102030405060708ll);
}

uint64_t stack_call_cb64k(stack_cb64k cb, uint32_t seed) {
    return cb(-7, stack_make64k(seed), 0x0102030405060708ll);
}
