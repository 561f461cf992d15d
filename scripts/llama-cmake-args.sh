#!/bin/sh
# CMAKE_ARGS for building llama.cpp (llama-cpp-python) for this CPU, without AMX.
#
# Why not -DGGML_NATIVE=ON: -march=native turns on AMX wherever the CPU lists it, and
# some virtual machines list AMX and let a process ask for it but never run it: the
# model then dies with SIGILL on its first step. So each x86 instruction set the CPU
# lists in /proc/cpuinfo is switched on by name (GGML_NATIVE=OFF), AMX never.
# Elsewhere (not Linux x86-64) this prints -DGGML_NATIVE=ON.
#
#   CMAKE_ARGS="$(sh scripts/llama-cmake-args.sh)" pip install -e ".[dev]"
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
if [ -z "$flags" ] || [ "$(uname -m)" != "x86_64" ]; then
    echo "-DGGML_NATIVE=ON"
    exit 0
fi
args="-DGGML_NATIVE=OFF"
for pair in avx:AVX avx2:AVX2 fma:FMA f16c:F16C bmi2:BMI2 avx_vnni:AVX_VNNI \
    avx512f:AVX512 avx512vbmi:AVX512_VBMI avx512_vnni:AVX512_VNNI avx512_bf16:AVX512_BF16; do
    flag=${pair%%:*}
    name=${pair#*:}
    case " $flags " in
        *" $flag "*) args="$args -DGGML_$name=ON" ;;
        *) args="$args -DGGML_$name=OFF" ;;
    esac
done
echo "$args"
