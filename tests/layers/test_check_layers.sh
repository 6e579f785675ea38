#!/usr/bin/env bash
# scripts/check-layers.sh fails the build when drivers/ reaches up into the bench, the config or
# the service, by their public headers or their private ones: run on a copy of the tree, clean
# and then with one such include planted at a time.
# Usage: test_check_layers.sh SOURCE_DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/src" "$src/rt" "$src/drivers" "$src/include" "$tmp/"
check() { "$src/scripts/check-layers.sh" "$tmp" 2>"$tmp/err"; }

check || { cat "$tmp/err"; echo "FAIL: the tree as it is breaks the rule"; exit 1; }

victim=drivers/can/mit/mit_node.c
cp "$tmp/$victim" "$tmp/victim.orig"
for inc in hilsim/bench.h hilsim/config.h hilsim/io_can.h hilsim/service/exit_codes.h \
  cfg_schema.h cfg_can_proto.h bench_internal.h can_protocol.h mit_config.h; do
  cp "$tmp/victim.orig" "$tmp/$victim"
  echo "#include \"$inc\"" >>"$tmp/$victim"
  if check; then
    echo "FAIL: $victim including $inc passed the check"
    exit 1
  fi
  grep -q "^$victim:[0-9]*: " "$tmp/err" || { cat "$tmp/err"; echo "FAIL: $inc: no file:line"; exit 1; }
done
# the driver's own headers and its neighbours' stay allowed
cp "$tmp/victim.orig" "$tmp/$victim"
echo '#include "mit_defaults.h"' >>"$tmp/$victim"
echo '#include "cia402/cia402.h"' >>"$tmp/$victim"
check || { cat "$tmp/err"; echo "FAIL: a driver's own headers were refused"; exit 1; }
echo "check-layers: drivers/ reaching up is refused, its own headers are not"
