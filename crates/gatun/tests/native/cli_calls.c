/* Natives for the end-to-end tests of the `gatun` command line (crates/gatun-cli/tests):
 * functions whose call leaves a trace a test can look for after the process has exited. */
#include <stdio.h>
#include <string.h>

/* 4 KiB: a short string passed where one is expected would be overrun. */
struct cli_record {
    long values[512];
};

/* Creates the file `marker` (so a test can tell the function was called), then fills the
 * whole record `out` with 0x5a bytes; returns 1. */
int cli_mark_and_fill(const char *marker, struct cli_record *out) {
    FILE *f = fopen(marker, "w");
    if (f) {
        fclose(f);
    }
    memset(out, 0x5a, sizeof *out);
    return 1;
}

/* A record with bit-fields, returned by value. */
struct cli_bits {
    int a : 3;
    unsigned b : 5;
    signed char c;
};

struct cli_bits cli_make_bits(int a, unsigned b, signed char c) {
    struct cli_bits r;
    memset(&r, 0, sizeof r);
    r.a = a;
    r.b = b;
    r.c = c;
    return r;
}
