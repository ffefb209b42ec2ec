#!/usr/bin/env bash
# Mutation check: each mutant of scripts/mutants.txt changes one line of the cost formulas, the
# reference or hand kernels, the roofline math or the report writer; the tests it names must fail
# on it.
#
#   scripts/mutate.sh            every mutant          (make mutate)
#   MUTANTS=subset scripts/mutate.sh   those marked "subset: yes" (a few minutes; CI, in place)
#   MUTANTS='conv2d' scripts/mutate.sh  those whose name contains the text
#
# By default it works on a copy of the tree in $MUTATE_DIR (default build-mutate/: src/ and build/),
# not on the checkout itself: the copy is refreshed file by file (unchanged files keep their time stamps,
# so the build there stays incremental; a restored line is touched so it is rebuilt) and built once
# without CUDA. Every mutant is applied to the copy, its tests' targets rebuilt, the tests run
# (ctest -R), and the line put back, also on Ctrl-C. Before any mutant, the same tests must pass
# unmutated. A mutant whose tests still pass has survived; a mutant that does not build, or whose
# line is not found exactly once, is an error in the list. Prints a table (mutant | area | tests
# run | killed/survived) and the time taken, and exits 1 when a mutant survived or the list has an
# error.
#
#   MUTATE_BUILD=build scripts/mutate.sh   the mutants applied to the checkout itself and built in
#                                          its existing build folder (for a throwaway checkout: CI)
#   MUTATE_TESTED=1 (with MUTATE_BUILD)    that build's tests have just passed: skip the unmutated run
#
# CI's checkout is thrown away and `make test` has just built it, so there the copy's own build
# (4.3 of the mutation check's 5.5 minutes on a 2-core Zen 3) is skipped: each mutant rebuilds
# only its file's objects and what links them. A line a kill left mutated is put back on the next
# run, in place as in the copy, after the build the kill orphaned is stopped (below).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LIST=${MUTANT_LIST:-scripts/mutants.txt}
SELECT=${MUTANTS:-all}
JOBS=${JOBS:-$(nproc)}

die() { echo "mutate: $*" >&2; exit 2; }
[ -f "$LIST" ] || die "no mutant list $LIST"
command -v git > /dev/null || die "needs git (to list the tree's files)"
if [ -n "${MUTATE_BUILD:-}" ]; then
    [ -f "$MUTATE_BUILD/CMakeCache.txt" ] || die "MUTATE_BUILD=$MUTATE_BUILD is not a configured build folder (run make first)"
    BUILD=$(cd "$MUTATE_BUILD" && pwd)
    home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt")
    [ "$(cd "$home" 2> /dev/null && pwd -P)" = "$(pwd -P)" ] || die "MUTATE_BUILD=$MUTATE_BUILD builds $home, not this checkout"
    SRC=$ROOT
    LOG=$BUILD/mutate.log
else
    WORK=${MUTATE_DIR:-build-mutate}
    mkdir -p "$WORK/src" "$WORK/build"
    WORK=$(cd "$WORK" && pwd)
    SRC=$WORK/src
    BUILD=$WORK/build
    LOG=$WORK/mutate.log
fi
: > "$LOG"

# --- the list -------------------------------------------------------------------------------
# Blocks of "key: value" lines separated by blank lines; keys name, file, from, to, tests, subset.
# A comment "# --- AREA (...)" names the area of the blocks after it.
names=() files=() froms=() tos=() tests=() subsets=() areas=() area=-
add_block() {
    [ -n "${b_name:-}" ] || return 0
    [ -n "${b_file:-}" ] && [ -n "${b_from:-}" ] && [ -n "${b_to+x}" ] && [ -n "${b_tests:-}" ] ||
        die "$LIST: mutant '$b_name' lacks a file, from, to or tests line"
    names+=("$b_name"); files+=("$b_file"); froms+=("$b_from"); tos+=("$b_to"); tests+=("$b_tests")
    subsets+=("${b_subset:-no}"); areas+=("$area")
}
b_name= b_file= b_from= b_tests= b_subset=; unset b_to
while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
        '# --- '*) area=${line#'# --- '}; area=${area%% (*}; area=${area#the }; continue ;;
        '#'*) continue ;;
        '') add_block; b_name= b_file= b_from= b_tests= b_subset=; unset b_to; continue ;;
    esac
    key=${line%%:*} value=${line#*: }
    case "$key" in
        name) b_name=$value ;; file) b_file=$value ;; from) b_from=$value ;; to) b_to=$value ;;
        tests) b_tests=$value ;; subset) b_subset=$value ;;
        *) die "$LIST: unknown key '$key' in: $line" ;;
    esac
done < "$LIST"
add_block

# --- the copy -------------------------------------------------------------------------------
# What a killed run left behind is undone first. Its build ran in a session of its own, whose id
# it kept in $BUILD/mutate.build-pgid: after a kill -9 of this script that build lives on (make,
# the compilers, a link), and may write a mutated object after the line is put back, or race the
# next build, so the session is stopped first and waited for. The mutated file is named in
# $BUILD/mutate.current (whatever list that run had) with the checksum of its mutated content; its
# original sits beside it as FILE.mutate-orig, a name of this script's own (git mergetool and
# patch -b leave FILE.orig). It is put back with a new time stamp, and every object whose
# dependency file names it (a header's too) or that bears its name is deleted. A file that changed
# since (someone edited it) is not overwritten: the run stops and says where the original is.
PGID_FILE=$BUILD/mutate.build-pgid
CURRENT_FILE=$BUILD/mutate.current
command -v setsid > /dev/null || die "needs setsid (util-linux) to run each build in a session of its own"
# The session of the process whose stat file is $1 (from /proc: no procps needed).
session_of() {
    local line fields
    read -r line 2> /dev/null < "$1" || return 1
    line=${line##*) }  # after the command's name, which may hold blanks
    read -r -a fields <<< "$line"  # state, ppid, pgrp, session, ...
    echo "${fields[3]:-}"
}
# The processes of session $1, as /proc/PID folders.
session_members() {
    local stat
    for stat in /proc/[0-9]*/stat; do
        [ "$(session_of "$stat")" = "$1" ] && echo "${stat%/stat}"
    done
}
# Sends signal $2 to session $1's process group and waits up to 10 s for its processes to end.
signal_session() {
    kill -"$2" -- "-$1" 2> /dev/null
    for _ in $(seq 50); do [ -n "$(session_members "$1")" ] || break; sleep 0.2; done
}
stop_build() {
    [ -f "$PGID_FILE" ] || return 0
    local sid d builds=
    sid=$(cat "$PGID_FILE")
    # Only a session one of whose processes still builds this tree, and never this script's own:
    # the id may have been reused since.
    if [[ "$sid" =~ ^[0-9]+$ ]] && [ "$sid" -gt 1 ] && [ "$sid" != "$(session_of /proc/$$/stat)" ]; then
        for d in $(session_members "$sid"); do
            tr '\0' ' ' 2> /dev/null < "$d/cmdline" | grep -qF -e "$BUILD" -e "$SRC" && builds=1
        done
    fi
    if [ -n "$builds" ]; then
        signal_session "$sid" TERM
        signal_session "$sid" KILL
    fi
    rm -f "$PGID_FILE"
}
# Puts FILE.mutate-orig back as FILE: touched first, so the moved file is newer than every object
# built from the mutant (a kill between the move and a touch after it would leave them current).
put_back() {
    touch "$SRC/$1.mutate-orig" && mv -f "$SRC/$1.mutate-orig" "$SRC/$1"
}
# Deletes the objects built from FILE: those whose dependency file names it, and those of its name.
delete_objects() {
    find "$BUILD" -path '*/CMakeFiles/*' -name '*.o.d' -type f -exec grep -lF "$SRC/$1" {} + 2> /dev/null |
        while IFS= read -r d; do rm -f "${d%.d}"; done
    find "$BUILD" -path '*/CMakeFiles/*' -name "$(basename "$1").o" -type f -delete
}
stop_build
recover() {
    local f=$1 sum=${2:-}
    [ -f "$SRC/$f.mutate-orig" ] || return 0
    if [ -n "$sum" ] && [ -f "$SRC/$f" ] && [ "$(cksum < "$SRC/$f")" != "$sum" ]; then
        die "$f changed since a killed run mutated it; its original is $f.mutate-orig: compare, put it back by hand, then rerun"
    fi
    put_back "$f"
    delete_objects "$f"
    recovered=1
    echo "mutate: put back $f, which a killed run left mutated"
}
recovered=
if [ -f "$CURRENT_FILE" ]; then
    { IFS= read -r f; IFS= read -r sum; } < "$CURRENT_FILE"
    recover "$f" "${sum:-}"
    rm -f "$CURRENT_FILE"
fi
# A backup beside a listed file without a state file: a run of an earlier version of this script,
# or a build folder made anew since. Its checksum is unknown, so only the file's own original counts.
while IFS= read -r f; do recover "$f"; done < <(printf '%s\n' "${files[@]}" | sort -u)
if [ -z "${MUTATE_BUILD:-}" ]; then
    git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do
        [ -f "$f" ] || continue
        if ! cmp -s "$f" "$SRC/$f"; then
            mkdir -p "$SRC/$(dirname "$f")"
            cp "$f" "$SRC/$f"
        fi
    done
fi

chosen=()
for i in "${!names[@]}"; do
    case "$SELECT" in
        all) chosen+=("$i") ;;
        subset) [ "${subsets[$i]}" = yes ] && chosen+=("$i") ;;
        *) [[ "${names[$i]}" == *"$SELECT"* ]] && chosen+=("$i") ;;
    esac
done
[ ${#chosen[@]} -gt 0 ] || die "no mutant matches MUTANTS=$SELECT"

current=
restore() {
    [ -n "$current" ] && [ -f "$SRC/$current.mutate-orig" ] && put_back "$current"
    current=
    rm -f "$CURRENT_FILE"
}
# The build runs in a session of its own (build_targets), which Ctrl-C does not reach: it is
# stopped here before the line is put back.
interrupted() {
    stop_build
    restore
    echo "mutate: interrupted; the mutated line is put back" >&2
    exit "$1"
}
trap 'interrupted 130' INT
trap 'interrupted 143' TERM
trap 'stop_build; restore' EXIT

# --- build ----------------------------------------------------------------------------------
# Without CUDA: no mutant touches the GPU code, and nvcc would double the first build. Configured
# every time (seconds): building a target by name does not re-read a CMakeLists.txt that gained it.
# In place, the build folder keeps the configuration `make` gave it; only re-read.
if [ -n "${MUTATE_BUILD:-}" ]; then
    cmake "$BUILD" >> "$LOG" 2>&1 || die "configure failed, see $LOG"
else
    cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER=NOTFOUND >> "$LOG" 2>&1 ||
        die "configure failed, see $LOG"
fi
all_tests=$(for i in "${chosen[@]}"; do echo "${tests[$i]}"; done | tr ' ' '\n' | sort -u | tr '\n' ' ')
# In a session of its own, its id kept where the next run finds it (the copy above). A background
# job of this non-interactive shell is never a process group leader, so setsid makes the session
# without forking: the job's pid is the session's and the group's id, written before the wait.
build_targets() {
    setsid cmake --build "$BUILD" -j "$JOBS" --target "$@" >> "$LOG" 2>&1 &
    echo $! > "$PGID_FILE"
    local status
    wait $! && status=0 || status=$?
    rm -f "$PGID_FILE"
    return $status
}
# The build target of each test: test_onednn's runs under a capped oneDNN ISA (test_onednn_avx2,
# ...) and without its zoo cases (test_onednn_ops), and a binary's "[may skip]" cases (NAME_may_skip)
# are ctest names for a binary of another name (tests/CMakeLists.txt).
targets_of() {
    for t in "$@"; do
        case $t in
            test_onednn_*) echo test_onednn ;;
            *_may_skip) echo "${t%_may_skip}" ;;
            *) echo "$t" ;;
        esac
    done | sort -u | tr '\n' ' '
}
regex_of() { echo "^($(echo "$*" | tr -s ' ' '|' | sed 's/|$//'))\$"; }
run_tests() { (cd "$BUILD" && ctest -j "$JOBS" -R "$(regex_of "$@")" --timeout 900 >> "$LOG" 2>&1); }

echo "building the tests' targets in $BUILD (the first time takes minutes; log: $LOG)"
build_targets $(targets_of $all_tests) || die "the unmutated tree does not build, see $LOG"
# CI runs this right after `make test` passed every test on this very build (MUTATE_TESTED=1 with
# MUTATE_BUILD): running the mutants' tests unmutated again would only repeat that. Not after a
# line a killed run left mutated was put back: those tests may have passed on the mutant.
if [ -n "${MUTATE_TESTED:-}" ] && [ -n "${MUTATE_BUILD:-}" ] && [ -z "$recovered" ]; then
    echo "the tests passed unmutated in this build just before (MUTATE_TESTED)"
else
    echo "running the tests unmutated"
    run_tests $all_tests || die "the tests fail without any mutant, see $LOG"
fi

# --- mutants --------------------------------------------------------------------------------

# Replaces the one line equal to FROM (leading and trailing blanks aside) by TO, keeping its indent.
# Runs in this shell (not a subshell), so that `current` tells restore what to put back.
apply() {
    local file=$1 from=$2 to=$3 n path=$SRC/$1
    n=$(FROM="$from" awk '{ l = $0; sub(/^[ \t]+/, "", l); sub(/[ \t]+$/, "", l); if (l == ENVIRON["FROM"]) n++ }
                          END { print n + 0 }' "$path")
    [ "$n" = 1 ] || { why="line found $n times"; return 1; }
    [ -e "$path.mutate-orig" ] && { why="$file.mutate-orig is there already"; return 1; }
    echo "$file" > "$CURRENT_FILE"
    cp -p "$path" "$path.mutate-orig" || { why="cannot copy it"; rm -f "$path.mutate-orig"; return 1; }
    current=$file
    FROM="$from" TO="$to" awk '{ l = $0; sub(/^[ \t]+/, "", l); sub(/[ \t]+$/, "", l)
        if (l == ENVIRON["FROM"]) { match($0, /^[ \t]*/); print substr($0, 1, RLENGTH) ENVIRON["TO"] } else print }' \
        "$path.mutate-orig" > "$path"
    printf '%s\n%s\n' "$file" "$(cksum < "$path")" > "$CURRENT_FILE"
}

rows=() survived=0 errors=0 mutants_from=$SECONDS
for i in "${chosen[@]}"; do
    name=${names[$i]} t=${tests[$i]}
    printf '%s ... ' "$name"
    echo "=== $name" >> "$LOG"
    why=
    if ! apply "${files[$i]}" "${froms[$i]}" "${tos[$i]}"; then
        result="ERROR: ${files[$i]}: $why"; errors=$((errors + 1))
    elif ! build_targets $(targets_of $t); then
        result="ERROR: does not build"; errors=$((errors + 1))
    elif run_tests $t; then
        result="SURVIVED"; survived=$((survived + 1))
    else
        result="killed"
    fi
    restore
    echo "$result"
    rows+=("| $name | ${areas[$i]} | $t | $result |")
done
mutants_s=$((SECONDS - mutants_from))
# The targets once more from the restored lines: the last mutant's objects, and what links them
# (the ridge binary among them), were built from its line and would stay so until the next build.
# With MUTATE_BUILD=build that is the checkout's own build: CI's clone at ede0ad3 kept a ridge
# whose report/csv.cpp wrote runs.csv's median as its minimum, stamped "+dirty".
echo "=== rebuilding from the restored lines" >> "$LOG"
build_targets $(targets_of $all_tests) || die "the restored tree does not build, see $LOG"

echo
echo "| mutant | area | tests run | result |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "${#chosen[@]} mutants: $((${#chosen[@]} - survived - errors)) killed, $survived survived, $errors errors" \
     "in $((SECONDS / 60)) min $((SECONDS % 60)) s, $((mutants_s / 60)) min $((mutants_s % 60)) s of it for the mutants (log: $LOG)"
[ $survived -eq 0 ] && [ $errors -eq 0 ]
