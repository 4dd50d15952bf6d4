// expect: error 2:12 unknown type name `foo_t`
struct S { foo_t x; };
