/* "Did you mean": a bounded optimal-string-alignment distance over short names (config keys,
 * link and joint names). Not RT: only error paths call it. */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "hilsim/closest_name.h"

#define LEN_MAX 64

size_t hs_name_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n >= LEN_MAX || m >= LEN_MAX)
        return SIZE_MAX;
    /* Three rows suffice for the swap rule: d[i-2], d[i-1] and d[i]. */
    size_t rows[3][LEN_MAX + 1];
    for (size_t j = 0; j <= m; j++)
        rows[0][j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t *d = rows[i % 3], *p = rows[(i - 1) % 3], *pp = rows[(i + 1) % 3];
        d[0] = i;
        for (size_t j = 1; j <= m; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            size_t best = p[j - 1] + (ca != cb);
            if (p[j] + 1 < best)
                best = p[j] + 1;
            if (d[j - 1] + 1 < best)
                best = d[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < best)
                best = pp[j - 2] + 1;
            d[j] = best;
        }
    }
    return rows[n % 3][m];
}

const char *hs_closest_name(const char *word, const void *candidates, size_t count, size_t stride)
{
    size_t len = strlen(word), allowed = len <= 4 ? 1 : len <= 8 ? 2 : 3;
    const char *best = NULL;
    size_t best_d = allowed + 1;
    for (size_t i = 0; i < count; i++) {
        const char *name = *(const char *const *)((const char *)candidates + i * stride);
        if (!name)
            continue;
        size_t d = hs_name_distance(word, name);
        if (d < best_d) /* ties: the first candidate, the table's order */
            best = name, best_d = d;
    }
    return best;
}
