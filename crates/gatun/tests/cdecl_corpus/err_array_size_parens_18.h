// expect: error 2:6 unterminated array size: this `[` is never closed
int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(
