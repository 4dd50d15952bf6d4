// expect: error 2:1 long double
long double sqrtl(long double);
