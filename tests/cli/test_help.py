"""Help that matches the commands (issue 31): every command of `hilsim --help` answers
`hilsim CMD --help` with exit 0, and every long option a command's source accepts (a "--name"
literal or getopt_long entry in src/cli/cmd_CMD*.c;
`run` and `bench` share cmd_run.c's table) is named in that help, so an option added without its help line
fails here. Each command is also named in the README or docs/commands.md's table.

Stdlib only. Environment: HILSIM, HS_SOURCE_DIR."""
import glob
import os
import re
import subprocess
import unittest

HILSIM = os.environ["HILSIM"]
SRC = os.environ.get("HS_SOURCE_DIR", ".")


def helptext(*args):
    r = subprocess.run([HILSIM, *args, "--help"], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def commands():
    rc, text = helptext()
    assert rc == 0, text
    body = text.split("commands:", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in body.splitlines() if line.strip()]


def options_in_source(cmd):
    found = set()
    files = glob.glob(os.path.join(SRC, "src", "cli", "cmd_%s.c" % cmd.replace("-", "_")))
    if cmd == "bench":  # bench parses run's shared options (not run's own --record)
        with open(os.path.join(SRC, "src", "cli", "cmd_run.c")) as f:
            shared = f.read().split("hs__parse_run_opts", 1)[1].split("\n}\n", 1)[0]
        found |= {"--" + n for n in re.findall(r'\{"([a-z][a-z0-9-]*)",\s*\w+_argument', shared)}
    for path in files:
        with open(path) as f:
            text = f.read()
        found |= set(re.findall(r'"(--[a-z][a-z0-9-]*)', text))
        # getopt_long's table: {"name", required_argument, ...}
        found |= {"--" + n for n in re.findall(r'\{"([a-z][a-z0-9-]*)",\s*\w+_argument', text)}
    return found - {"--help"}


class Help(unittest.TestCase):
    def test_every_option_is_in_its_commands_help(self):
        cmds = commands()
        self.assertGreaterEqual(len(cmds), 10)
        for cmd in cmds:
            with self.subTest(command=cmd):
                rc, text = helptext(cmd)
                self.assertEqual(rc, 0, text)
                opts = options_in_source(cmd)
                self.assertTrue(opts or cmd in ("config", "shm", "can"), "no options found")
                missing = sorted(o for o in opts if not re.search(re.escape(o) + r"\b", text))
                self.assertEqual(missing, [], "options the command takes but its help omits")

    def test_every_command_is_in_the_docs(self):
        readme = ""
        for doc in ("README.md", os.path.join("docs", "commands.md")):
            with open(os.path.join(SRC, doc)) as f:
                readme += f.read()
        for cmd in commands():
            with self.subTest(command=cmd):
                self.assertRegex(readme, r"`hilsim %s\b" % re.escape(cmd))


if __name__ == "__main__":
    unittest.main()
