#!/usr/bin/env bash
# The Slurm path of `attnprof sweep`, for real (make slurm-test; .ci/run runs it):
# starts munged, slurmctld and slurmd on this host from a generated config (their
# own sockets, ports, state and logs under a temporary folder), submits a sweep
# with `--slurm --no-gres --submit` whose task command needs no GPU (it re-renders
# a committed H200 fixture archive into the shape folder; one shape fails on
# purpose, as a memory failure), waits for the array (at most 2 minutes), runs
# `--collect`, asserts the report and the failed task's job id and log, and stops
# every daemon it started. Needs root (slurmd) and Debian's slurm-wlm and munge:
# a missing one is a failure, not a skip.
# Env: ATTNPROF_BIN (default build/attnprof).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(realpath "${ATTNPROF_BIN:-$root/build/attnprof}")
fail() { echo "slurm-test: $*" >&2; exit 1; }

for c in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v "$c" >/dev/null || fail "$c not found: apt-get install slurm-wlm munge"
done
[ "$(id -u)" = 0 ] || fail "needs root (slurmd runs the jobs as their users)"
[ -x "$bin" ] || fail "$bin: build attnprof first"

work=$(mktemp -d /tmp/attnprof-slurm.XXXXXX)
chmod 755 "$work"
pids=()
stop_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  if [ "${KEEP:-0}" = 1 ]; then echo "slurm-test: kept $work" >&2; else rm -rf "$work"; fi
}
trap stop_all EXIT
dump_logs() { for f in "$work"/log/*.log; do echo "== $f" >&2; tail -20 "$f" >&2; done; }

mkdir -p "$work"/{munge,etc,state,spool,log}
chmod 700 "$work/munge"
# munge: its own key and socket, so a munged already on the host is left alone.
dd if=/dev/urandom of="$work/etc/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/etc/munge.key"
munged --force --socket="$work/munge/munge.socket.2" --key-file="$work/etc/munge.key" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/log/munged.log" --seed-file="$work/munge/seed"
for _ in $(seq 50); do [ -s "$work/munge/munged.pid" ] && break; sleep 0.1; done
[ -s "$work/munge/munged.pid" ] || { dump_logs; fail "munged did not start"; }
pids+=("$(cat "$work/munge/munged.pid")")

host=$(hostname -s)
port=$((17000 + RANDOM % 2000))
cpus=$(nproc)
export SLURM_CONF="$work/etc/slurm.conf"
cat > "$SLURM_CONF" <<EOF
ClusterName=attnprof-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket.2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=attnprof Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -c -i
slurmd
for _ in $(seq 100); do [ -s "$work/slurmctld.pid" ] && [ -s "$work/slurmd.pid" ] && break; sleep 0.1; done
[ -s "$work/slurmctld.pid" ] && [ -s "$work/slurmd.pid" ] || { dump_logs; fail "slurmctld or slurmd did not start"; }
pids+=("$(cat "$work/slurmd.pid")" "$(cat "$work/slurmctld.pid")")
for _ in $(seq 100); do
  sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && break
  sleep 0.2
done
sinfo -h -o %t | grep -qE '^(idle|mix|alloc)' || { dump_logs; sinfo >&2 || true; fail "the node did not come up"; }

# The sweep: three shapes at B·S = 2048; S = 1024 fails the way `run` does when
# naive does not fit (exit 4, one line).
fixture="$root/tests/fixtures/h200-6var"
dir="$work/sweep"
out=$("$bin" sweep --slurm --no-gres --submit --partition attnprof --time 5 --seq 256:1024:x2 --dim 64 \
  --tokens 2048 --heads 4 -o "$dir" \
  --slurm-task-command "$root/tests/sweep/task.sh $fixture {dir} {batch} {heads} {seq} {dim} 1024")
echo "$out"
job=$(echo "$out" | sed -n 's/^submitted: job \([0-9][0-9]*\) .*/\1/p')
[ -n "$job" ] || fail "no job id in: $out"
grep -q '^#SBATCH --array=0-2$' "$dir/sweep.sbatch" || fail "sweep.sbatch: no --array=0-2"
grep -q 'gres' "$dir/sweep.sbatch" && fail "sweep.sbatch asks for a GPU despite --no-gres"

deadline=$((SECONDS + 120))
while [ -n "$(squeue -h -j "$job" 2>/dev/null)" ]; do
  [ $SECONDS -lt $deadline ] || { squeue >&2; dump_logs; fail "job $job still queued or running after 2 minutes"; }
  sleep 1
done

set +e
"$bin" sweep --collect "$dir" > "$work/collect.txt"
rc=$?
set -e
cat "$work/collect.txt"
[ $rc = 1 ] || fail "--collect exited $rc; expected 1 (one shape failed)"
grep -q "^shapes: 2 complete, 1 failed, 0 missing, 0 unreadable (of 3)$" "$work/collect.txt" || fail "collect counts"
grep -q "^failed  2x4x1024x64 job ${job}_2 log $dir/logs/${job}_2.out exit 4: attnprof: variant naive needs" \
  "$work/collect.txt" || fail "the failed task is not listed with its job id, log and error"
[ -s "$dir/logs/${job}_2.out" ] || fail "no Slurm log logs/${job}_2.out"
grep -q "needs 512.00 GiB" "$dir/logs/${job}_2.out" || fail "the task's error is not in its Slurm log"
for s in 8x4x256x64 4x4x512x64; do
  [ -s "$dir/shapes/$s/run.json" ] && [ -s "$dir/shapes/$s/trace.json" ] || fail "shapes/$s is not an archive"
  grep -q "\"slurm_job_id\": \"$job\"" "$dir/status/$s.json" || fail "status/$s.json lacks job $job"
done
[ ! -e "$dir/.staging" ] || [ -z "$(ls -A "$dir/.staging")" ] || fail ".staging left behind: $(ls -A "$dir/.staging")"
for f in sweep.md sweep.html sweep.csv sweep.tex figures/sweep-time.png figures/sweep-memory.svg; do
  [ -s "$dir/$f" ] || fail "$f missing"
done
grep -q "2 complete, 1 failed, 0 missing" "$dir/sweep.md" || fail "sweep.md counts"
grep -q "| \`2x4x1024x64\` | failed | 4 | attnprof: variant naive needs 512.00 GiB" "$dir/sweep.md" || fail "sweep.md failed row"
grep -q "${job}_2" "$dir/sweep.md" || fail "sweep.md lacks the failed task's job id"
grep -q "naive needs 512.0 GiB at S = 1024" "$dir/sweep.md" || fail "no memory wall finding"
[ "$(grep -c '^4x4x512x64,' "$dir/sweep.csv")" = 6 ] || fail "sweep.csv: 6 variant rows for 4x4x512x64"
# A task that left nothing (its node died): listed as missing, with its job id and log.
rm -rf "$dir/shapes/8x4x256x64" "$dir/status/8x4x256x64.json"
set +e
"$bin" sweep --collect "$dir" > "$work/collect2.txt"
rc=$?
set -e
[ $rc = 1 ] || fail "--collect exited $rc after a task vanished; expected 1"
grep -q "^missing 8x4x256x64 job ${job}_0 log $dir/logs/${job}_0.out: no archive, no exit status$" "$work/collect2.txt" ||
  { cat "$work/collect2.txt" >&2; fail "the vanished task is not listed as missing with its job id and log"; }
echo "slurm-test: ok (job $job: 3 array tasks on slurmctld + slurmd, collect, report)"
