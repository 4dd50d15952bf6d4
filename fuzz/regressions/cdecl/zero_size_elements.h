struct E {};
struct S { struct E e[1000000000000000000]; };
struct S f(struct S);
