#!/usr/bin/env bash
# The main job on its embedded default: the whole Table 3 from one command, on every provisioned tokenizer.
#   level 1  the built-in samples (corpora smoke) and the small corpus, whole encodes
#   level 2  the small corpus chunked; the ci seam battery and the kill matrix of every control
#   level 3  the small corpus replayed as sessions; the chat transcripts; fuzz repair
#   proofs   the z3 proofs of the transition set and of coverage, the bounded enumeration, the control proofs
#   exhaustive  the per-code-point checks, sampled: every 16th scalar value (DELTA_EXHAUSTIVE_STRIDE; --full: all)
#   campaigns   a fuzz campaign of its own per tokenizer (cut and repair), 8 s each (--full: 120 s)
# Every step writes ledgers under "$OUT/ledgers/main/<step>"; the report reads them all and prints the verdict
# line. A step that finds differences does not stop the job: the report is written whatever happens, and the job
# exits with the first failing step's status, else the verdict's (0 only on PASS).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${DELTA_OUT:-out}
L="$OUT/ledgers/main"
FULL=0
for arg in "$@"; do
  case "$arg" in
    --full) FULL=1 ;;
    *) echo "usage: ./run main [--full]" >&2; exit 2 ;;
  esac
done
if [ "$FULL" = 1 ]; then BUDGET=120s; STRIDE=1; else BUDGET=8s; STRIDE=16; fi
status=0
# step CMD...: run a step; keep the first failing step's status without stopping the job (Ctrl-C stops it: 130)
step() {
  local rc=0
  echo "[main] $*" >&2
  "$@" || rc=$?
  if [ "$rc" -eq 130 ]; then interrupted=1; fi
  if [ "$status" -eq 0 ]; then status=$rc; fi
}
interrupted=0
trap 'interrupted=1' INT

# the embedded default is one self-contained run: its report counts only this run's ledgers
rm -rf "$L" "$OUT/ledgers/fuzz"
mkdir -p "$L"

step corpora smoke --out "$L/smoke"
names=$(python - <<'PY'
from frozen.errors import SuiteError
from frozen.loader import load_tokenizer
from frozen.registry import rows
from spec.admission import admission_of
for row in rows():
    try:
        tok = load_tokenizer(row.name)
    except SuiteError:
        continue
    if admission_of(tok).admitted:
        print(row.name)
PY
)
for name in $names; do
  [ "$interrupted" = 1 ] && break
  step fuzz --tokenizer "$name" --budget "$BUDGET" --out "$L/fuzz/$name" --regressions "$OUT/fuzz-regressions"
done
[ "$interrupted" = 1 ] || step corpora compare --profile small --tokenizer all --workers 2 --out "$L/corpus"
# admission, the spec's properties and knobs, the battery, kill matrix, proofs, sampled exhaustive tables and chat
# replays: the gate's own checks, which write the records the obligations table reads
[ "$interrupted" = 1 ] || step env DELTA_LEDGER_DIR="$L/checks" DELTA_EXHAUSTIVE_STRIDE="$STRIDE" \
  python -m pytest -q -p no:cacheprovider -n 2 -m "not slow" \
  properties/test_admission.py properties/test_reference.py properties/test_cut_spec.py \
  properties/test_cut_properties.py properties/test_cut_knobs.py properties/test_repair_spec.py \
  properties/test_repair_properties.py properties/test_repair_knobs.py properties/test_store_stateful.py \
  properties/test_battery.py properties/test_kill_matrix.py properties/test_control_proofs.py \
  properties/test_proofs.py properties/test_coverage.py properties/test_bounded.py \
  properties/test_cut_exhaustive.py properties/test_chat_replay.py properties/test_obligations.py

# --- report: always written, from whatever ledgers exist -----------------------------------------------------
report=0
reports table3 --ledgers "$L" --out "$OUT/report" --format md,html,json,csv --require-pass || report=$?
echo "report: $OUT/report/table3.html (also table3.md, table3.json and table3*.csv in $OUT/report)"
if [ "$interrupted" = 1 ]; then echo "interrupted: the report covers the steps that finished" >&2; exit 130; fi
if [ "$status" -ne 0 ]; then exit "$status"; fi
exit "$report"
