#!/usr/bin/env bash
# Runs every fuzz target for a fixed number of runs, one after the other (one libFuzzer process
# at a time, single job), and prints the runs and the result per target.
#
#   fuzz/run.sh [RUNS] [TARGET...]     RUNS defaults to 10000000 per target; default all targets
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). The toolchain is stable, so the nightly
# flags cargo-fuzz passes are unlocked with RUSTC_BOOTSTRAP=1. The corpus grows in
# fuzz/corpus/<target> (git-ignored), seeded from fuzz/seeds/<target>; a crash is saved in
# fuzz/artifacts/<target>/ and the full libFuzzer log of each run in fuzz/logs/<target>.log.
# Exit status: 0 when every target finished its runs, 1 otherwise.
set -u
cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1
RUNS=${1:-10000000}
shift || true
if [ $# -gt 0 ]; then
    TARGETS=("$@")
else
    mapfile -t TARGETS < <(cargo fuzz list)
fi
cargo fuzz build >/dev/null 2>logs.build || { cat logs.build; exit 1; }
rm -f logs.build
mkdir -p logs
status=0
printf '%-14s %12s %8s  %s\n' target runs seconds result
for t in "${TARGETS[@]}"; do
    mkdir -p "corpus/$t" "seeds/$t"
    start=$(date +%s)
    cargo fuzz run "$t" "corpus/$t" "seeds/$t" -- \
        -runs="$RUNS" -max_len=512 -print_final_stats=1 >"logs/$t.log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    done_runs=$(grep -oE '^Done [0-9]+ runs' "logs/$t.log" | grep -oE '[0-9]+' | tail -1)
    if [ $rc -eq 0 ] && [ -n "$done_runs" ]; then
        result="ok, no crash"
    else
        status=1
        done_runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "logs/$t.log" | grep -oE '[0-9]+$' | tail -1)
        artifact=$(grep -oE 'Test unit written to [^ ]+' "logs/$t.log" | tail -1 | sed 's/Test unit written to //')
        result="FAILED (exit $rc) ${artifact:-see logs/$t.log}"
    fi
    printf '%-14s %12s %8s  %s\n' "$t" "${done_runs:-?}" "$secs" "$result"
done
exit $status
