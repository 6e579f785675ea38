/* See call_counter.h. */
#include "call_counter.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

long stdio_calls;

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
