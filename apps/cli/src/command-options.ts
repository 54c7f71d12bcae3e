import type * as zod from 'zod';
import { usageError } from './errors.js';

// What each command file (commands/*.ts) shares: its options checked by a zod schema it declares. The
// command files are loaded to build the command tree, so zod is loaded (and the schema built) only when
// a command runs: `--version` and `--help` load nothing but commander (program.ts).

type Zod = typeof zod.z;

export interface CommandOptions<T extends zod.ZodType> {
  /** The options (and arguments) parsed; a failure is a usage error (exit 2) naming the option. */
  parse(value: unknown): Promise<zod.infer<T>>;
}

/** The type a command's options parse to. */
export type OptionsOf<C> = C extends CommandOptions<infer T> ? zod.infer<T> : never;

/** A command's options schema, built by `build` on the first parse. */
export function commandOptions<T extends zod.ZodType>(build: (z: Zod) => T | Promise<T>): CommandOptions<T> {
  let schema: Promise<T> | undefined;
  return {
    async parse(value) {
      schema ??= import('zod').then(({ z }) => build(z));
      return parseOptions(await schema, value);
    },
  };
}

/** A value parsed by a schema, so nothing runs on an unchecked value; a failure is a usage error (exit 2). */
export function parseOptions<T extends zod.ZodType>(schema: T, value: unknown): zod.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${String(issue.path[0])}: ` : '';
    throw usageError(`${where}${issue?.message ?? 'invalid options'}`);
  }
  return parsed.data;
}

/** Commander's collector for a repeatable option. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
