#!/usr/bin/env bash
# Gradescope runs this once, when the autograder image is built. The autograder zip holds
# this file, run_autograder and the kit itself (the repository), unpacked in /autograder/source.
set -euo pipefail
apt-get update
apt-get install -y python3 python3-pip python3-venv
python3 -m venv /autograder/venv
# The CPU build of torch: the grader needs no GPU, and the CUDA build is gigabytes.
/autograder/venv/bin/pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
/autograder/venv/bin/pip install -e /autograder/source
