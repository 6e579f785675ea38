/* Access to a view listening beyond loopback: a shared token in the URI or a cookie. */
#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>

#include "hilsim/view.h"

/* Compares without an early exit, so the time says nothing about how much of a guess matched. */
static bool same(const char *a, size_t alen, const char *b, size_t blen)
{
    unsigned char diff = alen != blen;
    for (size_t i = 0; i < blen; i++)
        diff |= (unsigned char)(a[i < alen ? i : 0] ^ b[i]);
    return alen && !diff;
}

/* Finds NAME=VALUE in a list separated by any of seps; the value's length in *ret_len. */
static const char *find_value(const char *list, const char *name, const char *seps, size_t *ret_len)
{
    size_t nlen = strlen(name);
    for (const char *p = list; p && *p;) {
        p += strspn(p, seps);
        size_t len = strcspn(p, seps);
        if (len > nlen && !strncmp(p, name, nlen) && p[nlen] == '=') {
            *ret_len = len - nlen - 1;
            return p + nlen + 1;
        }
        p += len;
    }
    return NULL;
}

bool hs_view_token_ok(const char *token, const char *args, const char *cookie)
{
    if (!token || !token[0])
        return true;
    size_t tlen = strlen(token), len = 0;
    const char *v = find_value(args, "token", "&", &len);
    if (v && same(v, len, token, tlen))
        return true;
    v = find_value(cookie, "hilsim_token", "; ", &len);
    return v && same(v, len, token, tlen);
}

bool hs_view_addr_loopback(const char *addr)
{
    if (!addr || !strcmp(addr, "localhost"))
        return true;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, addr, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, addr, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6);
    return false;
}
