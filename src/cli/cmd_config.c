/* hilsim config check FILE: load and validate a bench config, print it resolved. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "hilsim/config.h"
#include "hilsim/model.h"

static void print_diag(const struct hs_diag *diag)
{
    char msg[HS_DIAG_FILE_MAX + HS_DIAG_MSG_MAX + 32];
    hs_diag_format(diag, msg, sizeof msg);
    fprintf(stderr, "hilsim config: %s\n", msg);
}

/* Loads every model the config names and checks the config's joint and sensor names. */
static int check_models(const struct hs_config *cfg)
{
    struct hs_model *models[HS_CFG_MAX_MODELS] = {0};
    struct hs_diag diag = {0};
    int r = 0;
    for (uint32_t i = 0; i < cfg->nmodels && r == 0; i++)
        r = hs_model_load(cfg->models[i].file, &models[i], &diag);
    if (r == 0)
        r = hs_config_check_against_models(cfg, (const struct hs_model *const *)models,
                                           cfg->nmodels, &diag);
    if (r < 0)
        print_diag(&diag);
    for (uint32_t i = 0; i < cfg->nmodels; i++)
        hs_model_free(models[i]);
    return r;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hilsim config check [--quiet] [--no-models] FILE\n\n"
            "Reads a bench config, checks every key, range and cross-field rule, and prints\n"
            "the resolved config (every default filled in, paths absolute) as YAML that hilsim\n"
            "reads back unchanged. Errors name file:line:column and the field.\n"
            "It then loads the models and checks every joint and sensor name against them.\n"
            "Every key is documented in config/README.md.\n\n"
            "  --quiet       print nothing on success\n"
            "  --no-models   do not load the models (syntax and ranges only)\n\n"
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
    bool quiet = false, load_models = true;
    const char *file = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return HS_EXIT_OK;
        } else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            quiet = true;
        } else if (!strcmp(argv[i], "--no-models")) {
            load_models = false;
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
        print_diag(&diag);
        return HS_EXIT_USAGE;
    }
    if (load_models && check_models(cfg) < 0) {
        hs_config_free(cfg);
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
