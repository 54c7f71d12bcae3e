import { randomUUID } from 'node:crypto';
import { TASK_STATUS_MESSAGE_MAX_LENGTH } from '@pkgreg/contracts';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  completeTask,
  failTask,
  getTaskRecord,
  setTaskStatusMessage,
  startTask,
  taskStatusWriter,
} from '../src/index.js';
import { insertTask } from '../src/task.repository.js';

// A running task's status message (docs/agent.md, "Progress"): written only while the task runs, at most
// one write per interval per run, cleared when the task ends. Real PostgreSQL.

const NS = `app:${'c'.repeat(64)}`;
let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase();
});

afterAll(async () => {
  await tdb?.destroy();
});

async function newTask(): Promise<string> {
  const taskId = randomUUID();
  await insertTask(tdb.db, {
    taskId,
    runId: randomUUID(),
    toolName: 'pkgreg.agents.v1.invoke',
    namespace: NS,
    clientId: 'c1',
    input: {},
  });
  return taskId;
}

const record = (taskId: string) => getTaskRecord(tdb.db, NS, taskId);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('setTaskStatusMessage', () => {
  it('writes only while the task runs; the end of the task clears it', async () => {
    const taskId = await newTask();
    expect(await setTaskStatusMessage(tdb.db, taskId, 'too early')).toBe(false);
    expect((await record(taskId)).statusMessage).toBeUndefined();

    await startTask(tdb.db, taskId);
    const before = (await record(taskId)).updatedAt;
    await sleep(5);
    expect(await setTaskStatusMessage(tdb.db, taskId, 'step 1/8: asking the model')).toBe(true);
    const running = await record(taskId);
    expect(running.statusMessage).toBe('step 1/8: asking the model');
    // A new message is an update of the task (MCP's lastUpdatedAt).
    expect(Date.parse(running.updatedAt)).toBeGreaterThan(Date.parse(before));

    await completeTask(tdb.db, taskId, async () => ({ runId: randomUUID(), outputs: [] }));
    expect((await record(taskId)).statusMessage).toBeUndefined();
    // A late write (a slow step's) cannot put a message back on an ended task.
    expect(await setTaskStatusMessage(tdb.db, taskId, 'step 2/8: too late')).toBe(false);
    expect((await record(taskId)).statusMessage).toBeUndefined();
  });

  it('a failed task keeps no message; a long one is cut to the contract length', async () => {
    const taskId = await newTask();
    await startTask(tdb.db, taskId);
    await setTaskStatusMessage(tdb.db, taskId, `step 1/8: searching "${'x'.repeat(1000)}"`);
    const message = (await record(taskId)).statusMessage ?? '';
    expect(message).toHaveLength(TASK_STATUS_MESSAGE_MAX_LENGTH);
    expect(message.endsWith('…')).toBe(true);
    await failTask(tdb.db, taskId, { reason: 'run_failed', message: 'The run failed' });
    expect((await record(taskId)).statusMessage).toBeUndefined();
  });
});

describe('taskStatusWriter', () => {
  it('writes the first message at once, a burst as its last message at the interval end', async () => {
    const taskId = await newTask();
    await startTask(tdb.db, taskId);
    // A second: a loaded machine takes far less between the first write and the checks within it.
    const status = taskStatusWriter(tdb.db, taskId, 1000);
    await status.update('step 1/8: asking the model');
    expect((await record(taskId)).statusMessage).toBe('step 1/8: asking the model');
    for (const label of ['searching "rest"', 'reading @acme/a SKILL.md', 'reading @acme/b SKILL.md'])
      await status.update(`step 1/8: ${label}`);
    // Within the interval nothing more is written…
    expect((await record(taskId)).statusMessage).toBe('step 1/8: asking the model');
    // …then the latest message, once.
    const deadline = Date.now() + 5000;
    while ((await record(taskId)).statusMessage !== 'step 1/8: reading @acme/b SKILL.md') {
      if (Date.now() > deadline) throw new Error('the burst’s last message was never written');
      await sleep(20);
    }
    // An interval after that write, the next message is written at once again.
    await sleep(1100);
    await status.update('step 2/8: asking the model');
    expect((await record(taskId)).statusMessage).toBe('step 2/8: asking the model');
    status.close();
  });

  it('once closed (the run ended), a message still waiting is dropped', async () => {
    const taskId = await newTask();
    await startTask(tdb.db, taskId);
    const status = taskStatusWriter(tdb.db, taskId, 200);
    await status.update('step 1/4: asking the model');
    await status.update('step 1/4: reading @acme/a SKILL.md');
    status.close();
    await status.update('step 2/4: asking the model');
    await sleep(300);
    expect((await record(taskId)).statusMessage).toBe('step 1/4: asking the model');
  });
});
