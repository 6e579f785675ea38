/* See call_counter.h. */
#include "call_counter.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

__thread int counting;
long heap_calls, stdio_calls;

void *malloc(size_t n)
{
    heap_calls += counting;
    return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    heap_calls += counting;
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    heap_calls += counting;
    return __libc_realloc(p, n);
}

void free(void *p)
{
    heap_calls += counting && p;
    __libc_free(p);
}

void *memalign(size_t al, size_t n)
{
    heap_calls += counting;
    return __libc_memalign(al, n);
}

void *aligned_alloc(size_t al, size_t n)
{
    heap_calls += counting;
    return __libc_memalign(al, n);
}

int posix_memalign(void **ret, size_t al, size_t n)
{
    heap_calls += counting;
    void *p = __libc_memalign(al, n);
    if (!p)
        return 12; /* ENOMEM */
    *ret = p;
    return 0;
}

/* stdio: count on the RT thread, forward to the real function. */
#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

int vfprintf(FILE *f, const char *fmt, va_list ap)
{
    stdio_calls += counting;
    return REAL(vfprintf)(f, fmt, ap);
}

int vprintf(const char *fmt, va_list ap)
{
    stdio_calls += counting;
    return REAL(vfprintf)(stdout, fmt, ap);
}

int printf(const char *fmt, ...)
{
    stdio_calls += counting;
    va_list ap;
    va_start(ap, fmt);
    int r = REAL(vfprintf)(stdout, fmt, ap);
    va_end(ap);
    return r;
}

int fprintf(FILE *f, const char *fmt, ...)
{
    stdio_calls += counting;
    va_list ap;
    va_start(ap, fmt);
    int r = REAL(vfprintf)(f, fmt, ap);
    va_end(ap);
    return r;
}

int puts(const char *s)
{
    stdio_calls += counting;
    return REAL(puts)(s);
}

int fputs(const char *s, FILE *f)
{
    stdio_calls += counting;
    return REAL(fputs)(s, f);
}

int fputc(int c, FILE *f)
{
    stdio_calls += counting;
    return REAL(fputc)(c, f);
}

int putchar(int c)
{
    stdio_calls += counting;
    return REAL(putchar)(c);
}

size_t fwrite(const void *p, size_t sz, size_t n, FILE *f)
{
    stdio_calls += counting;
    return REAL(fwrite)(p, sz, n, f);
}

ssize_t write(int fd, const void *p, size_t n)
{
    stdio_calls += counting;
    return REAL(write)(fd, p, n);
}
