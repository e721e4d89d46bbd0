#!/bin/bash
# s4 churn fuzz: for each seed, plain and primed. STEPS (60), START (16), TAG, and
# PROBE16_OVERRIDES pass through.
cd /work/probe16
for sd in "$@"; do
  for mode in plain prime; do
    HF_HUB_OFFLINE=1 PYTHONPATH=/work/probe16:/work/probe16/docs/probes/probe16 timeout 900 \
      /work/main/.venv/bin/python docs/probes/probe16/s4_churn_fuzz.py $sd ${STEPS:-60} $mode ${START:-16} \
      > docs/probes/probe16/s4-$sd-$mode${TAG}.log 2>&1
    echo "seed $sd $mode rc=$? $(grep -c '^FAIL' docs/probes/probe16/s4-$sd-$mode${TAG}.log) fails; $(grep '^== s4' docs/probes/probe16/s4-$sd-$mode${TAG}.log)"
  done
done
