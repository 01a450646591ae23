#!/usr/bin/env bash
# The main job on its embedded default: the whole Table 3 from one command, on every provisioned tokenizer.
#   level 1  the built-in samples (corpora smoke) and the small corpus, whole encodes
#   level 2  the small corpus chunked; the ci seam battery and the kill matrix of every control
#   level 3  the small corpus replayed as sessions; the chat transcripts; fuzz repair
#   proofs   the z3 proofs of the transition set and of coverage, the bounded enumeration, the control proofs
#   exhaustive  the per-code-point checks, sampled: every 16th scalar value (DELTA_EXHAUSTIVE_STRIDE; --full: all,
#               with DELTA_EXHAUSTIVE=full: every code point of the unassigned planes too)
#   campaigns   a fuzz campaign of its own per tokenizer (cut and repair), 8 s each (--full: 120 s)
# Every step writes ledgers under "$OUT/ledgers/main/<step>", and the job records each step's exit status in
# "$OUT/ledgers/main/job/steps.jsonl" (python -m delta_suite.ledger.job): the report reads them all, states any step that failed,
# was interrupted or never ran, and prints the verdict line. Before any checking step the job lists the campaign's
# tokenizers (step "list tokenizers") and writes its plan (every step it means to run): the report names a planned
# step without a row as a failure, and a row that cannot be written fails the job (3). No step stops the job: the
# report is written whatever happens (even when nothing is provisioned or a tokenizer is corrupt), and the job exits with the first failing
# step's status (1 difference, 2 input, 3 environment, 130 interrupted), else the verdict's (0 only on PASS).
# --tokenizer [NAME=]PATH (repeatable): also run the whole table on a user's tokenizer.json or snapshot folder (admission,
# smoke, a campaign, the corpus, cut-gain and the kill matrix, each its own step; for a whole-word file also the
# merge-locality proofs and its premises); --only: on those files alone,
# the eleven left out (their steps recorded as not selected).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${DELTA_OUT:-out}
L="$OUT/ledgers/main"
FULL=0
ONLY=0
USER_FILES=()
usage() { echo "usage: ./run main [--full] [--tokenizer [NAME=]PATH]... [--only]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --full) FULL=1 ;;
    --only|--no-registry) ONLY=1 ;;
    --tokenizer) [ $# -ge 2 ] || usage; USER_FILES+=("$2"); shift ;;
    --tokenizer=*) USER_FILES+=("${1#--tokenizer=}") ;;
    *) usage ;;
  esac
  shift
done
if [ "$ONLY" = 1 ] && [ ${#USER_FILES[@]} -eq 0 ]; then echo "--only needs at least one --tokenizer PATH" >&2; exit 2; fi
EXHAUSTIVE=${DELTA_EXHAUSTIVE:-}
if [ "$FULL" = 1 ]; then BUDGET=120s; STRIDE=1; EXHAUSTIVE=full; else BUDGET=${DELTA_MAIN_BUDGET:-8s}; STRIDE=16; fi
# DELTA_MAIN_STEPS (default all): a comma-separated subset of smoke,fuzz,corpus,checks to run; the others are
# recorded as not selected, so the report says what this job left out
STEPS=",${DELTA_MAIN_STEPS:-smoke,fuzz,corpus,checks},"
for s in ${STEPS//,/ }; do
  case "$s" in smoke|fuzz|corpus|checks) ;; *) echo "DELTA_MAIN_STEPS: unknown step $s (smoke,fuzz,corpus,checks)" >&2
    exit 2 ;; esac
done
# DELTA_MAIN_PARSE_ONLY=1: stop here, once the arguments and DELTA_MAIN_STEPS are accepted (exit 0; 2 as above): how
# the docs test checks the documented `./run main` lines without running the job
if [ "${DELTA_MAIN_PARSE_ONLY:-0}" = 1 ]; then exit 0; fi
selected() { [[ "$STEPS" == *",$1,"* ]]; }
# registry STEP: a step of the eleven, run unless --only (then recorded as not selected, like DELTA_MAIN_STEPS)
registry() { [ "$ONLY" = 0 ] && selected "$1"; }
status=0
# step NAME COMMAND...: run a step, record its status, keep the first failing status without stopping the job
step() {
  local name=$1 rc=0 t0 t1; shift
  echo "[main] $name: $*" >&2
  t0=$(date +%s%3N)
  "$@" || rc=$?
  t1=$(date +%s%3N)
  # interrupted during this step (the trap ran, or the step says so): recorded as 130 whatever the step returned
  # (pytest reports its own interruption as 2)
  if [ "$rc" -eq 130 ] || [ "$interrupted" = 1 ]; then interrupted=1; rc=130; fi
  record "$name" "$rc" "$((t1 - t0))e-3" "$@"
  last=$rc
  if [ "$status" -eq 0 ]; then status=$rc; fi
}
# record NAME STATUS SECONDS COMMAND...: the job's own ledger row of one step (or -1: not run)
record() {
  local name=$1 rc=$2 secs=$3; shift 3
  python -m delta_suite.ledger.job --ledger "$L/job/steps.jsonl" --step "$name" --status "$rc" ${secs:+--seconds "$secs"} \
    -- "$@" || lost "$name"
}
# lost NAME: a job row that could not be written; the job exits 3 (unless a step failed first), and the report names
# the planned step that has no row
lost() { echo "[main] error: the job's row of $1 could not be written ($L/job/steps.jsonl)" >&2; rows_lost=1; }
rows_lost=0
# skip NAME COMMAND...: a step not run because the job was interrupted before it
skip() { local name=$1; shift; echo "[main] $name: not run (interrupted)" >&2; record "$name" -1 "" "$@"; }
# unselected NAME: a step left out by DELTA_MAIN_STEPS
unselected() { echo "[main] $1: not selected ($([ "$ONLY" = 1 ] && echo "--only" || echo DELTA_MAIN_STEPS))" >&2
  record "$1" -2 ""; }
# plan STEP...: the job's plan, written before any checking step runs
plan() { echo "[main] plan: $*" >&2; python -m delta_suite.ledger.job --ledger "$L/job/steps.jsonl" --plan "$@" || lost plan; }
interrupted=0
last=0
trap 'interrupted=1' INT TERM

# the embedded default is one self-contained run: its report counts only this run's ledgers
rm -rf "$L" "$OUT/ledgers/fuzz"
mkdir -p "$L"

# the user's files (--tokenizer [NAME=]PATH): NAME=PATH names the file in records and reports (default: its
# folder's name, or its stem); each starts with its admission step, planned with the others
USER_PATHS=(); USER_NAMES=(); user_plan=()
for arg in ${USER_FILES[@]+"${USER_FILES[@]}"}; do
  if [[ "$arg" == *=* && "${arg%%=*}" != */* && ! -e "$arg" ]]; then USER_PATHS+=("${arg#*=}"); USER_NAMES+=("${arg%%=*}")
  else USER_PATHS+=("$arg"); USER_NAMES+=(""); fi
  user_plan+=("admission ${USER_PATHS[-1]}")
done

# the campaign's tokenizers: every installed row that is admitted, and every installed row that cannot be loaded
# (its campaign records it as not loadable, with the remedy, and exits 2; the others run). The listing is a step:
# if it fails, that step's row says so and no fuzz step is planned (never an empty loop that reads as clean)
names=""
if registry fuzz; then
  step "list tokenizers" python -m delta_suite.fuzz.campaign_tokenizers --out "$L/job/tokenizers.txt"
  if [ -f "$L/job/tokenizers.txt" ]; then names=$(cat "$L/job/tokenizers.txt"); fi
  fuzz_steps=()
  for name in $names; do fuzz_steps+=("fuzz $name"); done
  plan "list tokenizers" smoke ${fuzz_steps[@]+"${fuzz_steps[@]}"} corpus cut-gain ${user_plan[@]+"${user_plan[@]}"} \
    checks
else plan smoke fuzz corpus cut-gain ${user_plan[@]+"${user_plan[@]}"} checks; fi

if registry smoke; then step smoke corpora smoke --out "$L/smoke"; else unselected smoke; fi
registry fuzz || unselected fuzz
for name in $names; do
  if [ "$interrupted" = 1 ]; then skip "fuzz $name" fuzz --tokenizer "$name"; continue; fi
  step "fuzz $name" fuzz --tokenizer "$name" --budget "$BUDGET" --out "$L/fuzz/$name" --regressions "$OUT/fuzz-regressions"
done
if ! registry corpus; then unselected corpus; unselected cut-gain
elif [ "$interrupted" = 1 ]; then skip corpus corpora compare --profile small; skip cut-gain corpora cut-gain; else
  step corpus corpora compare --profile small --tokenizer all --workers 2 --out "$L/corpus"
  # the cuts each pattern's proved pairs add over the floor, on the same corpus, every gained cut checked (up to
  # 2,000 per tokenizer) on the reference
  step cut-gain corpora cut-gain --profile small --tokenizer all --max-characters 1000000 --verify 2000 \
    --out "$L/cut-gain"; fi
ADMITTED=()
# ustep NAME COMMAND...: a user file's step, or its "not run" row once the job was interrupted
ustep() { if [ "$interrupted" = 1 ]; then skip "$@"; else step "$@"; fi; }
# --- the user's files: each its own tokenizer (named after its folder or file, its digest in every record) -------
# admission first: a refused file's other steps are not run (its refusal, with the stage and the reason, is the
# admission step's output and status 2)
for i in "${!USER_PATHS[@]}"; do
  p=${USER_PATHS[$i]}; u="$L/user-$i"; named=()
  if [ -n "${USER_NAMES[$i]}" ]; then named=(--name "${USER_NAMES[$i]}"); fi
  if [ "$interrupted" = 1 ]; then skip "admission $p" python -m delta_suite.spec.admission_cli "$p"; continue; fi
  step "admission $p" python -m delta_suite.spec.admission_cli "$p" "${named[@]}"
  if [ "$last" -ne 0 ] || [ "$interrupted" = 1 ]; then continue; fi
  ADMITTED+=("${USER_FILES[$i]}")
  file_steps=()  # an admitted file's own steps join the plan
  if selected smoke; then file_steps+=("smoke $p"); fi
  if selected fuzz; then file_steps+=("fuzz $p"); fi
  if selected corpus; then file_steps+=("corpus $p" "cut-gain $p"); fi
  # a family admission derived by proof gets the per-code-point checks of its own (below)
  derived=0
  if python -m delta_suite.spec.admission_cli "$p" "${named[@]}" 2>/dev/null | grep -q "split family derived:"; then derived=1; fi
  # a whole-word file's cut rests on the merge-locality lemma, proved for every merge table: its checks (the gate's,
  # recorded with no tokenizer) and the file's own premises (admission.whole_word) are a step of its own, so a run
  # on that file alone holds every record its whole-word obligations read
  whole_word=0
  if python -m delta_suite.spec.admission_cli "$p" "${named[@]}" 2>/dev/null | grep -q "whole-word family"; then whole_word=1; fi
  if selected checks; then file_steps+=("kill-matrix $p"); fi
  if selected checks && [ "$derived" = 1 ]; then file_steps+=("per-code-point $p"); fi
  if selected checks && [ "$whole_word" = 1 ]; then file_steps+=("merge-locality $p"); fi
  # a piece-local file's separators rest on its own stages: their per-code-point checks and its premises are a step
  piece_local=0
  if python -m delta_suite.spec.admission_cli "$p" "${named[@]}" 2>/dev/null | grep -q "piece-local family"; then piece_local=1; fi
  if selected checks && [ "$piece_local" = 1 ]; then file_steps+=("separators $p"); fi
  if [ ${#file_steps[@]} -gt 0 ]; then plan "${file_steps[@]}"; fi
  if selected smoke; then ustep "smoke $p" corpora smoke --tokenizer "$p" "${named[@]}" --out "$u/smoke"; fi
  if selected fuzz; then ustep "fuzz $p" fuzz --tokenizer "$p" "${named[@]}" --budget "$BUDGET" --out "$u/fuzz"; fi
  if selected corpus; then
    ustep "corpus $p" corpora compare --profile small --tokenizer "$p" "${named[@]}" --workers 2 --out "$u/corpus"
    ustep "cut-gain $p" corpora cut-gain --profile small --tokenizer "$p" "${named[@]}" --max-characters 1000000 \
      --verify 2000 --out "$u/cut-gain"
  fi
  if selected checks; then ustep "kill-matrix $p" python -m delta_suite.controls.kill_matrix --tokenizer "$p" "${named[@]}" \
    --progress-every 100000 --ledger "$u/kill-matrix/kill-matrix.jsonl" >/dev/null
  fi
  if selected checks && [ "$whole_word" = 1 ]; then ustep "merge-locality $p" python -m delta_suite.spec.proofs \
    --merge-locality --tokenizer "$p" "${named[@]}" --ledger "$u/merge-locality/merge-locality.jsonl"
  fi
  if selected checks && [ "$piece_local" = 1 ]; then ustep "separators $p" python -m delta_suite.spec.proofs \
    --separators --tokenizer "$p" "${named[@]}" --ledger "$u/separators/separators.jsonl"
  fi
  # the per-code-point checks of the file's split family when admission derived it by proof (class tables,
  # transition boundaries, end of input, the alphabet): the same tests as for the six, on the same stride; a
  # file of one of the six has its family's own tests in the checks step (its stages equal them byte for byte)
  if selected checks && [ "$derived" = 1 ]; then
    if ! table=$(python -m delta_suite.frozen.export_user_files "${USER_FILES[$i]}"); then
      record "per-code-point $p" 2 "" python -m delta_suite.frozen.export_user_files "${USER_FILES[$i]}"
      if [ "$status" -eq 0 ]; then status=2; fi
    else
      ustep "per-code-point $p" env DELTA_USER_TOKENIZERS="$table" DELTA_DERIVED_GATE="" \
        DELTA_LEDGER_DIR="$u/per-code-point" DELTA_EXHAUSTIVE_STRIDE="$STRIDE" DELTA_EXHAUSTIVE="$EXHAUSTIVE" \
        python -m pytest -q -p no:cacheprovider -n 2 -m "not slow" properties/test_derived_exhaustive.py \
        properties/test_cut_exhaustive.py -k derived
    fi
  fi
done

# admission, the spec's properties and knobs, the battery, kill matrix, proofs, sampled exhaustive tables and chat
# replays: the gate's own checks, which write the records the obligations table reads
if ! registry checks; then unselected checks
elif [ "$interrupted" = 1 ]; then skip checks python -m pytest properties; else
  # the admitted user files join the gate's per-tokenizer properties (delta_suite.frozen.export_user_files)
  USER_TABLE=""
  if [ ${#ADMITTED[@]} -gt 0 ] && ! USER_TABLE=$(python -m delta_suite.frozen.export_user_files "${ADMITTED[@]}"); then
    # never silent: the gate then runs without them, and the job says so (a failed step, status 2)
    echo "[main] checks: the user files could not be named for the gate (above); it runs without them" >&2
    record "checks: user files" 2 "" python -m delta_suite.frozen.export_user_files "${ADMITTED[@]}"
    if [ "$status" -eq 0 ]; then status=2; fi
    USER_TABLE=""
  fi
  step checks env DELTA_USER_TOKENIZERS="$USER_TABLE" DELTA_LEDGER_DIR="$L/checks" DELTA_EXHAUSTIVE_STRIDE="$STRIDE" \
  DELTA_EXHAUSTIVE="$EXHAUSTIVE" python -m pytest -q -p no:cacheprovider -n 2 -m "not slow" \
  properties/test_admission.py properties/test_reference.py properties/test_cut_spec.py \
  properties/test_cut_properties.py properties/test_cut_knobs.py properties/test_repair_spec.py \
  properties/test_repair_properties.py properties/test_repair_knobs.py properties/test_store_stateful.py \
  properties/test_battery.py properties/test_kill_matrix.py properties/test_control_proofs.py \
  properties/test_proofs.py properties/test_pipeline_proof.py properties/test_coverage.py properties/test_bounded.py \
  properties/test_cut_exhaustive.py properties/test_chat_replay.py properties/test_obligations.py; fi

# --- report: always written, from whatever ledgers exist -----------------------------------------------------
trap '' INT TERM  # the report is written even after Ctrl-C (it takes seconds)
report=0
# the whole job must discharge every applicable obligation; a job that leaves steps out on purpose
# (DELTA_MAIN_STEPS) leaves theirs open, and its verdict says so ("PARTIAL: ...", "steps not selected")
allow_open=""
for s in smoke fuzz corpus checks; do selected "$s" || allow_open=--allow-open; done
# --only leaves the eleven's steps out, so their obligations stay open; the line says "PARTIAL" and which
if [ "$ONLY" = 1 ]; then allow_open=--allow-open; fi
reports table3 --ledgers "$L" --out "$OUT/report" --format md,html,json,csv --require-pass $allow_open || report=$?
echo "report: $OUT/report/table3.html (also table3.md, table3.json and table3*.csv in $OUT/report)"
if [ "$interrupted" = 1 ]; then echo "interrupted: the report covers the steps that finished" >&2; exit 130; fi
if [ "$status" -ne 0 ]; then exit "$status"; fi
if [ "$rows_lost" = 1 ]; then exit 3; fi
exit "$report"
