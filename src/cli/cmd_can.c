/* Placeholder until this subcommand lands; it refuses rather than pretending to work. */
#include <stdio.h>

#include "commands.h"

int hs_cmd_can(int argc, char **argv)
{
    (void)argc;
    fprintf(stderr, "hilsim %s: not implemented yet\n", argv[0]);
    return HS_EXIT_FAILURE;
}
