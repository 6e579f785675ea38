/* hilsim config check FILE: load and validate a bench config, print it resolved. */
#include <stdio.h>
#include <string.h>

#include "cli_args.h"
#include "commands.h"
#include "hilsim/config.h"
#include "hilsim/model.h"

/* Loads every model the config names and checks the config's joint and sensor names. */
static int check_models(const struct hs_config *cfg)
{
    struct hs_model *models[HS_CFG_MAX_MODELS] = {0};
    struct hs_diag diag = {0};
    int r = 0;
    for (uint32_t i = 0; i < cfg->nmodels && r == 0; i++) {
        struct hs_model_package pk[HS_CFG_MAX_PACKAGES];
        struct hs_model_options opts;
        hs_config_model_options(cfg, i, pk, &opts);
        r = hs_model_load_opts(cfg->models[i].file, &opts, &models[i], &diag);
        if (r == 0)
            r = hs_config_add_model_sensors(cfg, i, models[i], &diag);
        for (uint32_t k = 0; r == 0 && k < models[i]->nwarnings; k++)
            fprintf(stderr, "hilsim config: warning: %s\n", models[i]->warnings[k]);
    }
    if (r == 0)
        r = hs_config_check_against_models(cfg, (const struct hs_model *const *)models,
                                           cfg->nmodels, &diag);
    if (r < 0)
        hs__cli_print_diag("config", &diag);
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
    bool quiet = false, no_models = false;
    const char *file = NULL;
    const struct hs_cli_flag flags[] = {
        {"--quiet", "-q", &quiet}, {"--no-models", NULL, &no_models}, {NULL, NULL, NULL}};
    int rc = hs__cli_one_file("config", argc, argv, 2, flags, usage, &file);
    if (rc)
        return rc < 0 ? HS_EXIT_OK : rc;
    const struct hs_config *cfg = NULL;
    struct hs_diag diag = {0};
    int r = hs_config_load(file, &cfg, &diag);
    if (r < 0) {
        hs__cli_print_diag("config", &diag);
        return HS_EXIT_USAGE;
    }
    if (!no_models && check_models(cfg) < 0) {
        hs_config_free(cfg);
        return HS_EXIT_USAGE;
    }
    rc = HS_EXIT_OK;
    if (!quiet && hs_config_write(cfg, stdout) < 0) {
        fprintf(stderr, "hilsim config: cannot write to stdout\n");
        rc = HS_EXIT_FAILURE;
    }
    hs_config_free(cfg);
    return rc;
}
