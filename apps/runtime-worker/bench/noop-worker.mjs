// Child process of bench/run.mjs: a BullMQ worker with a no-op processor, connected like the runtime
// worker (maxRetriesPerRequest null). Reports enqueue→start latencies and completion counts over IPC.
import { performance } from 'node:perf_hooks';
import { connectionOptions } from '@pkgreg/tasks';
import { Worker } from 'bullmq';

const [, , queueName, prefix, concurrencyArg, redisUrl] = process.argv;
const now = () => performance.timeOrigin + performance.now();
let latencies = [];
let completed = 0;
let target = Number.POSITIVE_INFINITY;

const worker = new Worker(
  queueName,
  async (job) => {
    if (typeof job.data.t === 'number') latencies.push(now() - job.data.t);
  },
  {
    connection: connectionOptions(redisUrl, { maxRetriesPerRequest: null }),
    prefix,
    concurrency: Number(concurrencyArg),
  },
);
worker.on('error', (err) => console.error('worker error', err.message));
worker.on('completed', () => {
  completed += 1;
  if (completed >= target) {
    target = Number.POSITIVE_INFINITY;
    process.send?.({ type: 'done', latencies });
  }
});
process.on('message', async (msg) => {
  if (msg.type === 'expect') {
    latencies = [];
    completed = 0;
    target = msg.count;
  } else if (msg.type === 'close') {
    await worker.close();
    process.exit(0);
  }
});
await worker.waitUntilReady();
process.send?.({ type: 'ready' });
