import type { Command } from 'commander';
import { commandOptions, type OptionsOf } from '../command-options.js';

// `pkgreg search [terms...]`: what it takes. What it does: actions/search.ts.

export const searchOptions = commandOptions(async (z) => {
  // The API's own rules for its query parameters (registry-api.md), so a bad filter is a usage error here.
  const { FilterQueryShape, LIST_ORDERS, LIST_SORTS, SEARCH_MAX_QUERY_LENGTH } = await import(
    '@pkgreg/contracts/registry'
  );
  return z
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
});
export type SearchOptions = OptionsOf<typeof searchOptions>;

/** Options as commander hands them over; the filters keep the API's names (issue 20). */
interface SearchFlags {
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

export function configureSearchCommand(program: Command): void {
  program
    .command('search')
    .description('search the registry by scope, name and description, or list it by a sort')
    .argument('[terms...]', 'search terms (each matches as a word prefix)')
    .option('--kind <kind>', 'only this kind: skill, composite, workflow, app')
    .option('--category <category>', 'only this category')
    .option('--tag <tag>', 'only packages with this tag')
    .option('--agent <agent>', 'only packages compatible with this agent (e.g. claude-code)')
    .option('--license <spdx>', 'only this license (the whole SPDX expression)')
    .option('--verified', 'only verified publishers')
    .option('--status <status>', 'active (deprecated left out) or deprecated')
    .option('--risk <level>', 'at most this risk: none, low, medium, high')
    .option('--owner <scope>', "only this scope's packages")
    .option('--sort <sort>', 'list instead of search: name, stars, indexed, downloads, trending')
    .option('--order <order>', 'with --sort: asc or desc (default: name asc, the others desc)')
    .option('--json', 'print the registry response as JSON')
    .action(async (terms: string[], flags: SearchFlags, command: Command) => {
      // The filters as the API's query parameters (strings; `--verified` a flag).
      const input = await searchOptions.parse({
        query: terms.join(' '),
        json: flags.json,
        sort: flags.sort,
        order: flags.order,
        kind: flags.kind,
        category: flags.category,
        tag: flags.tag,
        agent: flags.agent,
        license: flags.license,
        verified: flags.verified ? 'true' : undefined,
        status: flags.status,
        risk: flags.risk,
        owner: flags.owner,
      });
      const { search } = await import('../actions/search.js');
      await search(input, command);
    });
}
