// expect: ok
typedef int register_t __attribute__ ((__mode__ (__word__)));
extern int fscanf (FILE *__restrict __stream, const char *__restrict __format, ...) __asm__ ("" "__isoc99_fscanf") __attribute__ ((__nonnull__ (1)));
static __inline unsigned int __bswap_32 (unsigned int __bsx) { return __builtin_bswap32 (__bsx); }
typedef struct { long long __max_align_ll __attribute__((__aligned__(__alignof__(long long)))); long double __max_align_ld __attribute__((__aligned__(__alignof__(long double)))); } max_align_t;
extern long double strtold (const char *__restrict __nptr, char **__restrict __endptr) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__nonnull__ (1)));
typedef __builtin_va_list __gnuc_va_list;
extern int vprintf (const char *__restrict __format, __gnuc_va_list __arg);
typedef struct { unsigned short int __control_word; unsigned short int __glibc_reserved1; unsigned int __mxcsr; } fenv_t;
enum { _ISupper = ((0) < 8 ? ((1 << (0)) << 8) : ((1 << (0)) >> 8)), _ISwgraph = ((7) < 8 ? (int) ((1UL << (7)) << 24) : 0) };
_Static_assert (sizeof (int) == 4, "int");
extern int regexec (const void *__restrict __preg, const char *__restrict __String, size_t __nmatch, int __pmatch[__restrict __nmatch], int __eflags);
struct obstack { long chunk_size; unsigned maybe_empty_object : 1; unsigned alloc_failed : 1; };
