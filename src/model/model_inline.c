/* Inline: the URL is resolved against the directory of the including file; the inlined file is
 * parsed with its own DEF namespace and walked in place. A missing file, a cycle or too deep
 * nesting is an error at the Inline's url; errors inside the inlined file name that file. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hilsim/file_open.h"
#include "model_internal.h"

int hs__read_file(const char *path, char **ret_data, size_t *ret_size, struct hs_diag *diag,
                  const char *from_file, int from_line, int from_column)
{
    const char *df = from_file ? from_file : path;
    /* A FIFO or device named as a model (or inlined by one) must not hang the load. */
    FILE *f = NULL;
    int r = hs_fopen_regular(path, &f);
    if (r < 0)
        return hs_diag_set(diag, r, df, from_line, from_column, "cannot open '%s': %s", path,
                           hs_open_regular_strerror(r));
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        int e = errno;
        fclose(f);
        return hs_diag_set(diag, -e, df, from_line, from_column, "cannot stat '%s': %s", path,
                           strerror(e));
    }
    if ((unsigned long long)st.st_size > HS_VRML_MAX_FILE_BYTES) {
        fclose(f);
        return hs_diag_set(diag, -EFBIG, df, from_line, from_column, "'%s' is larger than %u bytes",
                           path, HS_VRML_MAX_FILE_BYTES);
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf || fread(buf, 1, n, f) != n) {
        int e = buf ? EIO : ENOMEM;
        free(buf);
        fclose(f);
        return hs_diag_set(diag, -e, df, from_line, from_column, "cannot read '%s'", path);
    }
    fclose(f);
    buf[n] = '\0';
    *ret_data = buf;
    *ret_size = n;
    return 0;
}

int hs__build_inline(struct hs__builder *b, const struct hs__vnode *n, const struct hs__bctx *ctx)
{
    const struct hs__vvalue *url;
    int r = hs__get_numbers(b, n, ctx->env, "url", HS__FT_MFSTRING, &url);
    if (r < 0)
        return r;
    if (!url || url->n == 0)
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "Inline without url (expected url \"file.wrl\")");
    const char *u = url->items[0].str;
    if (strncmp(u, "file://", 7) == 0)
        u += 7;
    if (!ctx->dir) /* a buffer without base path must not reach the file system */
        return hs_diag_set(b->diag, -EINVAL, url->file, url->line, url->column,
                           "Inline \"%s\": no base path to resolve it against", u);
    if (b->ninline >= HS_MODEL_MAX_INLINE_DEPTH)
        return hs_diag_set(b->diag, -ELOOP, url->file, url->line, url->column,
                           "Inline nested deeper than %d files", HS_MODEL_MAX_INLINE_DEPTH);
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s%s%s", u[0] == '/' ? "" : ctx->dir,
                         u[0] == '/' ? "" : "/", u) >= sizeof path)
        return hs_diag_set(b->diag, -ENAMETOOLONG, url->file, url->line, url->column,
                           "Inline path too long");
    char *real = realpath(path, NULL);
    if (!real)
        return hs_diag_set(b->diag, -ENOENT, url->file, url->line, url->column,
                           "Inline file not found: '%s' (url \"%s\")", path, url->items[0].str);
    for (int i = 0; i < b->ninline; i++)
        if (strcmp(b->inline_stack[i], real) == 0) {
            free(real);
            return hs_diag_set(b->diag, -ELOOP, url->file, url->line, url->column,
                               "cyclic Inline: '%s' includes itself", path);
        }
    char *data;
    size_t size;
    if ((r = hs__read_file(real, &data, &size, b->diag, url->file, url->line, url->column)) < 0) {
        free(real);
        return r;
    }
    struct hs__vdoc *doc;
    r = hs__vrml_parse(data, size, path, &doc, b->diag);
    free(data);
    if (r < 0) {
        free(real);
        return r;
    }
    if (hs__grow((void **)&b->docs, &b->docs_cap, b->ndocs + 1, sizeof *b->docs) < 0) {
        hs__vrml_doc_free(doc);
        free(real);
        return hs_diag_set(b->diag, -ENOMEM, n->file, n->line, n->column, "out of memory");
    }
    b->docs[b->ndocs++] = doc;
    if (hs__builder_warn_doc(b, doc) < 0) {
        free(real);
        return hs_diag_set(b->diag, -ENOMEM, n->file, n->line, n->column, "out of memory");
    }
    char *slash = strrchr(real, '/');
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - real) : 1, slash ? real : ".");
    if (!dir[0])
        strcpy(dir, "/");
    b->inline_stack[b->ninline++] = real;
    struct hs__bctx c = *ctx;
    c.env = NULL; /* a new file: no PROTO instance around it */
    c.dir = dir;
    for (uint32_t i = 0; r == 0 && i < doc->nroots; i++)
        r = hs__build_visit(b, doc->roots[i], &c);
    free(b->inline_stack[--b->ninline]);
    b->inline_stack[b->ninline] = NULL;
    return r;
}
