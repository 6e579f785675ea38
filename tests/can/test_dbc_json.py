#!/usr/bin/python3
"""`hilsim can dbc FILE --json` (written with jansson) against the documents the hand-written
writer produced before it, kept in dbc_json_golden/ for the DBC files of corpus_dbc/: the same
keys in the same order, the same values, integers still integers. Then the number rule: a
factor, offset or range that needs 17 significant digits reads back as the very same double.
And Latin-1 bytes in DBC text come out as valid UTF-8 JSON."""
import json
import os
import subprocess
import sys
import tempfile

HILSIM = os.environ.get("HILSIM", "hilsim")
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "dbc_json_golden")
CORPUS = os.path.join(HERE, "corpus_dbc")
REALS = {"factor", "offset", "min", "max"}  # the old writer printed 1 for 1.0


def dump(path):
    p = subprocess.run([HILSIM, "can", "dbc", path, "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"{path}: exit {p.returncode}: {p.stderr}")
    if p.stdout.count("\n") != 1 or not p.stdout.endswith("\n"):
        raise AssertionError(f"{path}: not one line")
    return json.loads(p.stdout)


def same(old, new, where, key=""):
    if isinstance(old, dict):
        assert isinstance(new, dict), where
        assert list(old) == list(new), f"{where}: keys {list(old)} != {list(new)}"
        for k in old:
            same(old[k], new[k], f"{where}/{k}", k)
    elif isinstance(old, list):
        assert isinstance(new, list) and len(old) == len(new), where
        for i, (a, b) in enumerate(zip(old, new)):
            same(a, b, f"{where}[{i}]")
    else:
        if key in REALS:
            assert isinstance(new, (int, float)) and not isinstance(new, bool), where
        else:
            assert type(old) is type(new), f"{where}: {type(old)} != {type(new)}"
        assert old == new, f"{where}: {old!r} != {new!r}"


def main():
    names = sorted(f[:-5] for f in os.listdir(GOLDEN) if f.endswith(".json"))
    assert len(names) >= 10, "golden set missing"
    for name in names:
        with open(os.path.join(GOLDEN, name + ".json")) as f:
            old = json.load(f)
        new = dump(os.path.join(CORPUS, name + ".dbc"))
        new["file"] = os.path.basename(new["file"])
        same(old, new, name)
    print(f"{len(names)} documents as before")

    # Awkward numbers: shortest forms of 1 to 17 digits, tiny and huge magnitudes.
    nums = ["0.1", "0.30000000000000004", "1e-07", "123456789.12345679", "-4.9406564584124654e-300",
            "3.14159265358979", "1.7976931348623157e+300", "2.5"]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "n.dbc")
        with open(path, "w") as f:
            f.write('VERSION ""\nBU_: A\nBO_ 1 M: 8 A\n')
            for i, n in enumerate(nums):
                f.write(f' SG_ S{i} : {i * 8}|8@1+ ({n},{n}) [{n}|{n}] "" A\n')
        doc = dump(path)
        for i, n in enumerate(nums):
            s = doc["messages"][0]["signals"][i]
            for k in ("factor", "offset", "min", "max"):
                assert s[k] == float(n), f"{n}: {k} reads back as {s[k]!r}"
    print(f"{len(nums)} awkward numbers read back exactly")

    # Latin-1 text (older DBC tools write it) stays valid JSON: the bytes read as Latin-1.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "l1.dbc")
        with open(path, "wb") as f:
            f.write(b'VERSION ""\nBU_: A\nBO_ 1 M: 8 A\n SG_ S : 0|8@1+ (1,0) [0|1] "\xb0C" A\n'
                    b'CM_ BO_ 1 "caf\xe9";\n')
        p = subprocess.run([HILSIM, "can", "dbc", path, "--json"], capture_output=True)
        assert p.returncode == 0, p.stderr
        doc = json.loads(p.stdout.decode("utf-8"))  # strict: fails on a raw Latin-1 byte
        m = doc["messages"][0]
        assert m["comment"] == "caf\u00e9" and m["signals"][0]["unit"] == "\u00b0C", m
    print("Latin-1 text decoded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
