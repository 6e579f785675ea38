/* URDF <collision> geometry into hs_geom, and mesh URIs resolved to files. Colours
 * (<material>): urdf_material.c.
 *
 * Only collision geometry enters the model's geoms: the world collides with every geom, and a
 * robot's <visual> meshes are usually finer than its collision ones. <visual> geometry is read
 * into hs_model.visuals only when asked (hs_model_options.visuals: the web view draws it). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hilsim/file_open.h"
#include "urdf_internal.h"

static int push_geom(struct hs__urdf *u, const xmlNode *n, const struct hs_geom *g)
{
    struct hs_model *m = u->m;
    if (m->ngeoms >= HS_URDF_MAX_GEOMS)
        return hs__urdf_err(u, n, -E2BIG, "more than %d collision geometries", HS_URDF_MAX_GEOMS);
    if (hs__grow((void **)&m->geoms, &u->geoms_cap, m->ngeoms + 1, sizeof *m->geoms) < 0)
        return hs__urdf_err(u, n, -ENOMEM, "out of memory");
    m->geoms[m->ngeoms++] = *g;
    return 0;
}

static bool is_file(const char *path)
{
    return access(path, R_OK) == 0;
}

/* Whether dir/package.xml declares <name>pkg</name> (ROS finds packages by that name, which
 * need not be the directory's). */
static bool package_xml_names(const char *dir, size_t dl, const char *pkg, size_t pkglen)
{
    char path[PATH_MAX], text[8192], want[HS_NAME_MAX * 4];
    if ((size_t)snprintf(path, sizeof path, "%.*s/package.xml", (int)dl, dir) >= sizeof path ||
        (size_t)snprintf(want, sizeof want, "<name>%.*s</name>", (int)pkglen, pkg) >= sizeof want)
        return false;
    FILE *f;
    if (hs_fopen_regular(path, &f) < 0) /* a FIFO named package.xml must not hang the load */
        return false;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return strstr(text, want) != NULL;
}

/* package://pkg/rest in dir: dir/pkg/rest, or dir/rest when dir is the package itself (by its
 * name or its package.xml), or dir/SUB/rest when dir/SUB/package.xml names pkg. */
static bool try_package_dir(const char *dir, const char *pkg, size_t pkglen, const char *rest,
                            char *buf, size_t size)
{
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    if ((size_t)snprintf(buf, size, "%.*s/%.*s/%s", (int)dl, dir, (int)pkglen, pkg, rest) < size &&
        is_file(buf))
        return true;
    const char *base = dir;
    for (size_t i = 0; i < dl; i++)
        if (dir[i] == '/')
            base = dir + i + 1;
    if (((size_t)(dir + dl - base) == pkglen && strncmp(base, pkg, pkglen) == 0) ||
        package_xml_names(dir, dl, pkg, pkglen))
        if ((size_t)snprintf(buf, size, "%.*s/%s", (int)dl, dir, rest) < size && is_file(buf))
            return true;
    char sub[PATH_MAX];
    DIR *d = opendir(dl ? dir : "/");
    bool found = false;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        if (e->d_name[0] == '.' ||
            (size_t)snprintf(sub, sizeof sub, "%.*s/%s", (int)dl, dir, e->d_name) >= sizeof sub)
            continue;
        found = package_xml_names(sub, strlen(sub), pkg, pkglen) &&
                (size_t)snprintf(buf, size, "%s/%s", sub, rest) < size && is_file(buf);
    }
    if (d)
        closedir(d);
    return found;
}

static bool try_path_list(const char *list, const char *pkg, size_t pkglen, const char *rest,
                          char *buf, size_t size)
{
    char dir[PATH_MAX];
    while (list && *list) {
        size_t n = strcspn(list, ":");
        if (n > 0 && n < sizeof dir) {
            memcpy(dir, list, n);
            dir[n] = '\0';
            if (try_package_dir(dir, pkg, pkglen, rest, buf, size))
                return true;
        }
        list += n + (list[n] == ':');
    }
    return false;
}

/* The caller's package paths (hs_model_options): 0 found, 1 not there, < 0 error. A package
 * named explicitly that lacks the file is an error naming its directory: the user said where
 * it is. */
static int try_options(struct hs__urdf *u, const xmlNode *n, const char *uri, const char *pkg,
                       size_t pkglen, const char *rest, char *buf, size_t size)
{
    for (uint32_t i = 0; i < u->opts->npackages; i++) {
        const struct hs_model_package *p = &u->opts->packages[i];
        if (!p->dir)
            continue;
        if (!p->name || !p->name[0]) {
            if (try_package_dir(p->dir, pkg, pkglen, rest, buf, size))
                return 0;
            continue;
        }
        if (strlen(p->name) != pkglen || strncmp(p->name, pkg, pkglen) != 0)
            continue;
        if ((size_t)snprintf(buf, size, "%s/%s", p->dir, rest) >= size)
            return hs__urdf_err(u, n, -ENAMETOOLONG, "filename \"%s\": path too long", uri);
        if (is_file(buf))
            return 0;
        return hs__urdf_err(u, n, -ENOENT,
                            "filename \"%s\": package '%s' is given as %s, which has no %s", uri,
                            p->name, p->dir, rest);
    }
    return 1;
}

int hs__urdf_resolve(struct hs__urdf *u, const xmlNode *n, const char *uri, char *buf, size_t size)
{
    if (!u->dir)
        return hs__urdf_err(u, n, -EINVAL,
                            "mesh \"%s\": a model loaded from a buffer without a base path cannot "
                            "refer to files",
                            uri);
    if (strncmp(uri, "package://", 10) == 0) {
        const char *pkg = uri + 10;
        while (*pkg == '/') /* package:///pkg/...: as ROS tools and pinocchio read it */
            pkg++;
        const char *slash = strchr(pkg, '/');
        if (!slash || slash == pkg || !slash[1])
            return hs__urdf_err(u, n, -EINVAL, "filename \"%s\": expected package://PACKAGE/PATH",
                                uri);
        size_t pkglen = (size_t)(slash - pkg);
        int r = try_options(u, n, uri, pkg, pkglen, slash + 1, buf, size);
        if (r <= 0)
            return r;
        if (try_path_list(getenv(HS_PACKAGE_PATH_ENV), pkg, pkglen, slash + 1, buf, size) ||
            try_path_list(getenv("ROS_PACKAGE_PATH"), pkg, pkglen, slash + 1, buf, size))
            return 0;
        /* The model file's ancestors: a package checked out with the URDF inside it. */
        char dir[PATH_MAX];
        char *real = realpath(u->dir, NULL);
        snprintf(dir, sizeof dir, "%s", real ? real : u->dir);
        free(real);
        for (;;) {
            if (try_package_dir(dir, pkg, pkglen, slash + 1, buf, size))
                return 0;
            char *s = strrchr(dir, '/');
            if (!s || s == dir)
                break;
            *s = '\0';
        }
        return hs__urdf_err(u, n, -ENOENT,
                            "filename \"%s\": package '%.*s' holding %s not found in the "
                            "package paths given (--package-path, models[].package_paths), $%s, "
                            "$ROS_PACKAGE_PATH or the directories above the model",
                            uri, (int)pkglen, pkg, slash + 1, HS_PACKAGE_PATH_ENV);
    }
    const char *path = uri;
    if (strncmp(uri, "file://", 7) == 0)
        path = uri + 7;
    else if (strstr(uri, "://"))
        return hs__urdf_err(u, n, -EINVAL,
                            "filename \"%s\": only package://, file:// and plain paths are "
                            "supported",
                            uri);
    int w = path[0] == '/' ? snprintf(buf, size, "%s", path)
                           : snprintf(buf, size, "%s/%s", u->dir, path);
    if (w < 0 || (size_t)w >= size)
        return hs__urdf_err(u, n, -ENAMETOOLONG, "filename \"%s\": path too long", uri);
    if (!is_file(buf))
        return hs__urdf_err(u, n, -ENOENT, "filename \"%s\": cannot read %s", uri, buf);
    return 0;
}

static int mesh_geom(struct hs__urdf *u, const xmlNode *g, struct hs_geom *ret)
{
    static const double one[3] = {1, 1, 1};
    char uri[PATH_MAX], path[PATH_MAX];
    double scale[3];
    int r = hs__urdf_attr_str(u, g, "filename", true, uri, sizeof uri);
    if (r == 0)
        r = hs__urdf_attr_vec(u, g, "scale", 3, one, scale);
    if (r == 0)
        r = hs__urdf_resolve(u, g, uri, path, sizeof path);
    if (r == 0)
        r = hs__urdf_mesh(u, g, path, scale, &ret->u.mesh);
    return r;
}

static int positive(struct hs__urdf *u, const xmlNode *n, const char *attr, double *ret)
{
    int r = hs__urdf_attr_num(u, n, attr, true, 0, ret);
    if (r == 0 && !(*ret > 0))
        r = hs__urdf_err(u, n, -EINVAL, "attribute '%s' must be positive", attr);
    return r;
}

/* The geometry of a <collision> or <visual> element c into *g (a mesh's arrays allocated). */
static int read_geom(struct hs__urdf *u, const xmlNode *c, struct hs_geom *ret)
{
    struct hs_geom g = {0};
    int r = hs__urdf_origin(u, c, &g.pose);
    if (r)
        return r;
    const xmlNode *geo = hs__urdf_child(c, "geometry"), *s = NULL;
    if (!geo)
        return hs__urdf_err(u, c, -EINVAL, "missing <geometry>");
    for (s = geo->children; s && s->type != XML_ELEMENT_NODE; s = s->next)
        ;
    if (!s)
        return hs__urdf_err(u, geo, -EINVAL, "expected <box>, <cylinder>, <sphere> or <mesh>");
    if (hs__urdf_is(s, "box")) {
        g.type = HS_GEOM_BOX;
        r = hs__urdf_attr_vec(u, s, "size", 3, NULL, g.u.box.size);
        if (r == 0 && !(g.u.box.size[0] > 0 && g.u.box.size[1] > 0 && g.u.box.size[2] > 0))
            r = hs__urdf_err(u, s, -EINVAL, "attribute 'size' must be three positive numbers");
    } else if (hs__urdf_is(s, "sphere")) {
        g.type = HS_GEOM_SPHERE;
        r = positive(u, s, "radius", &g.u.sphere.radius);
    } else if (hs__urdf_is(s, "cylinder")) {
        g.type = HS_GEOM_CYLINDER;
        r = positive(u, s, "radius", &g.u.cylinder.radius);
        if (r == 0)
            r = positive(u, s, "length", &g.u.cylinder.height);
        /* URDF cylinders lie along their z, the model's (VRML's) along y: turn y onto z. */
        static const double yz[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0};
        double R[9];
        hs_rot_mul(g.pose.R, yz, R);
        memcpy(g.pose.R, R, sizeof R);
    } else if (hs__urdf_is(s, "mesh")) {
        g.type = HS_GEOM_MESH;
        r = mesh_geom(u, s, &g); /* mesh_collision: model_mesh_collision.c, after the load */
    } else {
        return hs__urdf_err(u, s, -EINVAL,
                            "unknown geometry (expected box, cylinder, sphere or mesh)");
    }
    if (r)
        return r;
    *ret = g;
    return 0;
}

static void free_geom(struct hs_geom *g)
{
    if (g->type == HS_GEOM_MESH) {
        free(g->u.mesh.vertices);
        free(g->u.mesh.indices);
    }
}

static int one_collision(struct hs__urdf *u, const xmlNode *c, int32_t li)
{
    struct hs_geom g = {0};
    int r = read_geom(u, c, &g);
    if (r != 0)
        return r;
    /* A <collision>'s colour: hilsim's export writes one where the collision shapes are what
     * is drawn (a VRML model's). */
    if (u->opts->visuals)
        r = hs__urdf_material_of(u, c, &g.material);
    if (r < 0 || (r = push_geom(u, c, &g)) < 0)
        free_geom(&g);
    (void)li;
    return r;
}

static int push_visual(struct hs__urdf *u, const xmlNode *n, const struct hs_geom *g)
{
    struct hs_model *m = u->m;
    if (m->nvisuals >= HS_URDF_MAX_GEOMS) {
        int r = hs__urdf_warn(u, n, "more than %d visual geometries: the rest is not drawn",
                              HS_URDF_MAX_GEOMS);
        return r < 0 ? r : 1;
    }
    if (hs__grow((void **)&m->visuals, &u->visuals_cap, m->nvisuals + 1, sizeof *m->visuals) < 0)
        return hs__urdf_err(u, n, -ENOMEM, "out of memory");
    m->visuals[m->nvisuals++] = *g;
    return 0;
}

int hs__urdf_visuals(struct hs__urdf *u, const xmlNode *link)
{
    for (const xmlNode *c = link->children; c; c = c->next) {
        if (!hs__urdf_is(c, "visual"))
            continue;
        /* A visual that cannot be read (a missing or unsupported mesh, the vertex budget spent
         * on collision meshes) is said and left out: the model is still what the bench
         * simulates. */
        /* A bad colour is an error, as any bad value, even on a visual left out. */
        uint32_t material;
        int r = hs__urdf_material_of(u, c, &material);
        if (r < 0)
            return r;
        struct hs_geom g = {0};
        struct hs_diag d = {0}, *keep = u->diag;
        u->diag = &d;
        r = read_geom(u, c, &g);
        u->diag = keep;
        if (r == -ENOMEM)
            return hs__urdf_err(u, c, r, "out of memory");
        if (r < 0) {
            if ((r = hs__urdf_warn(u, c, "<visual> not drawn: %s", d.msg)) < 0)
                return r;
            continue;
        }
        g.material = material;
        if ((r = push_visual(u, c, &g)) != 0) {
            free_geom(&g);
            return r < 0 ? r : 0;
        }
    }
    return 0;
}

int hs__urdf_collisions(struct hs__urdf *u, const xmlNode *link, int32_t li)
{
    int r = 0;
    for (const xmlNode *c = link->children; r == 0 && c; c = c->next)
        if (hs__urdf_is(c, "collision"))
            r = one_collision(u, c, li);
    return r;
}
