#!/usr/bin/env bash
# A throwaway PostgreSQL server for graphmem's tests and benchmarks.
#
#   scripts/pg_test_server.sh start DIR [PORT]   initdb in DIR, start on 127.0.0.1:PORT (default
#                                                55432), create database "graphmem", print its URL
#   scripts/pg_test_server.sh stop DIR           stop the server and delete DIR
#
# The server listens on loopback only, with its socket in DIR. PostgreSQL refuses to run as
# root, so as root the server runs as the "postgres" user (created by Debian's package).
# The cluster uses the C locale so text order (ISO timestamps, keys) matches SQLite's.
set -euo pipefail

find_bindir() {
    # Debian installs the server outside PATH; a pg_ctl on PATH may be a lone symlink.
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -z "$dir" ] && command -v pg_ctl >/dev/null 2>&1; then
        dir=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
    fi
    if [ -z "$dir" ] || [ ! -x "$dir/pg_ctl" ]; then
        echo "pg_test_server: PostgreSQL server binaries not found (apt-get install postgresql)" >&2
        exit 1
    fi
    echo "$dir"
}

as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

cmd=${1:-}
dir=${2:-}
port=${3:-55432}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
    echo "usage: $0 start DIR [PORT] | stop DIR" >&2
    exit 2
fi
bin=$(find_bindir)
user=$(if [ "$(id -u)" = 0 ]; then echo postgres; else id -un; fi)

case "$cmd" in
start)
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
    as_owner "$bin/initdb" -D "$dir/data" -U "$user" --auth=trust --no-locale -E UTF8 >"$dir/initdb.log"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" \
        start >/dev/null
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$user" graphmem
    echo "postgresql+psycopg://$user@127.0.0.1:$port/graphmem"
    ;;
stop)
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
    fi
    rm -rf "$dir"
    ;;
*)
    echo "usage: $0 start DIR [PORT] | stop DIR" >&2
    exit 2
    ;;
esac
