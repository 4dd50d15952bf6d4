// expect: ok
struct timespec { time_t tv_sec; long tv_nsec; };
struct iovec { void *iov_base; size_t iov_len; };
typedef struct { int quot; int rem; } div_t;
struct sockaddr { unsigned short sa_family; char sa_data[14]; };
struct list { struct list *prev, *next; };
union sigval { int sival_int; void *sival_ptr; };
struct tagged { enum kind { K_INT, K_DBL } kind; union { int i; double d; } u; };
struct tm { int tm_sec, tm_min, tm_hour, tm_mday, tm_mon, tm_year, tm_wday, tm_yday, tm_isdst;
            long tm_gmtoff; const char *tm_zone; };
typedef struct z_stream_s { const unsigned char *next_in; unsigned avail_in; unsigned long total_in;
    unsigned char *next_out; unsigned avail_out; unsigned long total_out; const char *msg;
    struct internal_state *state; void *(*zalloc)(void *, unsigned, unsigned);
    void (*zfree)(void *, void *); void *opaque; int data_type; unsigned long adler;
    unsigned long reserved; } z_stream;
extern int deflateInit_(z_stream *strm, int level, const char *version, int stream_size);
