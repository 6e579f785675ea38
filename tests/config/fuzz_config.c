/* libFuzzer target: any input either fails cleanly with a diag or loads a config whose written
 * form loads again and writes identically (the writer/parser round trip is a fixpoint). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/config.h"

static char *write_to_string(const struct hs_config *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    if (hs_config_write(c, f) < 0)
        abort();
    fclose(f);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct hs_config *a = NULL, *b = NULL;
    struct hs_diag d;
    /* base "/" keeps file references to absolute system files; relative ones fail */
    if (hs_config_load_buffer((const char *)data, size, "fuzz.yaml", "/", &a, &d) < 0) {
        if (!d.msg[0])
            abort(); /* every failure must say why */
        return 0;
    }
    char *text_a = write_to_string(a);
    if (hs_config_load_buffer(text_a, strlen(text_a), "fuzz.yaml", "/", &b, &d) < 0) {
        fprintf(stderr, "written config does not load: %s:%d:%d: %s\n%s\n", d.file, d.line,
                d.column, d.msg, text_a);
        abort();
    }
    char *text_b = write_to_string(b);
    if (strcmp(text_a, text_b) != 0) {
        fprintf(stderr, "round trip differs:\n%s\n---\n%s\n", text_a, text_b);
        abort();
    }
    free(text_a);
    free(text_b);
    hs_config_free(a);
    hs_config_free(b);
    return 0;
}
