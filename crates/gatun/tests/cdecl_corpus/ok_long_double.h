// expect: ok
long double sqrtl(long double);
