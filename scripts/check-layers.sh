#!/usr/bin/env bash
# The dependency rule of DESIGN.md ("The build is the map"), run by every build (the hs_layers
# target): dependencies run one way, and a lower folder reaching up is a build error.
#
# Every source file belongs to a layer, its folder's library (a CAN protocol's folder
# drivers/can/<name>/ to can, its config section src/config/can/ to config, its binding
# src/bench/can/ to bench). Every public header (include/hilsim) belongs to
# the layer that implements it (the table below). A file may include the headers of its own
# layer and of layers ranked below it; no file includes another folder's files by a relative
# path ("../"); and drivers/ (the protocols and buses, below everything bench-side) includes no
# private header of bench, config or service either, whatever include path would find it. Include directories being PRIVATE already keeps a folder's own headers private;
# this catches what include/ (shared by all) cannot: the public header of a layer above.
#
# Usage: scripts/check-layers.sh [SOURCE_DIR]. Prints each violation as file:line and exits 1.
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

# Ranks: lower may not include higher. Equal ranks may include each other (scenario, ctl and
# record share types both ways). Folders not listed (new ones) are not checked until they are.
declare -A rank=(
  [common]=0
  [model]=1 [rt]=1 [can]=1
  [world]=2 [report]=2 [shm]=2 [client]=2
  [config]=3
  [plant]=4
  [bench]=5
  [scenario]=6 [ctl]=6 [record]=6
  [service]=7
  [cli]=8 [view]=8 [campaign]=8
)

# include/hilsim header -> layer. Headers not listed are not checked.
declare -A owner=()
own() { local layer=$1; shift; for h in "$@"; do owner[$h]=$layer; done; }
own common closest_name.h diag.h file_open.h log.h pose.h sensor_kinds.h xml_escape.h
own model model.h
own world world.h
own config config.h can_protocols.h
own plant plant.h actuator.h delay_line.h encoder.h ft_sensor.h imu.h noise.h
own can can.h can_dbc.h can_fault.h can_mit.h can_node.h can_odrive.h can_replier.h
own shm shm_abi.h shm_server.h
own client client.h
own report report.h report_health.h report_json.h
own bench bench.h io_can.h io_shm.h can_cia402.h
own scenario scenario.h scenario_live.h
own ctl ctl.h
own record record.h
own view view.h
own campaign campaign.h
for h in include/hilsim/rt/*.h; do owner[rt/${h##*/}]=rt; done
for h in include/hilsim/service/*.h; do [ -e "$h" ] && owner[service/${h##*/}]=service; done

# Deliberate exceptions, each with its reason: file -> the header it may include.
declare -A allow=(
  # hs_world_params_default is in hs_common so the config fills physics defaults without ODE;
  # it fills world.h's plain struct (no world code is called).
  [src/common/world_params_default.c]=world.h
)

layer_of() {
  local f=$1
  case $f in
    drivers/can/*) echo can ;;
    drivers/shm/*) echo shm ;;
    rt/*) echo rt ;;
    src/*) f=${f#src/}; echo "${f%%/*}" ;;
    *) echo "" ;;
  esac
}

# The private headers of the layers drivers/ sits below (by file name, as an include names them).
declare -A above_private=()
while IFS= read -r h; do
  above_private[${h##*/}]=${h#src/}
done < <(find src/bench src/config src/service -name '*.h' 2>/dev/null)

bad=0
while IFS= read -r line; do
  file=${line%%:*}
  rest=${line#*:}
  lineno=${rest%%:*}
  inc=${rest#*:}
  mine=$(layer_of "$file")
  [ -n "$mine" ] && [ -n "${rank[$mine]:-}" ] || continue
  if [[ $inc =~ \#include\ \"\.\./ ]]; then
    echo "$file:$lineno: reaches into another folder by a relative path: ${inc}" >&2
    bad=1
    continue
  fi
  if [[ $file == drivers/* && $inc =~ \#include\ \"([^\"]+)\" ]]; then
    name=${BASH_REMATCH[1]}
    if [ ! -e "$(dirname "$file")/$name" ] && [ ! -e "drivers/can/$name" ] &&
      [ -n "${above_private[${name##*/}]:-}" ]; then
      echo "$file:$lineno: drivers/ includes $name, a private header of" \
        "src/${above_private[${name##*/}]%%/*} (scripts/check-layers.sh)" >&2
      bad=1
      continue
    fi
  fi
  [[ $inc =~ \#include\ \"hilsim/([^\"]+)\" ]] || continue
  h=${BASH_REMATCH[1]}
  theirs=${owner[$h]:-}
  [ -n "$theirs" ] && [ "$theirs" != "$mine" ] || continue
  [ "${allow[$file]:-}" = "$h" ] && continue
  if [ "${rank[$theirs]}" -gt "${rank[$mine]}" ]; then
    echo "$file:$lineno: $mine (rank ${rank[$mine]}) includes hilsim/$h of $theirs" \
      "(rank ${rank[$theirs]}), a layer above it (scripts/check-layers.sh)" >&2
    bad=1
  fi
done < <(grep -rn --include='*.c' --include='*.h' '^#include "' src rt drivers)
exit $bad
