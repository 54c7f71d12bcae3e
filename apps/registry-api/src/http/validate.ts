import type { z } from 'zod';
import { badRequest } from './api-error.js';

/**
 * Parses a query with its contracts schema. The schemas' messages already name the parameter and its
 * rule (decisions.md: Registry / List); zod's generic messages get the parameter name in front.
 */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.infer<S> {
  const result = schema.safeParse(query);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const parameter = String(issue?.path[0] ?? 'query');
  const message = issue?.message ?? 'is invalid';
  throw badRequest(message.startsWith(parameter) ? message : `${parameter}: ${message}`);
}

/** Parses a JSON body with its contracts schema; the message names the field and its rule. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.length ? issue.path.join('.') : 'body';
  const message = issue?.message ?? 'is invalid';
  throw badRequest(message.startsWith(field) ? message : `${field}: ${message}`);
}
