#!/bin/sh
# Exports Choreonoid's GR001 sample (HPI Japan's 0.74 kg hobby-servo humanoid, OpenHRP VRML97 with
# dense FreeCAD IndexedFaceSet parts) from a local git mirror of choreonoid/choreonoid into a
# cache directory, for test_world_gr001 and perf. Nothing is downloaded and nothing lands in the
# repository: without the mirror it says so and exits 0 (the test then skips).
#   HS_CHOREONOID_GIT  the mirror's git directory (default /work/.mirror/choreonoid+choreonoid/repo)
#   HS_MODEL_CACHE     where models go (default ${XDG_CACHE_HOME:-$HOME/.cache}/hilsim/models)
set -eu
git_dir=${HS_CHOREONOID_GIT:-/work/.mirror/choreonoid+choreonoid/repo}
cache=${HS_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hilsim/models}
out="$cache/GR001"
if [ -f "$out/GR001.wrl" ]; then
    exit 0
fi
if ! git --git-dir="$git_dir" rev-parse --git-dir >/dev/null 2>&1; then
    echo "export_gr001: no choreonoid mirror at $git_dir: GR001 not exported"
    exit 0
fi
# The last commit that has GR001.wrl: Choreonoid moved the model to .body + STL in 2017.
commit=$(git --git-dir="$git_dir" log --all --format=%H -n 1 -- share/model/GR001/GR001.wrl)
if [ -z "$commit" ]; then
    echo "export_gr001: $git_dir has no share/model/GR001/GR001.wrl in its history"
    exit 0
fi
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.gr001.XXXXXX")
# The model as it was before its removal (the removing commit's parent, when it is the removal).
rev="$commit"
git --git-dir="$git_dir" cat-file -e "$commit:share/model/GR001/GR001.wrl" 2>/dev/null || rev="$commit^"
git --git-dir="$git_dir" archive "$rev" share/model/GR001 | tar -x -C "$tmp"
rm -rf "$out"
mv "$tmp/share/model/GR001" "$out"
rm -rf "$tmp"
echo "export_gr001: GR001 from $(git --git-dir="$git_dir" rev-parse --short "$rev") in $out"
