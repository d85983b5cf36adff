#!/bin/bash
# Records the groups Megatron-Core builds for several layouts (gloo, CPU processes; torch needed).
# From the project root, with megatron/core exported (never committed) into the ignored .vendor/:
#   git --git-dir=<Megatron-LM git dir> archive 2a75ac12c54ba6a42b34024756820bf819a2e25f megatron/core | tar -x -C .vendor/
#   bash test/advise/megatron/run.sh > test/advise/megatron/groups.log
set -u
here=$(cd "$(dirname "$0")" && pwd)
export MCORE_DIR=${MCORE_DIR:-$PWD/.vendor} PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
python3 -c 'import sys, torch, numpy, einops; print("# python", sys.version.split()[0], "torch", torch.__version__, "numpy", numpy.__version__, "einops", einops.__version__)'
port=29800
case_run() {  # WORLD TP PP CP SIZES
  port=$((port + 1))
  echo "# case world=$1 tp=$2 pp=$3 cp=$4 sizes=$5"
  env TP="$2" PP="$3" CP="$4" HCP_SIZES="$5" timeout 120 python3 -m torch.distributed.run --nproc_per_node="$1" \
    --master_port=$port "$here/groups.py" 2>&1 | grep -E '^(MEGATRON-GROUPS|\[groups\]|Traceback|[A-Za-z]*Error)'
  echo "# rc=${PIPESTATUS[0]}"
}
case_run 4 1 1 4 2,2
case_run 8 2 1 4 2,2
case_run 8 2 1 2 2,1
case_run 8 1 1 4 2,2
case_run 16 2 1 8 4,2
case_run 16 2 2 4 2,2
case_run 16 4 1 4 2,2
case_run 16 1 1 8 2,4
case_run 16 2 1 4 ""
