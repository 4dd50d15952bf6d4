// expect: error 2:7 cannot return an array
int (f(void))[3];
