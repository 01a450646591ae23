#!/usr/bin/env bash
# The main job on its embedded default: a short check of every provisioned tokenizer, then the report.
# Every step writes ledgers under "$OUT/ledgers/<step>"; the report reads them all. A step that finds
# differences does not stop the job: the report is still written (that is where differences show), and the
# job exits with the first failing step's status.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${DELTA_OUT:-out}
status=0
# step CMD...: run a step; keep the first failing step's status without stopping the job
step() { local rc=0; "$@" || rc=$?; if [ "$status" -eq 0 ]; then status=$rc; fi; }

# --- checks --------------------------------------------------------------------------------------------
# the embedded default is one self-contained run: its report counts only this run's ledgers
rm -rf "$OUT/ledgers/main" "$OUT/ledgers/fuzz"
mkdir -p "$OUT/ledgers/main"
step corpora smoke --out "$OUT/ledgers/main"

# --- campaigns: a short fuzz campaign goes here (ledgers under "$OUT/ledgers/fuzz"), e.g.
#   step fuzz ... --ledger "$OUT/ledgers/fuzz"
# Run it through `step` so that a campaign that finds differences still lets the report be written.
step fuzz --tokenizer all --budget 20s --out "$OUT/ledgers/fuzz" --regressions "$OUT/fuzz-regressions"

# --- report --------------------------------------------------------------------------------------------
reports table3 --ledgers "$OUT/ledgers/main" "$OUT/ledgers/fuzz" --out "$OUT/report" --format md,html,json,csv
echo "report: $OUT/report/table3.html (also table3.md, table3.json and table3*.csv in $OUT/report)"
exit "$status"
