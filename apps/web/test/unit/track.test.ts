import { describe, expect, it } from 'vitest';
import { createVisitTracker } from '../../src/track.js';

// registry-api.md: the web UI calls track when a user copies or downloads SKILL.md, once per page visit.
describe('createVisitTracker', () => {
  it('sends on the first call only', () => {
    let sent = 0;
    const track = createVisitTracker(async () => {
      sent += 1;
    });
    track();
    track();
    track();
    expect(sent).toBe(1);
  });

  it('a new visit (a new tracker) sends again', () => {
    let sent = 0;
    const send = async () => {
      sent += 1;
    };
    createVisitTracker(send)();
    createVisitTracker(send)();
    expect(sent).toBe(2);
  });

  it('swallows a failing send, sync or async, and stays spent', async () => {
    let calls = 0;
    const rejecting = createVisitTracker(() => {
      calls += 1;
      return Promise.reject(new Error('registry down'));
    });
    expect(() => rejecting()).not.toThrow();
    rejecting();
    const throwing = createVisitTracker(() => {
      calls += 1;
      throw new Error('sync');
    });
    expect(() => throwing()).not.toThrow();
    await new Promise((r) => setTimeout(r, 0));
    expect(calls).toBe(2);
  });
});
