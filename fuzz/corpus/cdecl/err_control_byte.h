// expect: error 2:5 unexpected character
int  x;
