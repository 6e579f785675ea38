#!/usr/bin/python3
"""The EDS that `hilsim can eds` writes, loaded by the real canopen master (christiansandberg's
canopen, ../shared/clients/python, used in place): for both nodes of config/arm2-cia402.yaml,
canopen's import_od must read every object the file declares (each [XXXX] / [XXXXsubY] section
becomes one of its variables, none skipped), resolve $NODEID for each node, give the types,
access and PDO mapping a CiA 402 master relies on, and build a BaseNode402 over it. Then
`hilsim can eds` for the same node must be what hilsim reads back (the C test
test_cia402_eds_write checks the values). Skips (exit 77) without ../shared's clients or
python3-can."""
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77
HILSIM = os.environ.get("HILSIM", "hilsim")
SRC = os.environ.get("HS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLIENTS = os.path.join(os.environ.get("HS_SHARED_DIR", os.path.join(SRC, "..", "shared")),
                       "clients", "python")
if not os.path.isdir(os.path.join(CLIENTS, "canopen")):
    print("skip: no canopen in", CLIENTS)
    sys.exit(SKIP)
sys.path.insert(0, CLIENTS)
try:
    import canopen
    from canopen.objectdictionary import ODArray, ODRecord, ODVariable
except ImportError as e:
    print("skip: canopen cannot be imported:", e)
    sys.exit(SKIP)

CONFIG = os.path.join(SRC, "config", "arm2-cia402.yaml")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def variables(od):
    for obj in od.values():
        if isinstance(obj, ODVariable):
            yield obj
        else:
            yield from obj.values()


with tempfile.TemporaryDirectory() as tmp:
    for name, node_id in (("shoulder", 1), ("elbow", 2)):
        path = os.path.join(tmp, name + ".eds")
        subprocess.run([HILSIM, "can", "eds", CONFIG, name, "-o", path], check=True)
        by_id = subprocess.run([HILSIM, "can", "eds", CONFIG, str(node_id)], check=True,
                               capture_output=True, text=True).stdout
        text = open(path).read()
        check(re.sub(r"FileName=.*", "", by_id) == re.sub(r"FileName=.*", "", text),
              "%s: by name and by node-ID the same EDS" % name)
        sections = re.findall(r"^\[([0-9A-F]{4})(?:sub([0-9A-F]+))?\]$", text, re.M)
        compound = {i for i, s in sections if s}
        declared = {(int(i, 16), int(s, 16) if s else 0) for i, s in sections
                    if s or i not in compound}
        od = canopen.import_od(path, node_id)
        # canopen adds the dummy objects 0x0002-0x0007 that [DummyUsage] allows: not declared
        read = {(v.index, v.subindex) for v in variables(od) if v.index >= 0x1000}
        check(read == declared, "%s: canopen read all %d objects the EDS declares (%d)"
              % (name, len(declared), len(read)))
        check(od[0x1014].default == 0x80 + node_id, "%s: EMCY COB-ID $NODEID resolved" % name)
        check(od[0x1800][1].default & 0x7FF == 0x180 + node_id, "%s: TPDO1 COB-ID" % name)
        check(od[0x1400][1].default & 0x7FF == 0x200 + node_id, "%s: RPDO1 COB-ID" % name)
        for idx, typ, acc, pdo in ((0x6040, 6, "rww", True), (0x6041, 6, "ro", True),
                                   (0x6060, 2, "rww", True), (0x6061, 2, "ro", True),
                                   (0x607A, 4, "rww", True), (0x6064, 4, "ro", True),
                                   (0x60FF, 4, "rww", True), (0x6071, 3, "rww", True),
                                   (0x605A, 3, "rw", False), (0x6502, 7, "const", False)):
            v = od[idx]
            check(v.data_type == typ and v.access_type == acc and v.pdo_mappable == pdo,
                  "%s: 0x%04X type %d, %s, PDO %s" % (name, idx, typ, acc, pdo))
        check(od[0x605A].min == 0 and od[0x605A].max == 8, "%s: quick stop codes 0..8" % name)
        check(od[0x6502].default == 0x3A5, "%s: supported modes PP PV HM CSP CSV CST" % name)
        check(isinstance(od[0x1018], ODRecord) and isinstance(od[0x1003], ODArray),
              "%s: identity a RECORD, error field an ARRAY" % name)
        check(od[0x1008].default == "hilsim CiA 402 drive", "%s: device name" % name)
        node = canopen.BaseNode402(node_id, od)
        check(node.id == node_id and "Statusword" in node.object_dictionary,
              "%s: BaseNode402 built over it" % name)
print("FAILED" if failures else "PASS")
sys.exit(1 if failures else 0)
