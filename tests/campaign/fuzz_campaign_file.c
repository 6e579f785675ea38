/* libFuzzer target: any campaign file either fails cleanly with a message that starts with the
 * file's name and a line, or parses into a campaign whose every run's values render and whose
 * run count is within the bound. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/campaign.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct hs_campaign c; /* 60 KB: not on the fuzzer's stack */
    char err[1024] = "";
    if (hs_campaign_parse(&c, "fuzz.yaml", (const char *)data, size, err, sizeof err) < 0) {
        if (strncmp(err, "fuzz.yaml:", 10) != 0) {
            fprintf(stderr, "error without file:line: %s\n", err);
            abort();
        }
        return 0;
    }
    if (c.runs < 1 || c.runs > HS_CAMP_RUNS_MAX || c.cells * c.runs_per_cell != c.runs)
        abort();
    static const char tmpl[] = "seed ${seed} run ${run}";
    for (int r = 0; r < c.runs && r < 64; r++) {
        struct hs_camp_values v;
        hs_campaign_values(&c, r, &v);
        if (v.cell >= c.cells)
            abort();
        char *s = hs_campaign_render(&c, &v, r, NULL, NULL, 0, tmpl, err, sizeof err);
        if (!s)
            abort();
        free(s);
    }
    return 0;
}
