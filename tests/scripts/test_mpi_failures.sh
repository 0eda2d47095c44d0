#!/usr/bin/env bash
# A data-parallel job whose rank dies or stops must end with an error, never hang (issue #18).
#   tests/scripts/test_mpi_failures.sh MPIEXEC TOPO_TRAIN      (ctest: mpi_failures, label mpi)
# 1. kill -9 rank 1 mid-training: mpirun notices the death and ends rank 0; the job exits non-zero and says so.
# 2. kill -STOP rank 1 (alive but silent, as a hung or swapped-out peer): rank 0's next collective times out
#    after --dist-timeout 3 s with an error naming the rank and the collective, and the job ends non-zero.
# Each case must end within 60 s; a hang fails the test (and the job is killed).
set -euo pipefail
mpiexec=$1
train=$2
work=$(mktemp -d)
job=
cleanup() {
  [ -n "$job" ] && kill -9 "$job" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The pid of rank $1 among the children of mpirun $2 (their environment names their rank).
rank_pid() {
  local child
  for child in $(pgrep -P "$2"); do
    if tr '\0' '\n' < "/proc/$child/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
      echo "$child"
      return 0
    fi
  done
  return 1
}

# run_case NAME SIGNAL TIMEOUT EXPECTED_TEXT
run_case() {
  local name=$1 signal=$2 timeout=$3 expected=$4 log="$work/$1.log" victim= status=0
  "$mpiexec" --oversubscribe -np 2 "$train" --task masked-sum --model star --n 20 --k 3 --d 4 \
    --train-size 2000 --dev-size 50 --test-size 50 --hidden 32 --heads 4 --head-hidden 32 --epochs 1000 \
    --threads 1 --progress lines --log-every 1 --dist-timeout "$timeout" --out "$work/$name" > "$log" 2>&1 &
  job=$!
  # Wait for training steps (the job is past MPI initialisation and the first collectives).
  for _ in $(seq 600); do
    grep -q "step 3/" "$log" && victim=$(rank_pid 1 "$job") && break
    kill -0 "$job" 2>/dev/null || { cat "$log"; echo "FAIL $name: the job ended before training" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$victim" ] || { cat "$log"; echo "FAIL $name: no rank 1 found" >&2; exit 1; }
  kill "-$signal" "$victim"
  local start=$SECONDS
  while kill -0 "$job" 2>/dev/null; do
    if (( SECONDS - start > 60 )); then
      cat "$log"
      echo "FAIL $name: the job still runs 60 s after rank 1 got SIG$signal (a hang)" >&2
      exit 1
    fi
    sleep 0.2
  done
  wait "$job" || status=$?
  job=
  if [ "$status" -eq 0 ]; then
    cat "$log"
    echo "FAIL $name: the job exited 0 after rank 1 got SIG$signal" >&2
    exit 1
  fi
  if ! grep -q "$expected" "$log"; then
    cat "$log"
    echo "FAIL $name: no '$expected' in the job's output" >&2
    exit 1
  fi
  # A stopped rank cannot act on mpirun's SIGTERM until it runs again: continue it, then it must go.
  [ "$signal" = STOP ] && kill -CONT "$victim" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$victim" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$victim" 2>/dev/null; then
    echo "FAIL $name: rank 1 (pid $victim) outlived the job" >&2
    exit 1
  fi
  echo "ok $name: exit $status after $(( SECONDS - start )) s; the log says:"
  grep -m 3 -E "$expected|error" "$log" | sed 's/^/    /'
}

run_case killed KILL 600 "exited on signal 9"
run_case stopped STOP 3 "rank 0 of 2: error: rank 0: .* did not complete within 3 s"
echo "mpi failures: ok"
