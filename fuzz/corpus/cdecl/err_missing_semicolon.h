// expect: error 3:1 expected `;`
int f(void)
int g(void);
