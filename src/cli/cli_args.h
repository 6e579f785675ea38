/* Shared by the subcommands that take one FILE and a few boolean flags, and report bad input as
 * "hilsim <cmd>: file:line:column: message". Not RT (stdio). */
#ifndef HS_CLI_ARGS_H
#define HS_CLI_ARGS_H

#include <stdbool.h>
#include <stdio.h>

#include "hilsim/diag.h"

struct hs_cli_flag {
    const char *name;  /* "--json" */
    const char *alias; /* "-q", or NULL */
    bool *set;         /* set to true when given */
};

/* Parses argv[first..] into one FILE and the flags (terminated by a {NULL} entry). --help and
 * -h print usage to stdout. Returns 0 with *ret_file set, -1 after --help (exit 0), or
 * HS_EXIT_USAGE after reporting the problem. */
int hs__cli_one_file(const char *cmd, int argc, char **argv, int first,
                     const struct hs_cli_flag *flags, void (*usage)(FILE *), const char **ret_file);
/* Prints a diagnostic to stderr as "hilsim <cmd>: file:line:column: message". */
void hs__cli_print_diag(const char *cmd, const struct hs_diag *d);

#endif
