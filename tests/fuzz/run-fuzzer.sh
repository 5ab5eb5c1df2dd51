#!/usr/bin/env bash
# Builds one libFuzzer target with clang (AddressSanitizer + UBSan) from the
# library sources it needs, then runs it briefly over a seed corpus.
# Usage: run-fuzzer.sh SRC_DIR WORK_DIR TARGET SECONDS LAYERS CORPUS...
#   TARGET: tests/fuzz/<TARGET>.cpp.
#   LAYERS: comma-separated; LAYER compiles LAYER/lib/**.cpp, LAYER/SUB only
#     LAYER/lib/SUB/**.cpp, LAYER/SUB.cpp only the file LAYER/lib/SUB.cpp
#     (all add LAYER/include), e.g. runtime,ir,frontend/onnx.
#   CORPUS: seed folders, or seed files (copied into WORK_DIR/seeds-TARGET).
# Environment: FUZZ_CXX (default clang++), FUZZ_CXXFLAGS (extra compile flags,
#   e.g. -DONNX_ML=1), FUZZ_LDFLAGS (extra link flags, e.g. -lonnx -lprotobuf).
# Exits 0 when the run finds nothing, non-zero (with the reproducer path) on a
# finding; prints SKIPPED with the reason when clang's libFuzzer is missing.
set -euo pipefail
SRC=$1 WORK=$2 TARGET=$3 SECONDS_TO_RUN=$4 LAYERS=$5
shift 5
CXX=${FUZZ_CXX:-clang++}
if ! command -v "$CXX" >/dev/null; then
  echo "SKIPPED: $CXX not found (install clang and libclang-rt-14-dev)"; exit 0
fi
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*,unsigned long){return 0;}' |
     "$CXX" -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
  echo "SKIPPED: $CXX cannot link libFuzzer (install libclang-rt-14-dev)"; exit 0
fi
LAUNCH=""
command -v ccache >/dev/null && LAUNCH=ccache
FLAGS=(-std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
OBJ="$WORK/obj-$TARGET"
mkdir -p "$OBJ" "$WORK/corpus-$TARGET"
read -ra EXTRA_CXXFLAGS <<< "${FUZZ_CXXFLAGS:-}"
read -ra EXTRA_LDFLAGS <<< "${FUZZ_LDFLAGS:-}"
FLAGS+=("${EXTRA_CXXFLAGS[@]}")
INCS=()
SRCS=()
HDRS=() # folders whose private headers the sources may include
IFS=, read -ra LS <<< "$LAYERS"
for L in "${LS[@]}"; do
  BASE=${L%%/*} SUB=""
  [[ $L == */* ]] && SUB=/${L#*/}
  INCS+=(-I "$SRC/$BASE/include")
  if [[ $L == *.cpp ]]; then
    SRCS+=("$SRC/$BASE/lib$SUB")
    HDRS+=("$(dirname "$SRC/$BASE/lib$SUB")")
    continue
  fi
  HDRS+=("$SRC/$BASE/lib$SUB")
  while IFS= read -r F; do SRCS+=("$F"); done < <(find "$SRC/$BASE/lib$SUB" -name '*.cpp' | sort)
done
SRCS+=("$SRC/tests/fuzz/$TARGET.cpp")
# A changed header (public, or private next to the sources) rebuilds
# everything (no dependency scanning here). So do changed compile flags.
if [[ -f "$WORK/$TARGET" ]] && [[ -n "$({ find "${INCS[@]/#-I/}" -newer "$WORK/$TARGET" -type f
      find "${HDRS[@]}" -newer "$WORK/$TARGET" -type f -name '*.h'; } 2>/dev/null | head -1)" ]]; then
  rm -f "$OBJ"/*.o
fi
if [[ "$(cat "$OBJ/flags" 2>/dev/null)" != "${FLAGS[*]}" ]]; then
  rm -f "$OBJ"/*.o
  echo "${FLAGS[*]}" > "$OBJ/flags"
fi
OBJS=()
JOBS=()
for F in "${SRCS[@]}"; do
  O="$OBJ/$(echo "${F#$SRC/}" | tr / _).o"
  OBJS+=("$O")
  if [[ ! -f "$O" || "$F" -nt "$O" ]]; then JOBS+=("$F" "$O"); fi
done
if ((${#JOBS[@]})); then
  printf '%s\n' "${JOBS[@]}" |
    xargs -r -P "$(nproc)" -n 2 sh -c "$LAUNCH $CXX ${FLAGS[*]} ${INCS[*]} -c \$0 -o \$1"
fi
"$CXX" -fsanitize=fuzzer,address,undefined "${OBJS[@]}" "${EXTRA_LDFLAGS[@]}" -o "$WORK/$TARGET"
# Seed files go into one folder (libFuzzer takes folders as corpora).
CORPORA=()
SEEDS="$WORK/seeds-$TARGET"
rm -rf "$SEEDS"
for C in "$@"; do
  if [[ -f $C ]]; then
    mkdir -p "$SEEDS"
    cp "$C" "$SEEDS/$(echo "${C#/}" | tr / _)"
  else
    CORPORA+=("$C")
  fi
done
[[ -d $SEEDS ]] && CORPORA+=("$SEEDS")
echo "running $TARGET for ${SECONDS_TO_RUN}s"
cd "$WORK"
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "./$TARGET" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 "corpus-$TARGET" "${CORPORA[@]}"
