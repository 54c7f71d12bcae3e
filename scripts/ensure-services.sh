#!/usr/bin/env bash
# Makes sure PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379) answer, starting the machine's own
# services when they are down (the commands of our machines' image; see README "Services").
set -euo pipefail

up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() {
  local port=$1 name=$2
  for _ in $(seq 1 60); do up "$port" && return 0; sleep 0.5; done
  echo "ensure-services: $name did not come up on 127.0.0.1:$port" >&2
  return 1
}

if ! up 5432; then
  echo "ensure-services: starting PostgreSQL" >&2
  if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n 1)" main start
  else
    echo "ensure-services: PostgreSQL is not installed: apt-get install postgresql" >&2
    exit 1
  fi
  wait_for 5432 PostgreSQL
fi

if ! up 6379; then
  echo "ensure-services: starting Redis" >&2
  command -v redis-server >/dev/null || { echo "ensure-services: Redis is not installed: apt-get install redis-server" >&2; exit 1; }
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_for 6379 Redis
fi
echo "ensure-services: PostgreSQL and Redis are up" >&2
