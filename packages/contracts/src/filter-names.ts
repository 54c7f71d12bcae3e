// Apart from the schemas so a page can build query strings without loading zod (apps/web's first chunk).

/** The filters list and search take (issue 20), in the order the API documents them. */
export const FILTER_NAMES = [
  'kind',
  'category',
  'tag',
  'agent',
  'license',
  'verified',
  'status',
  'risk',
  'owner',
] as const;
export type FilterName = (typeof FILTER_NAMES)[number];
