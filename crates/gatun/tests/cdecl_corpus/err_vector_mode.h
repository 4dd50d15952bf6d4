// expect: error 2:36 unsupported machine mode `V4SI`
typedef int v4 __attribute__((mode(V4SI)));
