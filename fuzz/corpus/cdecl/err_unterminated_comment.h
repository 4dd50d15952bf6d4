// expect: error 2:10 unterminated comment
int x(); /* no end
