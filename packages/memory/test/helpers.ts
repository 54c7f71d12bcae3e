import { createHash, randomUUID } from 'node:crypto';
import { type MemoryPutArgs, MemoryPutArgsSchema, RejectError } from '@pkgreg/contracts';
import { expect } from 'vitest';

/** A namespace as the edge derives it: `app:` + 64 hex (decisions.md: Namespace). */
export function ns(label: string = randomUUID()): string {
  return `app:${createHash('sha256').update(label).digest('hex')}`;
}

/** Put args as the edge hands them over: parsed by the contract schema (defaults applied). */
export function putArgs(
  namespace: string,
  fields: Partial<MemoryPutArgs> & { content: string },
): MemoryPutArgs {
  return MemoryPutArgsSchema.parse({ namespace, tier: 'stm', ...fields });
}

export async function expectReject(promise: Promise<unknown>, reason: string, message?: string | RegExp) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'expected a RejectError').toBeInstanceOf(RejectError);
  expect((error as RejectError).reason).toBe(reason);
  if (message !== undefined) expect((error as RejectError).message).toMatch(message);
  return error as RejectError;
}
