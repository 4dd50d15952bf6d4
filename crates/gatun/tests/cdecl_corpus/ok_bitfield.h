// expect: ok
struct flags { unsigned a : 1; };
