import { describe, expect, it } from 'vitest';
import { type AppProcess, http, seedPackages, until } from '../src/apps.js';
import { useStack } from '../src/vitest.js';

// Several processes of each app on one database and one Redis behave as one service (issue 22): two
// registry APIs and two edges, with what one process did seen by the other.

const stack = useStack('multi');

describe('two registry APIs on one database', () => {
  let apis: AppProcess[] = [];

  it('starts both', async () => {
    await seedPackages(stack.services.databaseUrl, [{ scope: 'multi', name: 'counted' }]);
    apis = [await stack.spawn('registry-api'), await stack.spawn('registry-api')];
  });

  it('counts every track answered 200, spread over both, exactly once', async () => {
    const n = 200;
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        http(`${apis[i % 2]?.url}/api/packages/@multi/counted/track`, { method: 'POST' }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(n).fill(200));
    for (const api of apis) {
      await until(async () => {
        const detail = await http(`${api.url}/api/packages/@multi/counted`);
        return (detail.body as { downloadCount?: number }).downloadCount === n;
      }, `downloadCount ${n} on ${api.label}`);
    }
  });
});
