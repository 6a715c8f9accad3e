#!/usr/bin/env bash
# Compile the Coq library (the files of _CoqProject) in place; `symuat certify` compiles its own copy.
set -euo pipefail
cd "$(dirname "$0")"
coq_makefile -f _CoqProject -o Makefile.coq >/dev/null
make -s -f Makefile.coq
