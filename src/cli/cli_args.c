#include "cli_args.h"

#include <string.h>

#include "commands.h"

int hs__cli_one_file(const char *cmd, int argc, char **argv, int first,
                     const struct hs_cli_flag *flags, void (*usage)(FILE *), const char **ret_file)
{
    const char *file = NULL;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return -1;
        }
        const struct hs_cli_flag *f = flags;
        while (f && f->name && strcmp(a, f->name) && !(f->alias && !strcmp(a, f->alias)))
            f++;
        if (f && f->name) {
            *f->set = true;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "hilsim %s: unknown option '%s'\n", cmd, a);
            usage(stderr);
            return HS_EXIT_USAGE;
        } else if (file) {
            fprintf(stderr, "hilsim %s: one FILE only\n", cmd);
            return HS_EXIT_USAGE;
        } else {
            file = a;
        }
    }
    if (!file) {
        usage(stderr);
        return HS_EXIT_USAGE;
    }
    *ret_file = file;
    return 0;
}

void hs__cli_print_diag(const char *cmd, const struct hs_diag *d)
{
    char msg[HS_DIAG_FILE_MAX + HS_DIAG_MSG_MAX + 32];
    hs_diag_format(d, msg, sizeof msg);
    fprintf(stderr, "hilsim %s: %s\n", cmd, msg);
}
