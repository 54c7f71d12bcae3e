// CPU time read from /proc, shared by the edge benchmarks (Linux only).
import { readdirSync, readFileSync } from 'node:fs';

/** utime + stime of one process, in ms (clock ticks are 10 ms on Linux). */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU ms per pid of every Redis and Postgres process (all backends, the WAL writer and the rest). */
function servicesSnapshot() {
  const snapshot = new Map();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const service = comm === 'redis-server' ? 'redis' : comm === 'postgres' ? 'postgres' : undefined;
    if (!service) continue;
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    snapshot.set(pid, { service, ms: (Number(fields[11]) + Number(fields[12])) * 10 });
  }
  return snapshot;
}

/**
 * Starts measuring what Redis and Postgres spend: the returned function gives the CPU ms each used
 * since, summed per process (a backend that started meanwhile counts whole; one that exited is not
 * counted, as its time can no longer be read). Other work on those servers counts too, which is why
 * the benchmarks hold the bench lock.
 */
export function measureServicesCpu() {
  const before = servicesSnapshot();
  return () => {
    const used = { redis: 0, postgres: 0 };
    for (const [pid, now] of servicesSnapshot()) used[now.service] += now.ms - (before.get(pid)?.ms ?? 0);
    return used;
  };
}
