/* See heap_counter.h. Every function here runs on every allocation of the executable: it adds
 * one thread-local test and forwards, nothing more. */
#include "heap_counter.h"

#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HS_HEAP_COUNT 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define HS_HEAP_COUNT 0
#endif
#endif
#ifndef HS_HEAP_COUNT
#define HS_HEAP_COUNT 1
#endif

/* Local-exec TLS in the executable needs no allocation to access. */
__thread int hs_heap_counting;
long hs_heap_calls;
const bool hs_heap_counter_active = HS_HEAP_COUNT;

#if HS_HEAP_COUNT
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

void *malloc(size_t n)
{
    hs_heap_calls += hs_heap_counting != 0;
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
    hs_heap_calls += hs_heap_counting != 0;
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    hs_heap_calls += hs_heap_counting != 0;
    return __libc_realloc(p, n);
}

void free(void *p)
{
    hs_heap_calls += hs_heap_counting && p;
    __libc_free(p);
}

void *memalign(size_t al, size_t n)
{
    hs_heap_calls += hs_heap_counting != 0;
    return __libc_memalign(al, n);
}

void *aligned_alloc(size_t al, size_t n)
{
    hs_heap_calls += hs_heap_counting != 0;
    return __libc_memalign(al, n);
}

int posix_memalign(void **ret, size_t al, size_t n)
{
    hs_heap_calls += hs_heap_counting != 0;
    void *p = __libc_memalign(al, n);
    if (!p)
        return ENOMEM;
    *ret = p;
    return 0;
}
#endif
