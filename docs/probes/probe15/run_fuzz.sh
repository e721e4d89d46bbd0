#!/bin/bash
# seeds 1..8, plain and primed, 40 writes each
cd /work/probe15
for sd in "$@"; do
  for mode in plain prime; do
    HF_HUB_OFFLINE=1 PYTHONPATH=/work/probe15:/work/probe15/docs/probes/probe15 timeout 600 \
      /work/main/.venv/bin/python docs/probes/probe15/s4_fuzz.py $sd ${STEPS:-40} $mode ${START:-14} \
      > docs/probes/probe15/s4-$sd-$mode${TAG}.log 2>&1
    echo "seed $sd $mode rc=$? $(grep -c '^FAIL' docs/probes/probe15/s4-$sd-$mode${TAG}.log) fails"
  done
done
