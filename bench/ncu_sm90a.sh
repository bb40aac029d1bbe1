#!/usr/bin/env bash
# Where the sm_90a flash kernel spends its time at 8x16x1024x64 (causal, d64 default): one
# launch under ncu with the full section set and source counters, read back as the details
# page and the per-SASS-instruction stall samples. Device only (ncu is not installed here):
#   source .devdeps/env.sh && bash bench/ncu_sm90a.sh      (report and CSVs in $OUT/ncu.tgz)
# Needs build/bench/libflash_sm90a.so (make build/bench/libflash_sm90a.so) and PyTorch.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-out/ncu}
W=${WORK:-/tmp/attnprof-ncu}
mkdir -p "$OUT" "$W"
PY=${PYTHON:-python3}
# profile() launches each default kernel 4 times at the small shape, then at the large one:
# skip the first two (warm-up) and take the third.
timeout 240 ncu --kernel-name regex:sm90a --launch-skip 2 --launch-count 1 --set full \
  --import-source yes -f -o "$W/small" "$PY" bench/flash_sm90a_torch.py build/bench/libflash_sm90a.so profile \
  > "$W/ncu_run.txt" 2>&1
echo "ncu rc $?"; tail -3 "$W/ncu_run.txt"
ncu -i "$W/small.ncu-rep" --page details --csv > "$W/details.csv" 2> "$W/details.err"
ncu -i "$W/small.ncu-rep" --page source --csv --print-source sass > "$W/source_sass.csv" 2> "$W/source.err"
echo "details $(wc -l < "$W/details.csv") lines, source $(wc -l < "$W/source_sass.csv") lines"; head -c 300 "$W/source.err"
grep -E '"(Duration|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps Per Scheduler|Warp Cycles Per Issued Instruction|L2 Hit Rate|SM Frequency|DRAM Throughput)"' \
  "$W/details.csv" | cut -d, -f12- | head -20
tar czf "$OUT/ncu.tgz" -C "$W" small.ncu-rep details.csv source_sass.csv ncu_run.txt details.err source.err 2>/dev/null
