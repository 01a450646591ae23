#!/usr/bin/env bash
# The main job on its embedded default: a short check of every provisioned tokenizer, then the report.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${DELTA_OUT:-out}
mkdir -p "$OUT/ledgers/main"
corpora smoke --out "$OUT/ledgers/main"
