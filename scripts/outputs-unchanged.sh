#!/usr/bin/env bash
# Compares everything ridge computes without measuring (the zoo's counts and every net's layer
# table in each format, a training summary, the chips database) between a built ridge and the one
# built from another revision. A change that is meant to move no number must print nothing but
# "identical". Usage: scripts/outputs-unchanged.sh [REV (default HEAD~1)] [BUILD (default build)]
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD~1}
build=${2:-build}
new=$build/bench/ridge
[ -x "$new" ] || { echo "outputs-unchanged: no $new: run make build first" >&2; exit 2; }
work=$(mktemp -d)
trap 'git worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add -q --detach "$work/src" "$rev"
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build "$work/build" --target ridge -j "$(nproc)" >/dev/null
old=$work/build/bench/ridge
[ -x "$old" ] || old=$(find "$work/build" -name ridge -type f -perm -u+x | head -n 1)

dump() {  # $1: binary, $2: folder
    local r=$1 out=$2
    mkdir -p "$out"
    "$r" zoo --format csv > "$out/zoo.csv"
    "$r" zoo --format json --layers > "$out/zoo.json"
    "$r" zoo > "$out/zoo.txt"
    for net in $("$r" list | cut -d" " -f1); do
        "$r" summary "$net" --format csv > "$out/$net.csv"
        "$r" summary "$net" --batch 8 --dtype bf16 > "$out/$net.b8.txt"
    done
    "$r" roofline chips --format csv > "$out/chips.csv"
}
dump "$old" "$work/old"
dump "$new" "$work/new"
if diff -r "$work/old" "$work/new" > "$work/diff"; then
    echo "identical: $(ls "$work/new" | wc -l) outputs of $rev and $new"
else
    head -n 40 "$work/diff"
    echo "outputs-unchanged: outputs differ between $rev and $new" >&2
    exit 1
fi
