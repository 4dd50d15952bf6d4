// expect: error 2:1 #include
#include <stdio.h>
