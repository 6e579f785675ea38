/* --scenario for `hilsim run` and `hilsim sim`: load a scenario file against the bench, hand
 * it to the bench as its scenario stage, and after the run print the verdict and write the
 * JUnit XML and JSON files asked for. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hilsim/service/exit_codes.h"
#include "hilsim/service/scenario_attach.h"

#include "hilsim/log.h"

int hs__scenario_attach(struct hs_bench *b, const char *path, struct hs_scenario **ret,
                        struct hs_diag *d)
{
    struct hs_scenario_spec *spec = NULL;
    struct hs_scenario *s = NULL;
    int r = hs_scenario_parse_file(path, &spec, d);
    if (r == 0)
        r = hs_scenario_compile(spec, b, &s, d);
    hs_scenario_spec_free(spec);
    if (r == -EFBIG)
        r = -EINVAL; /* a file larger than the limit is bad input (exit 2), like a bad key */
    if (r < 0)
        return r;
    if ((r = hs_scenario_attach(s, b)) < 0) {
        hs_scenario_destroy(s);
        return hs_diag_set(d, r, path, 0, 0, "cannot attach the scenario: %s", strerror(-r));
    }
    *ret = s;
    return 0;
}

int hs__scenario_check_outputs(const char *junit, const char *json, struct hs_diag *d)
{
    const char *files[2] = {junit, json};
    for (int k = 0; k < 2; k++) {
        if (!files[k])
            continue;
        /* no O_TRUNC: the verdict replaces it at the end; O_NONBLOCK: a FIFO does not wait */
        int fd = open(files[k], O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
        struct stat st;
        int e = fd < 0 ? errno : fstat(fd, &st) < 0 ? errno : S_ISREG(st.st_mode) ? 0 : EINVAL;
        if (fd >= 0)
            close(fd);
        if (e)
            return hs_diag_set(d, -EINVAL, files[k], 0, 0, "%s: cannot write the verdict: %s",
                               k ? "--result-json" : "--junit",
                               e == EINVAL ? "not a regular file" : strerror(e));
    }
    return 0;
}

int hs__scenario_report(struct hs_scenario *s, const char *junit, const char *json, FILE *out)
{
    hs_scenario_finish(s);
    hs_scenario_write_summary(s, out);
    int r;
    if (junit && (r = hs_scenario_write_junit(s, junit)) < 0) {
        hs_log(HS_LOG_ERR, "%s: %s", junit, strerror(-r));
        return HS_EXIT_FAILURE;
    }
    if (json && (r = hs_scenario_write_json(s, json)) < 0) {
        hs_log(HS_LOG_ERR, "%s: %s", json, strerror(-r));
        return HS_EXIT_FAILURE;
    }
    /* ERROR: the run could not decide (a plant fault's run already exits 3) */
    if (hs_scenario_error(s, NULL))
        return HS_EXIT_FAILURE;
    return hs_scenario_passed(s) ? HS_EXIT_OK : HS_EXIT_SCENARIO_FAIL;
}
