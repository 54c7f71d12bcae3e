import { z } from 'zod';

/**
 * JSON Schema (draft 2020-12, what MCP 2025-11-25 expects) from a zod schema, with zod's native
 * converter. `io: 'input'` describes what a caller may send (defaults make fields optional).
 */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'output'): Record<string, unknown> {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
}
