/* A fixed name table for the command parser's tests and fuzzer: two models that both have a
 * link "BASE" (so a bare BASE is ambiguous), one static model, and two joints. */
#ifndef HS_TEST_CTL_NAMES_TABLE_H
#define HS_TEST_CTL_NAMES_TABLE_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hilsim/ctl.h"

static int table_link(void *ctx, const char *name, uint32_t *ret_body, uint32_t *ret_link)
{
    (void)ctx;
    if (!strcmp(name, "BASE"))
        return -EEXIST;
    if (!strcmp(name, "FLOOR"))
        return -EPERM;
    static const struct {
        const char *name;
        uint32_t body, link;
    } links[] = {{"arm/BASE", 0, 0}, {"ELBOW", 0, 2}, {"arm/ELBOW", 0, 2}, {"box/BASE", 1, 0}};
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
        if (!strcmp(name, links[i].name)) {
            *ret_body = links[i].body, *ret_link = links[i].link;
            return 0;
        }
    return -ENOENT;
}

static int table_joint(void *ctx, const char *name)
{
    (void)ctx;
    return !strcmp(name, "SHOULDER") ? 0 : !strcmp(name, "ELBOW") ? 1 : -ENOENT;
}

static int table_name(void *ctx, bool joint, uint32_t i, char *buf, size_t size)
{
    (void)ctx;
    static const char *const links[] = {"arm/BASE", "ELBOW", "box/BASE"};
    static const char *const joints[] = {"SHOULDER", "ELBOW"};
    const char *const *list = joint ? joints : links;
    if (i >= (joint ? 2u : 3u))
        return -ENOENT;
    snprintf(buf, size, "%s", list[i]);
    return 0;
}

static const struct hs_ctl_names table_names = {
    .link = table_link, .joint = table_joint, .name = table_name};

#endif
