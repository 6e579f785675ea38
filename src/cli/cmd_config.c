/* hilsim config check FILE: load and validate a bench config, print it resolved. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "hilsim/config.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hilsim config check [--quiet] FILE\n\n"
            "Reads a bench config, checks every key, range and cross-field rule, and prints\n"
            "the resolved config (every default filled in, paths absolute) as YAML that hilsim\n"
            "reads back unchanged. Errors name file:line:column and the field.\n"
            "Joint and sensor names are checked against the models when the bench starts.\n"
            "Every key is documented in config/README.md.\n\n"
            "  --quiet   print nothing on success\n\n"
            "exit codes: 0 valid, 1 runtime failure, 2 bad usage or invalid config\n");
}

int hs_cmd_config(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return HS_EXIT_OK;
    }
    if (argc < 2 || strcmp(argv[1], "check")) {
        usage(stderr);
        return HS_EXIT_USAGE;
    }
    bool quiet = false;
    const char *file = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return HS_EXIT_OK;
        } else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            quiet = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "hilsim config: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return HS_EXIT_USAGE;
        } else if (file) {
            fprintf(stderr, "hilsim config: one FILE only\n");
            return HS_EXIT_USAGE;
        } else {
            file = argv[i];
        }
    }
    if (!file) {
        usage(stderr);
        return HS_EXIT_USAGE;
    }
    const struct hs_config *cfg = NULL;
    struct hs_diag diag = {0};
    int r = hs_config_load(file, &cfg, &diag);
    if (r < 0) {
        char msg[HS_DIAG_FILE_MAX + HS_DIAG_MSG_MAX + 32];
        hs_diag_format(&diag, msg, sizeof msg);
        fprintf(stderr, "hilsim config: %s\n", msg);
        return HS_EXIT_USAGE;
    }
    int rc = HS_EXIT_OK;
    if (!quiet && hs_config_write(cfg, stdout) < 0) {
        fprintf(stderr, "hilsim config: cannot write to stdout\n");
        rc = HS_EXIT_FAILURE;
    }
    hs_config_free(cfg);
    return rc;
}
