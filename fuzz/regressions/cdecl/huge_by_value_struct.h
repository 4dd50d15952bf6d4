struct B { char a[2305843009213693952]; };
void f(struct B);
struct C { char a[4611686018427387904]; };
struct C g(struct C, struct C);
