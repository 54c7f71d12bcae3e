#!/usr/bin/env node
// The agent's model tool loop (issue 32, docs/agent.md): run `flock /tmp/pkgreg-bench.lock node
// bench/agent-loop.mjs` in apps/runtime-worker after `pnpm --filter @pkgreg/runtime-worker build`.
//
// 1) Loop overhead per step, outside model time: runModelLoop (the official OpenAI SDK, the tools, the
//    JSON, the limits) against a local chat-completions server that answers at once, with skills from
//    memory; beside it, in the same run, a bare `fetch` POST of the same request bodies to the same
//    server (the least one step can cost). Reported per step and as a ratio to the bare POST.
// 2) Worker throughput with model latency simulated at 500 ms per call, concurrency 10: the real worker
//    (dist) on a fresh database and Redis prefix, agent.invoke jobs of a 4-call loop each; the ideal is
//    concurrency / (calls × 500 ms), and the ratio to it is the figure.
//
// Env: BENCH_STEP_RUNS (200), BENCH_JOBS (100), BENCH_MODEL_MS (500), BENCH_CONCURRENCY (10), REDIS_URL.

import { once } from 'node:events';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createChatProvider, DEFAULT_AGENT_LIMITS, runModelLoop } from '@pkgreg/agents';
import { createTestDatabase, testKeyPrefix } from '@pkgreg/db/testing';
import { createLogger } from '@pkgreg/server-kit';
import { createRuntimeQueue, submitInvoke } from '@pkgreg/tasks';
import { createWorker } from '../dist/worker.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const STEP_RUNS = Number(process.env.BENCH_STEP_RUNS ?? 200);
const JOBS = Number(process.env.BENCH_JOBS ?? 100);
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 500);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- A chat-completions server scripted by the conversation's length: search, read, read a file, submit.
const SKILL_MD = `---\nname: go-rest-api\ndescription: Build a REST API in Go\n---\n${'Use net/http. '.repeat(200)}\nSee references/LIMITS.md.\n`;
const LIMITS_MD = `# Limits\n${'A token bucket per client. '.repeat(80)}\n`;

function turn(step) {
  if (step === 0) return [{ name: 'search_skills', arguments: { query: 'rest api' } }];
  if (step === 1) return [{ name: 'read_skill', arguments: { package: '@acme/go-rest-api' } }];
  if (step === 2)
    return [
      {
        name: 'read_skill_file',
        arguments: { package: '@acme/go-rest-api', version: '1.0.0', path: 'references/LIMITS.md' },
      },
    ];
  return [
    {
      name: 'submit_plan',
      arguments: {
        steps: [
          { id: 's1', title: 'Design the schema', phase: 'design', skills: [] },
          {
            id: 's2',
            title: 'Implement the REST API',
            phase: 'implement',
            dependsOn: ['s1'],
            skills: [{ package: '@acme/go-rest-api', version: '1.0.0' }],
          },
        ],
      },
    },
  ];
}

let served = 0;
async function startModel(delayMs) {
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', async () => {
      const body = JSON.parse(raw || '{}');
      // A bare replay sends the loop's turns as they were: the same answer, without the SDK.
      const step = (body.messages ?? body.turns ?? []).filter((m) => m.role === 'assistant').length;
      const calls = turn(step);
      if (delayMs) await sleep(delayMs);
      served += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `c${served}`,
          object: 'chat.completion',
          created: 0,
          model: 'bench',
          choices: [
            {
              index: 0,
              finish_reason: 'tool_calls',
              message: {
                role: 'assistant',
                content: null,
                tool_calls: calls.map((c, i) => ({
                  id: `call_${served}_${i}`,
                  type: 'function',
                  function: { name: c.name, arguments: JSON.stringify(c.arguments) },
                })),
              },
            },
          ],
          usage: { prompt_tokens: 500, completion_tokens: 50, total_tokens: 550 },
        }),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${server.address().port}/v1` };
}

/** Skills from memory: the loop's cost without the registry's. */
const skills = {
  async search() {
    return [
      {
        scope: 'acme',
        name: 'go-rest-api',
        description: 'Build a REST API in Go',
        kind: 'skill',
        category: '',
        sourceRepo: 'acme/skills',
        tokenCount: 100,
        verified: true,
        risk: 'none',
      },
    ];
  },
  async version() {
    return {
      version: '1.0.0',
      risk: 'none',
      files: [
        { path: 'SKILL.md', size: SKILL_MD.length, linkTarget: null },
        { path: 'references/LIMITS.md', size: LIMITS_MD.length, linkTarget: null },
      ],
    };
  },
  async file(_s, _n, _v, path, maxBytes) {
    const bytes = Buffer.from(path === 'SKILL.md' ? SKILL_MD : LIMITS_MD);
    return { bytes: bytes.subarray(0, maxBytes), truncated: bytes.length > maxBytes };
  },
};

const REQUEST = { goal: 'Build a URL shortener in Go', constraints: [], context: null, input: 'Build it' };

async function stepOverhead() {
  const { server, url } = await startModel(0);
  const provider = createChatProvider({ provider: 'openai', baseUrl: url, model: 'bench', apiKey: 'k' });
  const deps = {
    provider,
    callTimeoutMs: 10_000,
    limits: DEFAULT_AGENT_LIMITS,
    tools: { skills, as: {}, maxSkillBytes: DEFAULT_AGENT_LIMITS.maxSkillBytes },
  };
  // The request bodies of one run, to replay as bare POSTs.
  const bodies = [];
  const recording = {
    ...provider,
    complete(request) {
      bodies.push(
        JSON.stringify({
          model: 'bench',
          turns: request.turns,
          system: request.system,
          tools: request.tools,
        }),
      );
      return provider.complete(request);
    },
  };
  await runModelLoop({ ...deps, provider: recording }, REQUEST);
  for (let i = 0; i < 20; i += 1) await runModelLoop(deps, REQUEST); // warm-up
  let steps = 0;
  const t0 = performance.now();
  for (let i = 0; i < STEP_RUNS; i += 1) {
    const result = await runModelLoop(deps, REQUEST);
    if (result.outcome !== 'completed') throw new Error(`run ended ${result.outcome}`);
    steps += result.report.steps;
  }
  const loopMs = (performance.now() - t0) / steps;
  const post = (body) =>
    fetch(`${url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    }).then((r) => r.json());
  for (let i = 0; i < 20; i += 1) for (const b of bodies) await post(b);
  const t1 = performance.now();
  for (let i = 0; i < STEP_RUNS; i += 1) for (const b of bodies) await post(b);
  const bareMs = (performance.now() - t1) / (STEP_RUNS * bodies.length);
  server.close();
  return { loopMs, bareMs, stepsPerRun: steps / STEP_RUNS };
}

async function throughput() {
  const { server, url } = await startModel(MODEL_MS);
  const t = await createTestDatabase();
  const prefix = testKeyPrefix('bench-agent');
  const worker = createWorker({
    db: t.db,
    logger: createLogger('bench', 'silent'),
    connection: REDIS_URL,
    prefix,
    concurrency: CONCURRENCY,
    indexingConcurrency: 1,
    indexing: false,
    finder: { search: async () => [] },
    skills,
    model: { provider: 'openai', baseUrl: url, model: 'bench', apiKey: 'k', timeoutMs: 10_000 },
    limits: DEFAULT_AGENT_LIMITS,
    indexer: {},
    pollWindowSeconds: 300,
    orphanAfterSeconds: 600,
  });
  const queue = createRuntimeQueue({ connection: REDIS_URL, prefix });
  const submit = () =>
    submitInvoke(
      { db: t.db, queue, syncThresholdMs: 0 },
      {
        namespace: `app:${'5'.repeat(64)}`,
        clientId: 'bench',
        args: {
          agentId: 'engineering.workflow',
          input: { type: 'text', text: 'Build a URL shortener in Go' },
          executionMode: 'async',
        },
      },
    );
  const t0 = performance.now();
  for (let i = 0; i < JOBS; i += 1) await submit();
  for (;;) {
    const open = await t.db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', 'in', ['queued', 'running'])
      .executeTakeFirstOrThrow();
    if (Number(open.n) === 0) break;
    await sleep(50);
  }
  const seconds = (performance.now() - t0) / 1000;
  const completed = await t.db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('status', '=', 'completed')
    .executeTakeFirstOrThrow();
  await worker.close(5000);
  await queue.close();
  await t.destroy();
  server.close();
  const callsPerJob = 4;
  const ideal = CONCURRENCY / ((callsPerJob * MODEL_MS) / 1000);
  return { jobsPerSecond: JOBS / seconds, ideal, completed: Number(completed.n), seconds };
}

const load = loadavg()[0].toFixed(2);
const overhead = await stepOverhead();
const tp = await throughput();
console.log(`agent loop bench ${new Date().toISOString()} (load average ${load} at start)`);
console.log(
  `per step: loop ${(overhead.loopMs * 1000).toFixed(0)} µs, bare POST ${(overhead.bareMs * 1000).toFixed(0)} µs, ` +
    `ratio ${(overhead.loopMs / overhead.bareMs).toFixed(2)}×, loop only ${((overhead.loopMs - overhead.bareMs) * 1000).toFixed(0)} µs ` +
    `(${overhead.stepsPerRun} steps per run, ${STEP_RUNS} runs)`,
);
console.log(
  `worker: ${tp.completed}/${JOBS} completed in ${tp.seconds.toFixed(2)} s: ${tp.jobsPerSecond.toFixed(2)} jobs/s, ` +
    `ideal ${tp.ideal.toFixed(2)} (concurrency ${CONCURRENCY}, 4 calls × ${MODEL_MS} ms), ratio ${(tp.jobsPerSecond / tp.ideal).toFixed(3)}`,
);
console.log(`load average at end ${loadavg()[0].toFixed(2)}`);
process.exit(0);
