#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_doc.h"

void hs_json_set(struct hs_json_doc *doc, json_t *obj, const char *key, json_t *val)
{
    if (!obj || json_object_set_new(obj, key, val) != 0)
        doc->incomplete = true;
}

void hs_json_add(struct hs_json_doc *doc, json_t *arr, json_t *val)
{
    if (!arr || json_array_append_new(arr, val) != 0)
        doc->incomplete = true;
}

json_t *hs_json_str(const char *s)
{
    if (!s)
        return json_null();
    json_t *j = json_string(s);
    if (j)
        return j;
    size_t n = strlen(s);
    char *u = malloc(2 * n + 1);
    if (!u)
        return NULL;
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x80) {
            u[k++] = (char)*p;
        } else {
            u[k++] = (char)(0xC0 | (*p >> 6));
            u[k++] = (char)(0x80 | (*p & 0x3F));
        }
    }
    j = json_stringn(u, k);
    free(u);
    return j;
}

json_t *hs_json_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *hs_json_vec(const double *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; a && i < n; i++) {
        if (json_array_append_new(a, hs_json_num(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

int hs_json_doc_print(struct hs_json_doc *doc, json_t *root, FILE *out, size_t flags)
{
    int r = root && !doc->incomplete ? json_dumpf(root, out, flags) : -1;
    json_decref(root);
    if (r == 0 && fputc('\n', out) == EOF)
        r = -1;
    return r == 0 ? 0 : -EIO;
}
