/* Mesh files through assimp's C API (STL ASCII and binary, OBJ, COLLADA and whatever else the
 * installed assimp reads): every triangle of every mesh in the scene, with the scene's node
 * transforms (which carry COLLADA's <unit>), times the URDF scale, into one hs_mesh in the
 * collision frame. COLLADA's up_axis is ignored on purpose: URDF tools treat mesh coordinates as
 * the link's own (a Z_UP file would otherwise be turned Y-up). Normals are dropped before
 * identical vertices are joined: STL repeats each corner per face with the face normal, and
 * without that the corners would not join (G1's pelvis: 106148 vertices, 18055 after). */
#include <assimp/cfileio.h>
#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hilsim/file_open.h"
#include "urdf_internal.h"

struct acc {
    double *v;
    uint32_t nv;
    uint32_t *t;
    uint32_t nt;
};

static void mat_mul(const struct aiMatrix4x4 *a, const struct aiMatrix4x4 *b,
                    struct aiMatrix4x4 *ret)
{
    const float *A = &a->a1, *B = &b->a1;
    float *C = &ret->a1;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            float s = 0;
            for (int k = 0; k < 4; k++)
                s += A[r * 4 + k] * B[k * 4 + c];
            C[r * 4 + c] = s;
        }
}

static void count(const struct aiScene *s, const struct aiNode *n, int depth, uint64_t *nv,
                  uint64_t *nt)
{
    if (depth > 64)
        return;
    for (unsigned i = 0; i < n->mNumMeshes; i++) {
        const struct aiMesh *m = s->mMeshes[n->mMeshes[i]];
        if (!(m->mPrimitiveTypes & aiPrimitiveType_TRIANGLE))
            continue;
        *nv += m->mNumVertices;
        for (unsigned f = 0; f < m->mNumFaces; f++)
            *nt += m->mFaces[f].mNumIndices == 3;
    }
    for (unsigned i = 0; i < n->mNumChildren; i++)
        count(s, n->mChildren[i], depth + 1, nv, nt);
}

static void fill(const struct aiScene *s, const struct aiNode *n, const struct aiMatrix4x4 *parent,
                 int depth, const double scale[3], struct acc *a)
{
    if (depth > 64)
        return;
    struct aiMatrix4x4 M;
    mat_mul(parent, &n->mTransformation, &M);
    for (unsigned i = 0; i < n->mNumMeshes; i++) {
        const struct aiMesh *m = s->mMeshes[n->mMeshes[i]];
        if (!(m->mPrimitiveTypes & aiPrimitiveType_TRIANGLE))
            continue;
        uint32_t base = a->nv;
        for (unsigned k = 0; k < m->mNumVertices; k++) {
            const struct aiVector3D *p = &m->mVertices[k];
            double x = (double)M.a1 * p->x + (double)M.a2 * p->y + (double)M.a3 * p->z + M.a4;
            double y = (double)M.b1 * p->x + (double)M.b2 * p->y + (double)M.b3 * p->z + M.b4;
            double z = (double)M.c1 * p->x + (double)M.c2 * p->y + (double)M.c3 * p->z + M.c4;
            a->v[3 * a->nv + 0] = x * scale[0];
            a->v[3 * a->nv + 1] = y * scale[1];
            a->v[3 * a->nv + 2] = z * scale[2];
            a->nv++;
        }
        for (unsigned f = 0; f < m->mNumFaces; f++) {
            const struct aiFace *face = &m->mFaces[f];
            if (face->mNumIndices != 3)
                continue;
            for (int k = 0; k < 3; k++)
                a->t[3 * a->nt + k] = base + face->mIndices[k];
            a->nt++;
        }
    }
    for (unsigned i = 0; i < n->mNumChildren; i++)
        fill(s, n->mChildren[i], &M, depth + 1, scale, a);
}

/* The file's extension, lower case ("" when it has none): tells an OBJ. */
static void hint_of(const char *path, char hint[16])
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    size_t k = 0;
    if (dot && (!slash || dot > slash))
        for (dot++; *dot && k < 15; dot++)
            hint[k++] = (char)(*dot >= 'A' && *dot <= 'Z' ? *dot - 'A' + 'a' : *dot);
    hint[k] = 0;
}

/* A line (its n bytes from s) that names material libraries: "mtllib" and a blank. */
static bool is_mtllib(const char *s, size_t n)
{
    return n > 7 && !memcmp(s, "mtllib", 6) && (s[6] == ' ' || s[6] == '\t');
}

/* An OBJ's material libraries (mtllib lines), checked as the mesh is: a named file that exists
 * must be a regular file. Then each mtllib line becomes a comment in the bytes assimp gets:
 * hilsim reads <collision> geometry, which has no appearance, so materials are not used (a
 * warning says so, once per model), and assimp opens no file but the one read here. */
static int obj_materials(struct hs__urdf *u, const xmlNode *n, const char *path, char *buf,
                         size_t len)
{
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path) : 1;
    const char *dir = slash ? path : ".";
    for (size_t i = 0; i < len;) {
        size_t end = i;
        while (end < len && buf[end] != '\n')
            end++;
        size_t k = i;
        while (k < end && (buf[k] == ' ' || buf[k] == '\t'))
            k++;
        if (is_mtllib(buf + k, end - k)) {
            for (size_t a = k + 7; a < end;) {
                while (a < end && (buf[a] == ' ' || buf[a] == '\t' || buf[a] == '\r'))
                    a++;
                size_t b = a;
                while (b < end && buf[b] != ' ' && buf[b] != '\t' && buf[b] != '\r')
                    b++;
                if (b > a) {
                    char p[4096];
                    if (buf[a] == '/')
                        snprintf(p, sizeof p, "%.*s", (int)(b - a), buf + a);
                    else
                        snprintf(p, sizeof p, "%.*s/%.*s", dirlen, dir, (int)(b - a), buf + a);
                    int fd, rc = hs_open_regular(p, &fd);
                    if (rc == 0)
                        close(fd);
                    else if (rc != -ENOENT)
                        return hs__urdf_err(u, n, rc, "mesh %s: material library %s: %s", path, p,
                                            hs_open_regular_strerror(rc));
                }
                a = b;
            }
            buf[k] = '#';
            if (!u->obj_materials_said) {
                u->obj_materials_said = true;
                int w = hs__urdf_warn(u, n,
                                      "mesh %s: its materials (mtllib) are not used: hilsim "
                                      "simulates <collision> geometry, which has no colour or "
                                      "texture (said once per model)",
                                      path);
                if (w < 0)
                    return w;
            }
        }
        i = end + 1;
    }
    return 0;
}

int hs__urdf_mesh(struct hs__urdf *u, const xmlNode *n, const char *path, const double scale[3],
                  struct hs_mesh *ret)
{
    /* Opened once, without waiting, checked a regular file by fstat and read whole: assimp
     * gets the bytes through urdf_mesh_io.c, never the path, so a FIFO swapped in after the
     * check cannot make it wait; what the file references (a glTF's buffers) goes through the
     * same checks there, confined to the mesh's directory. */
    uint8_t *buf;
    size_t len;
    int rc = hs_read_regular(path, 0, HS_URDF_MESH_FILE_MAX, &buf, &len);
    if (rc == -EFBIG)
        return hs__urdf_err(u, n, rc, "mesh %s: larger than the %u bytes hilsim reads", path,
                            HS_URDF_MESH_FILE_MAX);
    if (rc < 0)
        return hs__urdf_err(u, n, rc, "mesh %s: %s", path, hs_open_regular_strerror(rc));
    char hint[16];
    hint_of(path, hint);
    if (!strcmp(hint, "obj") && (rc = obj_materials(u, n, path, (char *)buf, len)) < 0) {
        free(buf);
        return rc;
    }
    struct hs__mesh_io io;
    struct aiFileIO fio;
    if ((rc = hs__mesh_io_init(&io, path, buf, len, &fio)) < 0) {
        hs__mesh_io_fini(&io);
        free(buf);
        return hs__urdf_err(u, n, rc, "mesh %s: its directory: %s", path, strerror(-rc));
    }
    struct aiPropertyStore *props = aiCreatePropertyStore();
    if (!props) {
        hs__mesh_io_fini(&io);
        free(buf);
        return hs__urdf_err(u, n, -ENOMEM, "out of memory");
    }
    aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, 1);
    const struct aiScene *s =
        aiImportFileExWithProperties(path,
                                     aiProcess_Triangulate | aiProcess_DropNormals |
                                         aiProcess_JoinIdenticalVertices | aiProcess_SortByPType,
                                     &fio, props);
    aiReleasePropertyStore(props);
    hs__mesh_io_fini(&io);
    free(buf);
    if ((!s || !s->mRootNode) && io.err) {
        if (s)
            aiReleaseImport(s);
        return hs__urdf_err(u, n, io.err, "mesh %s: %s (assimp: %s)", path, io.why,
                            aiGetErrorString());
    }
    if (!s || !s->mRootNode) {
        if (s)
            aiReleaseImport(s);
        return hs__urdf_err(u, n, -EINVAL, "mesh %s: %s", path, aiGetErrorString());
    }
    uint64_t nv = 0, nt = 0;
    count(s, s->mRootNode, 0, &nv, &nt);
    int r = 0;
    if (nv == 0 || nt == 0) {
        r = hs__urdf_err(u, n, -EINVAL, "mesh %s has no triangles", path);
    } else if (u->vertices + nv > HS_URDF_MAX_VERTICES) {
        r = hs__urdf_err(u, n, -E2BIG, "meshes have more than %u vertices in all",
                         HS_URDF_MAX_VERTICES);
    } else {
        struct acc a = {malloc(3 * nv * sizeof(double)), 0, malloc(3 * nt * sizeof(uint32_t)), 0};
        if (!a.v || !a.t) {
            free(a.v);
            free(a.t);
            r = hs__urdf_err(u, n, -ENOMEM, "out of memory");
        } else {
            struct aiMatrix4x4 I = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
            fill(s, s->mRootNode, &I, 0, scale, &a);
            u->vertices += a.nv;
            *ret = (struct hs_mesh){
                .vertices = a.v, .nvertices = a.nv, .indices = a.t, .ntriangles = a.nt};
        }
    }
    aiReleaseImport(s);
    return r;
}
