/* Building a JSON document with jansson for the CLI's machine-readable outputs (`hilsim model
 * --json`, `hilsim can dbc --json`), so each command says what goes in and none of them escapes
 * strings or formats numbers by hand.
 *
 * A document tracks failed insertions: jansson's *_new calls return -1 on out of memory and
 * would otherwise leave a key silently missing; hs_json_doc_print refuses such a document. */
#ifndef HS_CLI_JSON_DOC_H
#define HS_CLI_JSON_DOC_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

struct hs_json_doc {
    bool incomplete; /* an insertion failed */
};

/* Take ownership of val (NULL marks the document incomplete). */
void hs_json_set(struct hs_json_doc *doc, json_t *obj, const char *key, json_t *val);
void hs_json_add(struct hs_json_doc *doc, json_t *arr, json_t *val);

/* A string; NULL gives null. Bytes that are not UTF-8 are read as Latin-1 (older DBC and VRML
 * tools' encoding) so the document stays valid JSON instead of failing. */
json_t *hs_json_str(const char *s);
/* A real; NaN and infinities (absent limits) give null. */
json_t *hs_json_num(double v);
/* An array of n reals as hs_json_num. */
json_t *hs_json_vec(const double *v, int n);

/* Dumps root (consumed) to out with flags and a newline. 0, or -EIO when the document is
 * incomplete or the write failed. */
int hs_json_doc_print(struct hs_json_doc *doc, json_t *root, FILE *out, size_t flags);

#endif
