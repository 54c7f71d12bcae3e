import {
  FilterQueryShape,
  LIST_ORDERS,
  LIST_SORTS,
  type PackageFilters,
  SEARCH_MAX_QUERY_LENGTH,
} from '@pkgreg/contracts';
import type { Command } from 'commander';
import { z } from 'zod';
import { createContext, parseOptions } from '../context.js';
import { formatCount, table, terminalWidth } from '../output.js';

/** Options as commander hands them over; the filters keep the API's names (issue 20). */
export interface SearchOptions {
  json?: boolean;
  kind?: string;
  category?: string;
  tag?: string;
  agent?: string;
  license?: string;
  verified?: boolean;
  status?: string;
  risk?: string;
  owner?: string;
  sort?: string;
  order?: string;
}

const SearchInputSchema = z
  .object({
    query: z
      .string()
      .trim()
      .max(SEARCH_MAX_QUERY_LENGTH, {
        error: `search terms must be at most ${SEARCH_MAX_QUERY_LENGTH} characters`,
      }),
    json: z.boolean().default(false),
    sort: z.enum(LIST_SORTS, { error: `--sort must be one of ${LIST_SORTS.join(', ')}` }).optional(),
    order: z.enum(LIST_ORDERS, { error: `--order must be one of ${LIST_ORDERS.join(', ')}` }).optional(),
    ...FilterQueryShape,
  })
  .superRefine((input, ctx) => {
    // Search ranks by relevance (registry-api.md, Search rule 2); a sort lists instead.
    if (input.query && input.sort) {
      ctx.addIssue({
        code: 'custom',
        message: '--sort lists packages and takes no search terms (search results are ranked by relevance)',
      });
    } else if (!input.query && !input.sort) {
      ctx.addIssue({
        code: 'custom',
        message: 'search terms must not be empty (or give --sort to list packages)',
      });
    } else if (input.order && !input.sort) {
      ctx.addIssue({ code: 'custom', message: '--order goes with --sort' });
    }
  });

/** What commander parsed, as the API's query parameters (strings; `--verified` a flag). */
function filterArguments(options: SearchOptions): Record<string, string | undefined> {
  return {
    kind: options.kind,
    category: options.category,
    tag: options.tag,
    agent: options.agent,
    license: options.license,
    verified: options.verified ? 'true' : undefined,
    status: options.status,
    risk: options.risk,
    owner: options.owner,
  };
}

export async function search(terms: string[], options: SearchOptions, command: Command): Promise<void> {
  const input = parseOptions(SearchInputSchema, {
    query: terms.join(' '),
    json: options.json,
    sort: options.sort,
    order: options.order,
    ...filterArguments(options),
  });
  const filters: PackageFilters = {
    kind: input.kind,
    category: input.category,
    tag: input.tag,
    agent: input.agent,
    license: input.license,
    verified: input.verified,
    status: input.status,
    risk: input.risk,
    owner: input.owner,
  };
  const ctx = await createContext(command);
  if (input.sort) {
    const order = input.order ?? (input.sort === 'name' ? 'asc' : 'desc');
    const page = await ctx.client.list({ page: 1, pageSize: 50, sort: input.sort, order, ...filters });
    if (input.json) {
      ctx.json(page);
      return;
    }
    if (page.data.length === 0) {
      ctx.out('No packages match these filters.');
      return;
    }
    const rows = page.data.map((item) => [
      `@${item.scope}/${item.name}`,
      item.kind,
      item.description,
      formatCount(item.repoStars),
    ]);
    const lines = table(
      [
        { header: 'NAME' },
        { header: 'KIND' },
        { header: 'DESCRIPTION', flexible: true },
        { header: 'STARS', align: 'right' },
      ],
      rows,
      terminalWidth(),
    );
    for (const line of lines) ctx.out(line);
    if (page.total > page.data.length)
      ctx.out(`Showing ${page.data.length} of ${page.total} packages by ${input.sort}.`);
    return;
  }
  const response = await ctx.client.search(input.query, filters);
  if (input.json) {
    ctx.json(response);
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
