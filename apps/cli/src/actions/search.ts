import type { PackageFilters } from '@pkgreg/contracts';
import type { Command } from 'commander';
import type { SearchOptions } from '../commands/search.js';
import { createContext } from '../context.js';
import { formatCount, table, terminalWidth } from '../output.js';

// `pkgreg search`: a search ranked by relevance, or with --sort a list (registry-api.md).

export async function search(input: SearchOptions, command: Command): Promise<void> {
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
