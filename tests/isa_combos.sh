#!/usr/bin/env bash
# The forced instruction-set combinations `make test` runs on this CPU (Makefile, ISA_COMBOS;
# docs/reliability.md). Each argument is OURS:ATEN:ONEDNN[:PRODUCTS], the values of
# REXTIO_TORCH_ISA (which of our compiled loops runs), ATEN_CPU_CAPABILITY (ATen's kernels),
# ONEDNN_MAX_CPU_ISA (oneDNN's kernels, which run eager's GELU) and, where given,
# REXTIO_TORCH_PRODUCTS (whose GEMM computes wide products: the crate's or libtorch's, which
# the CPU's vendor picks otherwise): together they make this machine stand in for one with
# fewer instruction sets or another vendor. Prints one line per combination this
# CPU can run, its assignments joined by commas (`REXTIO_TORCH_ISA=avx2,ATEN_...`), and says
# on stderr why it skips the others: a level the CPU lacks (forcing it would silently test
# the CPU's own levels again), or the CPU's own levels (the unforced run tests those).
set -eu

# ISA_COMBOS_CPU_FLAGS stands in for /proc/cpuinfo's flags (to check this script's choices for
# another CPU).
flags=" ${ISA_COMBOS_CPU_FLAGS:-$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2)} "
has() {
    local f
    for f in "$@"; do
        [[ "$flags" == *" $f "* ]] || return 1
    done
}

# What each name needs, as /proc/cpuinfo spells the features (oneDNN's avx512_core and ATen's
# AVX-512 capability: F, BW, VL, DQ; ATen's AVX2 capability and our avx2 level: AVX2 and FMA).
needs() {
    case "$1" in
        avx512 | AVX512_CORE) echo "avx512f avx512bw avx512vl avx512dq avx2 fma" ;;
        avx2 | AVX2) echo "avx2 fma" ;;
        AVX) echo "avx" ;;
        SSE41) echo "sse4_1" ;;
        portable | default) echo "" ;;
        *) echo "unknown" ;;
    esac
}

if has $(needs avx512); then
    own="avx512:avx512:AVX512_CORE"
elif has $(needs avx2); then
    own="avx2:avx2:AVX2"
else
    own="portable:default:SSE41"
fi

for combo in "$@"; do
    IFS=: read -r ours aten onednn products <<<"$combo"
    line="REXTIO_TORCH_ISA=$ours,ATEN_CPU_CAPABILITY=$aten,ONEDNN_MAX_CPU_ISA=$onednn"
    if [[ -n "$products" ]]; then
        line="$line,REXTIO_TORCH_PRODUCTS=$products"
    fi
    missing=""
    for name in "$ours" "$aten" "$onednn"; do
        # shellcheck disable=SC2046
        if ! has $(needs "$name") && [[ "$missing " != *" $name "* ]]; then
            missing="$missing $name"
        fi
    done
    if [[ -n "$missing" ]]; then
        echo "== skipping ${line//,/ }: this CPU lacks$missing" >&2
    elif [[ "$ours:$aten:$onednn" == "$own" ]]; then
        echo "== skipping ${line//,/ }: these are this CPU's own levels (the unforced run)" >&2
    else
        echo "$line"
    fi
done
