#include "hilsim/rt/rt_audit.h"
#include "rt_out.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

static void copy_trimmed(char *dst, size_t size, const char *src, size_t n)
{
    while (n && isspace((unsigned char)src[n - 1]))
        n--;
    while (n && isspace((unsigned char)*src))
        src++, n--;
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

bool hs_rt_parse_preempt(const char *uname_v, const char *sys_realtime, char *model, size_t size)
{
    bool rt_flag = sys_realtime && atoi(sys_realtime) == 1;
    const char *m = "voluntary/none";
    if (rt_flag || strstr(uname_v, "PREEMPT_RT"))
        m = "PREEMPT_RT";
    else if (strstr(uname_v, "PREEMPT_DYNAMIC"))
        m = "PREEMPT_DYNAMIC";
    else if (strstr(uname_v, "PREEMPT"))
        m = "PREEMPT";
    snprintf(model, size, "%s", m);
    return strcmp(m, "PREEMPT_RT") == 0;
}

int hs_rt_parse_cmdline(const char *cmdline, const char *key, char *buf, size_t size)
{
    size_t klen = strlen(key);
    const char *p = cmdline;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        const char *w = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        /* Arguments after a lone "--" go to init, not the kernel. */
        if (p - w == 2 && w[0] == '-' && w[1] == '-')
            break;
        if ((size_t)(p - w) > klen && strncmp(w, key, klen) == 0 && w[klen] == '=') {
            copy_trimmed(buf, size, w + klen + 1, (size_t)(p - w) - klen - 1);
            return 0;
        }
    }
    return -ENOENT;
}

int hs_rt_parse_cpulist(const char *text, int *ret_count)
{
    int count = 0;
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    while (*p && !isspace((unsigned char)*p)) {
        /* isolcpus= may carry flags before the list ("domain,managed_irq,2-3"); skip words. */
        if (isalpha((unsigned char)*p)) {
            while (*p && *p != ',' && !isspace((unsigned char)*p))
                p++;
        } else {
            char *end;
            long a = strtol(p, &end, 10);
            if (end == p || a < 0)
                return -EINVAL;
            long b = a;
            p = end;
            if (*p == '-') {
                b = strtol(p + 1, &end, 10);
                if (end == p + 1 || b < a)
                    return -EINVAL;
                p = end;
                if (*p == ':') /* stride form a-b:used/group: count the range upper bound */
                    while (*p && *p != ',' && !isspace((unsigned char)*p))
                        p++;
            }
            count += (int)(b - a + 1);
        }
        if (*p == ',')
            p++;
        else if (*p && !isspace((unsigned char)*p))
            return -EINVAL;
    }
    *ret_count = count;
    return 0;
}

int hs_rt_parse_dma_latency(const void *bytes, size_t n, long long *ret_us)
{
    int32_t v;
    if (n != sizeof v)
        return -EINVAL;
    memcpy(&v, bytes, sizeof v);
    *ret_us = v;
    return 0;
}

static void read_dma_latency(struct hs_rt_audit *a, const char *root)
{
    char path[512];
    snprintf(path, sizeof path, "%s/dev/cpu_dma_latency", root);
    a->dma_latency_us = -1;
    a->dma_latency_present = access(path, F_OK) == 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    unsigned char b[8];
    ssize_t n = read(fd, b, sizeof b);
    close(fd);
    if (n > 0)
        hs_rt_parse_dma_latency(b, (size_t)n, &a->dma_latency_us);
}

void hs_rt_audit_add_governor(struct hs_rt_audit *a, const char *text)
{
    char g[64];
    copy_trimmed(g, sizeof g, text, strlen(text));
    if (!g[0])
        return;
    /* Already listed? compare whole comma-separated items. */
    const char *p = a->governors;
    size_t gl = strlen(g);
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == gl && strncmp(p, g, n) == 0)
            return;
        p += n + (e ? 1 : 0);
    }
    size_t len = strlen(a->governors);
    snprintf(a->governors + len, sizeof a->governors - len, "%s%s", len ? "," : "", g);
    a->governors_all_performance = strcmp(a->governors, "performance") == 0;
}

/* Reads a small text file under root into buf. 0 or -errno. */
static int read_text(const char *root, const char *path, char *buf, size_t size)
{
    char full[512];
    snprintf(full, sizeof full, "%s%s", root, path);
    FILE *f = fopen(full, "re");
    if (!f)
        return -errno;
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    return 0;
}

static long long rlim_value(rlim_t v)
{
    return v == RLIM_INFINITY ? -1 : (long long)v;
}

static void collect_governors(struct hs_rt_audit *a, const char *root)
{
    char dirpath[512];
    snprintf(dirpath, sizeof dirpath, "%s/sys/devices/system/cpu", root);
    DIR *d = opendir(dirpath);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "cpu", 3) != 0 || !isdigit((unsigned char)e->d_name[3]))
            continue;
        char path[512], text[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/%.32s/cpufreq/scaling_governor",
                 e->d_name);
        if (read_text(root, path, text, sizeof text) == 0)
            hs_rt_audit_add_governor(a, text);
    }
    closedir(d);
}

int hs_rt_audit_collect(struct hs_rt_audit *a, const char *root, const struct hs_rt_report *rep)
{
    memset(a, 0, sizeof *a);
    if (!root)
        root = "";
    char text[4096];
    if (read_text(root, "/proc/sys/kernel/osrelease", text, sizeof text) == 0)
        copy_trimmed(a->kernel_release, sizeof a->kernel_release, text, strlen(text));
    if (read_text(root, "/proc/sys/kernel/version", text, sizeof text) == 0)
        copy_trimmed(a->kernel_version, sizeof a->kernel_version, text, strlen(text));
    struct utsname u;
    if (!root[0] && !a->kernel_version[0] && uname(&u) == 0) { /* /proc not mounted */
        snprintf(a->kernel_release, sizeof a->kernel_release, "%s", u.release);
        snprintf(a->kernel_version, sizeof a->kernel_version, "%s", u.version);
    }
    char rt_text[16];
    bool have_rt = read_text(root, "/sys/kernel/realtime", rt_text, sizeof rt_text) == 0;
    a->sys_realtime = have_rt ? atoi(rt_text) : -1;
    a->preempt_rt = hs_rt_parse_preempt(a->kernel_version, have_rt ? rt_text : NULL,
                                        a->preempt_model, sizeof a->preempt_model);
    if (read_text(root, "/sys/devices/system/cpu/isolated", text, sizeof text) == 0) {
        copy_trimmed(a->isolated, sizeof a->isolated, text, strlen(text));
        if (hs_rt_parse_cpulist(a->isolated, &a->isolated_count) < 0)
            a->isolated_count = 0;
    }
    if (read_text(root, "/sys/devices/system/cpu/nohz_full", text, sizeof text) == 0)
        copy_trimmed(a->nohz_full, sizeof a->nohz_full, text, strlen(text));
    if (strcmp(a->nohz_full, "(null)") == 0)
        a->nohz_full[0] = '\0';
    if (read_text(root, "/sys/devices/system/cpu/online", text, sizeof text) == 0)
        hs_rt_parse_cpulist(text, &a->cpus_online);
    if (read_text(root, "/proc/cmdline", text, sizeof text) == 0) {
        hs_rt_parse_cmdline(text, "isolcpus", a->cmdline_isolcpus, sizeof a->cmdline_isolcpus);
        hs_rt_parse_cmdline(text, "nohz_full", a->cmdline_nohz_full, sizeof a->cmdline_nohz_full);
        hs_rt_parse_cmdline(text, "rcu_nocbs", a->cmdline_rcu_nocbs, sizeof a->cmdline_rcu_nocbs);
    }
    struct rlimit rl;
    a->rtprio_cur = a->rtprio_max = a->memlock_cur_bytes = a->memlock_max_bytes = 0;
    if (getrlimit(RLIMIT_RTPRIO, &rl) == 0)
        a->rtprio_cur = rlim_value(rl.rlim_cur), a->rtprio_max = rlim_value(rl.rlim_max);
    if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
        a->memlock_cur_bytes = rlim_value(rl.rlim_cur),
        a->memlock_max_bytes = rlim_value(rl.rlim_max);
    read_dma_latency(a, root);
    collect_governors(a, root);
    if (rep) {
        a->have_report = true;
        a->report = *rep;
    }
    return 0;
}

bool hs_rt_audit_rt_capable(const struct hs_rt_audit *a, char *why, size_t size)
{
    struct hs__out o;
    hs__out_init(&o, why, size);
    if (!a->preempt_rt)
        hs__out_put(&o, "kernel is not PREEMPT_RT (%s); ", a->preempt_model);
    if (a->have_report) {
        if (a->report.sched_fifo.state != HS_RT_GRANTED)
            hs__out_put(&o, "SCHED_FIFO %s; ", hs_rt_grant_name(a->report.sched_fifo.state));
        if (a->report.mlockall.state != HS_RT_GRANTED)
            hs__out_put(&o, "mlockall %s; ", hs_rt_grant_name(a->report.mlockall.state));
    }
    bool ok = o.len == 0;
    if (o.len >= 2 && o.len < size)
        why[o.len - 2] = '\0'; /* drop the trailing "; " */
    hs__out_finish(&o);
    return ok;
}

static void step_text(struct hs__out *o, const char *name, const struct hs_rt_step *s)
{
    hs__out_put(o, "  %-22s %s", name, hs_rt_grant_name(s->state));
    if (s->state == HS_RT_REFUSED)
        hs__out_put(o, " (%s)", strerror(s->err));
    hs__out_put(o, "\n");
}

static const char *or_none(const char *s)
{
    return s[0] ? s : "(none)";
}

size_t hs_rt_audit_format_text(const struct hs_rt_audit *a, char *buf, size_t size)
{
    struct hs__out o;
    hs__out_init(&o, buf, size);
    hs__out_put(&o, "real-time audit:\n");
    hs__out_put(&o, "  %-22s %s %s\n", "kernel", a->kernel_release, a->kernel_version);
    hs__out_put(&o, "  %-22s %s (/sys/kernel/realtime: %s)\n", "preemption model", a->preempt_model,
                a->sys_realtime < 0 ? "absent" : (a->sys_realtime ? "1" : "0"));
    hs__out_put(&o, "  %-22s %s (%d of %d online)\n", "isolated CPUs", or_none(a->isolated),
                a->isolated_count, a->cpus_online);
    hs__out_put(&o, "  %-22s %s\n", "nohz_full CPUs", or_none(a->nohz_full));
    hs__out_put(&o, "  %-22s isolcpus=%s nohz_full=%s rcu_nocbs=%s\n", "kernel cmdline",
                or_none(a->cmdline_isolcpus), or_none(a->cmdline_nohz_full),
                or_none(a->cmdline_rcu_nocbs));
    hs__out_put(&o, "  %-22s cur %lld max %lld (-1 = unlimited)\n", "RLIMIT_RTPRIO", a->rtprio_cur,
                a->rtprio_max);
    hs__out_put(&o, "  %-22s cur %lld max %lld bytes\n", "RLIMIT_MEMLOCK", a->memlock_cur_bytes,
                a->memlock_max_bytes);
    hs__out_put(&o, "  %-22s %s\n", "cpufreq governors",
                a->governors[0] ? a->governors : "(no cpufreq)");
    if (!a->dma_latency_present)
        hs__out_put(&o, "  %-22s absent\n", "/dev/cpu_dma_latency");
    else if (a->dma_latency_us < 0)
        hs__out_put(&o, "  %-22s present, target unreadable\n", "/dev/cpu_dma_latency");
    else if (a->dma_latency_us >= 2000000000)
        hs__out_put(&o, "  %-22s present, no latency request\n", "/dev/cpu_dma_latency");
    else
        hs__out_put(&o, "  %-22s present, target %lld us\n", "/dev/cpu_dma_latency",
                    a->dma_latency_us);
    if (a->have_report) {
        step_text(&o, "SCHED_FIFO", &a->report.sched_fifo);
        step_text(&o, "CPU affinity", &a->report.affinity);
        step_text(&o, "mlockall", &a->report.mlockall);
        step_text(&o, "stack prefault", &a->report.prefault);
        step_text(&o, "cpu_dma_latency = 0", &a->report.dma_latency);
    }
    char why[256];
    bool ok = hs_rt_audit_rt_capable(a, why, sizeof why);
    hs__out_put(&o, "  %-22s %s%s%s\n", "RT capable", ok ? "yes" : "no", ok ? "" : ": ",
                ok ? "" : why);
    return hs__out_finish(&o);
}
