#pragma pack(push, 2)
struct p2 { char c; int i; double d; };
#pragma pack(pop)
struct __attribute__((packed)) pk { char c; long l; };
struct al { char c; _Alignas(16) int i; };
struct fl { int n; double items[]; };
struct z { int a[0]; };
typedef int arr3[3][4];
_Static_assert(1, "x");
long f(struct p2, struct pk, struct al *, arr3, int[_Alignof(double)]);
