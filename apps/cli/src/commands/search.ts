import { SEARCH_MAX_QUERY_LENGTH } from '@pkgreg/contracts';
import type { Command } from 'commander';
import { z } from 'zod';
import { createContext, parseOptions } from '../context.js';
import { formatCount, table, terminalWidth } from '../output.js';

const SearchInputSchema = z.object({
  query: z
    .string()
    .trim()
    .min(1, { error: 'search terms must not be empty' })
    .max(SEARCH_MAX_QUERY_LENGTH, {
      error: `search terms must be at most ${SEARCH_MAX_QUERY_LENGTH} characters`,
    }),
  json: z.boolean().default(false),
});

export async function search(terms: string[], options: { json?: boolean }, command: Command): Promise<void> {
  const input = parseOptions(SearchInputSchema, { query: terms.join(' '), json: options.json });
  const ctx = await createContext(command);
  const response = await ctx.client.search(input.query);
  if (input.json) {
    ctx.out(JSON.stringify(response, null, 2));
    return;
  }
  if (response.results.length === 0) {
    ctx.out(`No packages found for "${input.query}".`);
    return;
  }
  const rows = response.results.map((item) => [
    `@${item.scope}/${item.name}`,
    item.kind,
    item.description,
    formatCount(item.tokenCount),
    item.verified ? '✓' : '',
  ]);
  const lines = table(
    [
      { header: 'NAME' },
      { header: 'KIND' },
      { header: 'DESCRIPTION', flexible: true },
      { header: 'TOKENS', align: 'right' },
      { header: 'VERIFIED' },
    ],
    rows,
    terminalWidth(),
  );
  for (const line of lines) ctx.out(line);
  if (response.total > response.results.length) {
    ctx.out(
      `Showing ${response.results.length} of ${response.total} matches; narrow the search to see others.`,
    );
  }
}
