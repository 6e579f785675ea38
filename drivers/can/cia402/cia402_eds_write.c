/* EDS writer (CiA 306 electronic data sheet): the node's object dictionary exactly as it is
 * simulated, so a master (the canopen library's import_od, CANopenNode's editor, a PLC's
 * configurator) knows the drive without a hand-written file.
 *
 * Every entry of the dictionary is written, and nothing else: its index and sub-index, data
 * type, access (CiA 306: const, ro, rw, and rww for read-write objects mappable to RPDOs only),
 * PDOMapping, the value range when it is narrower than the type's, and as DefaultValue the
 * value reset node restores (after the config's PDOs and any EDS the config loads). COB-IDs that
 * carry the node-ID (EMCY, PDOs) are written as $NODEID+value, so the file fits the node at any
 * ID. Indices with sub-indices are ARRAYs when sub-indices 1.. share one type, else RECORDs.
 * Manufacturer objects an EDS added (0x2000-0x5FFF) are written back with their limits. The
 * result reads back through hs_cia402_node_load_eds to the same defaults (tested). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cia402/cia402_internal.h"

static const struct {
    uint16_t index;
    const char *name;
} NAMES[] = {
    {0x1000, "Device type"},
    {0x1001, "Error register"},
    {0x1003, "Pre-defined error field"},
    {0x1005, "COB-ID SYNC message"},
    {0x1006, "Communication cycle period"},
    {0x1008, "Manufacturer device name"},
    {0x1009, "Manufacturer hardware version"},
    {0x100A, "Manufacturer software version"},
    {0x1014, "COB-ID EMCY"},
    {0x1015, "Inhibit time EMCY"},
    {0x1016, "Consumer heartbeat time"},
    {0x1017, "Producer heartbeat time"},
    {0x1018, "Identity object"},
    {0x6007, "Abort connection option code"},
    {0x603F, "Error code"},
    {0x6040, "Controlword"},
    {0x6041, "Statusword"},
    {0x605A, "Quick stop option code"},
    {0x605D, "Halt option code"},
    {0x605E, "Fault reaction option code"},
    {0x6060, "Modes of operation"},
    {0x6061, "Modes of operation display"},
    {0x6062, "Position demand value"},
    {0x6064, "Position actual value"},
    {0x6065, "Following error window"},
    {0x6066, "Following error time out"},
    {0x6067, "Position window"},
    {0x6068, "Position window time"},
    {0x606C, "Velocity actual value"},
    {0x606D, "Velocity window"},
    {0x606F, "Velocity threshold"},
    {0x6071, "Target torque"},
    {0x6072, "Max torque"},
    {0x6075, "Motor rated current"},
    {0x6076, "Motor rated torque"},
    {0x6077, "Torque actual value"},
    {0x6078, "Current actual value"},
    {0x607A, "Target position"},
    {0x607C, "Home offset"},
    {0x607D, "Software position limit"},
    {0x6081, "Profile velocity"},
    {0x6083, "Profile acceleration"},
    {0x6084, "Profile deceleration"},
    {0x6085, "Quick stop deceleration"},
    {0x6098, "Homing method"},
    {0x60B1, "Velocity offset"},
    {0x60B2, "Torque offset"},
    {0x60C2, "Interpolation time period"},
    {0x60F4, "Following error actual value"},
    {0x60FF, "Target velocity"},
    {0x6502, "Supported drive modes"},
};

static const char *const IDENTITY[] = {"Vendor-ID", "Product code", "Revision number",
                                       "Serial number"};
static const char *const PDO_COMM[] = {
    "",         "COB-ID used by PDO", "Transmission type", "Inhibit time",
    "Reserved", "Event timer",        "SYNC start value"};

static void object_name(uint16_t index, char *buf, size_t size)
{
    uint16_t base = index & 0xFE00;
    unsigned p = (index & 0x1FF) + 1;
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (NAMES[i].index == index) {
            snprintf(buf, size, "%s", NAMES[i].name);
            return;
        }
    if (base == 0x1400)
        snprintf(buf, size, "RPDO%u communication parameter", p);
    else if (base == 0x1600)
        snprintf(buf, size, "RPDO%u mapping parameter", p);
    else if (base == 0x1800)
        snprintf(buf, size, "TPDO%u communication parameter", p);
    else if (base == 0x1A00)
        snprintf(buf, size, "TPDO%u mapping parameter", p);
    else
        snprintf(buf, size, "Manufacturer object 0x%04X", index);
}

static void sub_name(uint16_t index, uint8_t sub, char *buf, size_t size)
{
    uint16_t base = index & 0xFE00;
    if (sub == 0)
        snprintf(buf, size, index == 0x1003 ? "Number of errors" : "Highest sub-index supported");
    else if (index == 0x1018 && sub <= 4)
        snprintf(buf, size, "%s", IDENTITY[sub - 1]);
    else if ((base == 0x1400 || base == 0x1800) && sub <= 6)
        snprintf(buf, size, "%s", PDO_COMM[sub]);
    else if (base == 0x1600 || base == 0x1A00)
        snprintf(buf, size, "Mapping entry %u", sub);
    else if (index == 0x1003)
        snprintf(buf, size, "Standard error field %u", sub);
    else if (index == 0x1016)
        snprintf(buf, size, "Consumer heartbeat time %u", sub);
    else if (index == 0x607D)
        snprintf(buf, size, sub == 1 ? "Min position limit" : "Max position limit");
    else if (index == 0x60C2)
        snprintf(buf, size,
                 sub == 1 ? "Interpolation time period value" : "Interpolation time index");
    else
        snprintf(buf, size, "Sub-index %u", sub);
}

static const char *access_name(const struct hs_cia402_entry *e)
{
    switch (e->access) {
    case HS_CIA402_CONST:
        return "const";
    case HS_CIA402_RO:
        return "ro";
    case HS_CIA402_WO:
        return "wo";
    default:
        return e->pdo == PDO_R ? "rww" : e->pdo == PDO_T ? "rwr" : "rw";
    }
}

static void type_range(uint8_t type, int64_t *min, int64_t *max)
{
    switch (type) {
    case 2:
        *min = INT8_MIN, *max = INT8_MAX;
        break;
    case 3:
        *min = INT16_MIN, *max = INT16_MAX;
        break;
    case 4:
        *min = INT32_MIN, *max = INT32_MAX;
        break;
    case 5:
        *min = 0, *max = UINT8_MAX;
        break;
    case 6:
        *min = 0, *max = UINT16_MAX;
        break;
    default:
        *min = 0, *max = UINT32_MAX;
        break;
    }
}

/* A COB-ID entry whose value holds the node-ID in its low 7 bits by the pre-defined set. */
static bool node_relative(const struct hs_cia402_entry *e, uint32_t v, uint8_t id)
{
    uint16_t base = e->index & 0xFE00;
    bool cob =
        (e->index == 0x1014 && e->sub == 0) ||
        ((base == 0x1400 || base == 0x1800) && (e->index & 0x1FF) < HS_CIA402_PDO_N && e->sub == 1);
    return cob && (v & 0x7F) == id;
}

static void write_value(FILE *out, const struct hs_cia402_node *n, const struct hs_cia402_entry *e)
{
    const struct hs_cia402_od *od = &n->od_def;
    if (e->type == 9) {
        fprintf(out, "DefaultValue=%s\n", (const char *)od + e->offset);
        return;
    }
    uint32_t raw = hs__cia402_od_get(od, e);
    int64_t v = hs__cia402_od_value(e, raw);
    if (node_relative(e, raw, n->cfg.node_id))
        fprintf(out, "DefaultValue=$NODEID+0x%X\n", raw - n->cfg.node_id);
    else if (e->type <= 4)
        fprintf(out, "DefaultValue=%lld\n", (long long)v);
    else
        fprintf(out, "DefaultValue=0x%X\n", raw);
    int64_t tmin, tmax;
    type_range(e->type, &tmin, &tmax);
    if (e->min > tmin || e->max < tmax)
        fprintf(out, "LowLimit=%lld\nHighLimit=%lld\n", (long long)e->min, (long long)e->max);
}

static void write_var(FILE *out, const struct hs_cia402_node *n, const struct hs_cia402_entry *e,
                      const char *name, bool sub)
{
    if (sub)
        fprintf(out, "[%04Xsub%X]\n", e->index, e->sub);
    else
        fprintf(out, "[%04X]\n", e->index);
    fprintf(out, "ParameterName=%s\nObjectType=0x7\nDataType=0x%04X\nAccessType=%s\n", name,
            e->type, access_name(e));
    write_value(out, n, e);
    fprintf(out, "PDOMapping=%d\n\n", e->pdo ? 1 : 0);
}

/* The entries [first, end) share one index. */
static void write_object(FILE *out, const struct hs_cia402_node *n, unsigned first, unsigned end)
{
    const struct hs_cia402_entry *e = &n->entries[first];
    char name[64], sname[64];
    object_name(e->index, name, sizeof name);
    if (end - first == 1 && e->sub == 0) {
        write_var(out, n, e, name, false);
        return;
    }
    /* the identity and the PDO parameters are RECORDs in CiA 301 whatever their types */
    bool record = e->index == 0x1018 || (e->index >= 0x1400 && e->index < 0x1C00);
    bool array = !record && e->sub == 0 && end - first > 1;
    for (unsigned i = first + 1; array && i < end; i++)
        array = n->entries[i].type == n->entries[first + 1].type;
    fprintf(out, "[%04X]\nParameterName=%s\nObjectType=0x%X\nSubNumber=0x%X\n\n", e->index, name,
            array ? 8 : 9, end - first);
    for (unsigned i = first; i < end; i++) {
        sub_name(n->entries[i].index, n->entries[i].sub, sname, sizeof sname);
        write_var(out, n, &n->entries[i], sname, true);
    }
}

/* The object lists of CiA 306 4.5.2: mandatory (0x1000, 0x1001, 0x1018), optional (the other
 * standard objects), manufacturer (0x2000-0x5FFF). */
static void write_list(FILE *out, const struct hs_cia402_node *n, const char *section, int kind)
{
    static const uint16_t mandatory[] = {0x1000, 0x1001, 0x1018};
    unsigned count = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass)
            fprintf(out, "[%s]\nSupportedObjects=%u\n", section, count);
        unsigned k = 0;
        for (unsigned i = 0; i < n->n_entries; i++) {
            uint16_t x = n->entries[i].index;
            if (i > 0 && n->entries[i - 1].index == x)
                continue;
            bool man = x >= 0x2000 && x < 0x6000;
            bool mand = x == mandatory[0] || x == mandatory[1] || x == mandatory[2];
            if ((kind == 0 && mand) || (kind == 1 && !mand && !man) || (kind == 2 && man)) {
                k++;
                if (pass)
                    fprintf(out, "%u=0x%04X\n", k, x);
            }
        }
        count = k;
    }
    fprintf(out, "\n");
}

int hs_cia402_node_write_eds(const struct hs_cia402_node *node, FILE *out, const char *file_name)
{
    const struct hs_cia402_od *od = &node->od_def;
    fprintf(out,
            "; The object dictionary of a hilsim CiA 402 drive, written by `hilsim can eds`.\n"
            "[FileInfo]\nFileName=%s\nFileVersion=1\nFileRevision=0\nEDSVersion=4.0\n"
            "Description=hilsim simulated CiA 402 servo drive, node %u\n"
            "CreatedBy=hilsim\n\n",
            file_name && *file_name ? file_name : "hilsim-cia402.eds", node->cfg.node_id);
    fprintf(out,
            "[DeviceInfo]\nVendorName=hilsim\nVendorNumber=0x%X\nProductName=%s\n"
            "ProductNumber=0x%X\nRevisionNumber=0x%X\nOrderCode=\n",
            od->identity[0], od->device_name, od->identity[1], od->identity[2]);
    static const unsigned rates[] = {10, 20, 50, 125, 250, 500, 800, 1000};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
        fprintf(out, "BaudRate_%u=1\n", rates[i]);
    fprintf(out,
            "SimpleBootUpMaster=0\nSimpleBootUpSlave=1\nGranularity=8\n"
            "DynamicChannelsSupported=0\nGroupMessaging=0\nNrOfRXPDO=%u\nNrOfTXPDO=%u\n"
            "LSS_Supported=0\n\n",
            (unsigned)HS_CIA402_PDO_N, (unsigned)HS_CIA402_PDO_N);
    fprintf(out, "[DummyUsage]\nDummy0001=0\n");
    for (unsigned i = 2; i <= 7; i++)
        fprintf(out, "Dummy%04u=1\n", i);
    fprintf(out,
            "\n[Comments]\nLines=1\nLine1=Node-ID %u; units: increments (%u per "
            "revolution), per mille of 0x6075/0x6076\n\n",
            node->cfg.node_id, node->cfg.counts_per_rev);
    write_list(out, node, "MandatoryObjects", 0);
    write_list(out, node, "OptionalObjects", 1);
    write_list(out, node, "ManufacturerObjects", 2);
    for (unsigned i = 0; i < node->n_entries;) {
        unsigned j = i + 1;
        while (j < node->n_entries && node->entries[j].index == node->entries[i].index)
            j++;
        write_object(out, node, i, j);
        i = j;
    }
    fflush(out);
    return ferror(out) ? -EIO : 0;
}
