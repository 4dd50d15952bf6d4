// expect: ok
/* A slice of libc, written the way headers write it. */
extern size_t strlen(const char *__s) __attribute__((__pure__)) __attribute__((__nonnull__(1)));
extern int open(const char *__file, int __oflag, ...) __asm__("open64");
extern void *memcpy(void *__restrict __dest, const void *__restrict __src, size_t __n);
extern int printf(const char *__restrict __format, ...);
extern int fputs(const char *__restrict __s, FILE *__restrict __stream);
extern void qsort(void *__base, size_t __nmemb, size_t __size,
                  int (*__compar)(const void *, const void *));
extern void (*signal(int __sig, void (*__handler)(int)))(int);
extern pid_t getpid(void);
extern ssize_t read(int __fd, void *__buf, size_t __nbytes);
extern off_t lseek(int __fd, off_t __offset, int __whence);
extern double pow(double __x, double __y);
extern _Noreturn void exit(int __status);
extern int *__errno_location(void) __attribute__((__const__));
