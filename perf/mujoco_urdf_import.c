/* See mujoco_urdf_import.h. */
#include "mujoco_urdf_import.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole of path, NUL-terminated (malloc'ed), or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *text = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
        text = malloc((size_t)n + 1);
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
        free(text);
        text = NULL;
    }
    fclose(f);
    if (text)
        text[n] = '\0';
    return text;
}

void hs_mujoco_floor_only(mjModel *m)
{
    for (int g = 0; g < m->ngeom; g++) {
        bool floor = m->geom_bodyid[g] == 0;
        m->geom_contype[g] = floor ? 1 : 2;
        m->geom_conaffinity[g] = floor ? 2 : 1;
    }
}

mjModel *hs_mujoco_import_urdf(const char *urdf, const char *xml, double step_s,
                               const double gravity[3], char *err, size_t errsz)
{
    mjModel *m = mj_loadXML(urdf, NULL, err, (int)errsz);
    if (!m || !mj_saveLastXML(xml, m, err, (int)errsz)) {
        if (m)
            mj_deleteModel(m);
        return NULL;
    }
    mj_deleteModel(m);
    char *text = slurp(xml);
    char *wb = text ? strstr(text, "<worldbody>") : NULL;
    char *head = text ? strchr(text, '>') : NULL; /* end of <mujoco ...> */
    FILE *f = wb && head && head < wb ? fopen(xml, "w") : NULL;
    if (!f) {
        snprintf(err, errsz, "%s: cannot read or rewrite MuJoCo's output", xml);
        free(text);
        return NULL;
    }
    fwrite(text, 1, (size_t)(head + 1 - text), f);
    fprintf(f, "\n  <option timestep=\"%.17g\" gravity=\"%.17g %.17g %.17g\"/>", step_s, gravity[0],
            gravity[1], gravity[2]);
    fwrite(head + 1, 1, (size_t)(wb + strlen("<worldbody>") - (head + 1)), f);
    fputs("\n    <geom name=\"floor\" type=\"plane\" size=\"5 5 0.1\"/>", f);
    fputs(wb + strlen("<worldbody>"), f);
    int bad = fclose(f) != 0;
    free(text);
    if (bad) {
        snprintf(err, errsz, "%s: write failed", xml);
        return NULL;
    }
    m = mj_loadXML(xml, NULL, err, (int)errsz);
    return m;
}
