// expect: error 2:10 never closed
struct S { char c; double d;
