import {
  buildSteps,
  classifyPhase,
  cleanTitle,
  readRequest,
  splitClauses,
  stepKeywords,
} from '@pkgreg/agents';
import { describe, expect, it } from 'vitest';
import { loadEnv } from '../src/env.js';

// The planner's rules on their own (decisions.md, Agent engineering.workflow: "runs without any model").

describe('phase rules', () => {
  it.each([
    ['Write integration tests for the API', 'test'],
    ['Write the README', 'document'],
    ['Design the database schema', 'design'],
    ['Set up GitHub Actions CI', 'setup'],
    ['Deploy to production', 'release'],
    ['Add Prometheus alerts', 'operate'],
    ['Investigate the memory leak', 'research'],
    ['Review the pull request', 'review'],
    ['Implement the parser', 'implement'],
    ['Refactor the billing module', 'implement'],
    ['Benchmarking the hot path', 'test'],
    ['Do the thing', 'implement'],
  ])('%s → %s', (text, phase) => {
    expect(classifyPhase(text)).toBe(phase);
  });
});

describe('splitting and cleaning', () => {
  it('splits on then/finally and between actions joined by "and" or commas', () => {
    expect(
      splitClauses('First lint the code, run the tests and then publish it, and finally announce it.'),
    ).toEqual([
      { text: 'Lint the code', marker: 'first' },
      { text: 'Run the tests', marker: null },
      { text: 'Publish it', marker: 'then' },
      { text: 'Announce it', marker: 'last' },
    ]);
  });

  it('an opening condition is not a step; after/once/when order the step later', () => {
    expect(splitClauses('Before deploying, run the security audit')).toEqual([
      { text: 'Run the security audit', marker: null },
    ]);
    expect(splitClauses('Once the API works, add caching')).toEqual([
      { text: 'Add caching', marker: 'then' },
    ]);
  });

  it('does not split "and" between nouns', () => {
    expect(splitClauses('Convert CSV and JSON files').map((c) => c.text)).toEqual([
      'Convert CSV and JSON files',
    ]);
  });

  it('strips lead-ins and keeps tech spellings in keywords', () => {
    expect(cleanTitle('we need to   deploy the Node.js app.')).toBe('Deploy the Node.js app');
    expect(cleanTitle("Let's write docs;")).toBe('Write docs');
    expect(stepKeywords('Deploy the Node.js app to Fly.io')).toEqual(['node.js', 'app', 'fly.io', 'deploy']);
  });
});

describe('requests of each input type', () => {
  it('json steps may carry their own phase', () => {
    const { steps } = buildSteps(
      readRequest({
        type: 'json',
        json: { steps: [{ title: 'Check the logs', phase: 'operate' }, 'Fix the bug'] },
      }),
    );
    expect(steps.map((s) => [s.title, s.phase])).toEqual([
      ['Check the logs', 'operate'],
      ['Fix the bug', 'implement'],
    ]);
  });

  it('json without usable strings still yields a plan', () => {
    const { steps } = buildSteps(readRequest({ type: 'json', json: { n: 1, ok: true } }));
    expect(steps.length).toBeGreaterThan(0);
  });

  it('a long list is capped at 20 steps', () => {
    const text = Array.from({ length: 30 }, (_, i) => `- Implement feature ${i + 1}`).join('\n');
    expect(buildSteps(readRequest({ type: 'text', text })).steps).toHaveLength(20);
  });

  it('duplicate steps are planned once', () => {
    const { steps } = buildSteps(
      readRequest({ type: 'text', text: '- Write tests\n- Write tests\n- Deploy to staging' }),
    );
    expect(steps.map((s) => s.title)).toEqual(['Write tests', 'Deploy to staging']);
  });
});

describe('env.ts (STYLE.md §5)', () => {
  it('parses flags explicitly and refuses bad values', () => {
    expect(loadEnv({ INDEXING_ENABLED: 'false' }).INDEXING_ENABLED).toBe(false);
    expect(loadEnv({}).REINDEX_EVERY_MS).toBe(6 * 3600 * 1000);
    expect(() => loadEnv({ WORKER_CONCURRENCY: '0' })).toThrow(/WORKER_CONCURRENCY/);
    expect(() => loadEnv({ DATABASE_SCHEMA: 'Robert"; drop' })).toThrow(/DATABASE_SCHEMA/);
  });
});
