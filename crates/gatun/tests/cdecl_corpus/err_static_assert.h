// expect: error 2:16 static assertion failed
_Static_assert(sizeof(int) == 8, "int is 8 bytes");
