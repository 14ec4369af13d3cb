#!/bin/sh
# The container's entry point, run by tini with the CMD as its arguments.
# LITESTREAM=on and the CMD is the service (node ... dist/main.js): bring the database back from the
# replica when the volume has none (a new machine, a lost volume), then run the service under
# `litestream replicate`, which ships every WAL change to the replicas named in litestream.yml,
# forwards SIGTERM to the service and stops with it. Any other command (npm run backup, ...) and
# LITESTREAM=off run exactly as given.
set -eu

last=''
for arg in "$@"; do last=$arg; done

if [ "${LITESTREAM:-off}" = on ] && [ "${1:-}" = node ] && [ "$last" = dist/main.js ]; then
  # The replica holds everything the database does (tokens included): owner-only, like the database.
  umask 077
  config=${LITESTREAM_CONFIG:-/app/litestream.yml}
  db=${DATABASE_PATH:?DATABASE_PATH must be set}
  if [ ! -e "$db" ]; then
    litestream restore -config "$config" -if-replica-exists "$db"
    # Litestream rebuilds the database in $db.tmp and renames it, leaving that copy's -wal and -shm.
    rm -f "$db.tmp-wal" "$db.tmp-shm"
    # Litestream copies the database, not the key file that seals its secrets: a restored database
    # with a new key would start but could never read its tool metadata, llm keys or credentials.
    if [ -e "$db" ] && [ -z "${SECRET_KEY:-}" ] && [ ! -e "$db.key" ]; then
      echo "restored $db from the replica, but its key file $db.key is missing and SECRET_KEY is not set:" >&2
      echo "put the key file back (or set SECRET_KEY) and start again" >&2
      rm -f "$db" "$db-wal" "$db-shm"
      exit 1
    fi
  fi
  exec litestream replicate -config "$config" -exec "$*"
fi

exec "$@"
