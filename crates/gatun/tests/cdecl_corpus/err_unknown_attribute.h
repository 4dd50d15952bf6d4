// expect: error 2:28 unknown attribute `frobnicate`
int f(void) __attribute__((frobnicate));
