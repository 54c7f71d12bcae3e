import { describe, expect, it } from 'vitest';
import {
  ErrorBodySchema,
  FeedQuerySchema,
  FeedResponseSchema,
  FILTER_NAMES,
  INVALID_PACKAGE_PATH_MESSAGE,
  ListQuerySchema,
  ListResponseSchema,
  type PackageDetail,
  PackageDetailSchema,
  PackageFiltersSchema,
  PackageKindSchema,
  type PackageListItem,
  PackageListItemSchema,
  PackageStatusSchema,
  parsePackageName,
  parsePackagePath,
  SearchQuerySchema,
  SearchResponseSchema,
  type SearchResultItem,
  SearchResultItemSchema,
  TrackResponseSchema,
} from '../src/index.js';

// Fixtures straight from the tables of registry-api.md, "Resources and their fields".

const listItem: PackageListItem = {
  scope: 'anthropics',
  name: 'pdf-tools',
  description: 'Read, split and merge PDF files.',
  kind: 'skill',
  sourceRepo: 'anthropics/skills',
  repoOwner: 'anthropics',
  repoStars: 1523,
  license: 'MIT',
  lastIndexedAt: '2026-11-20T08:15:30.000Z',
  risk: null,
};

const detail: PackageDetail = {
  id: '0b6f3c1e-5a2d-4c8e-9f10-2b3c4d5e6f70',
  scope: 'anthropics',
  name: 'pdf-tools',
  description: 'Read, split and merge PDF files.',
  kind: 'skill',
  category: 'documents',
  tags: ['pdf', 'documents'],
  compatibility: ['claude-code', 'codex'],
  language: 'en',
  version: '1.2.0',
  sourceRepo: 'anthropics/skills',
  sourcePath: 'skills/pdf-tools',
  sourceRef: 'main',
  repoUrl: 'https://github.com/anthropics/skills',
  homepageUrl: null,
  repoOwner: 'anthropics',
  author: 'Anthropic',
  repoStars: 1523,
  license: 'MIT',
  skillMdRaw: '---\nname: pdf-tools\ndescription: Read, split and merge PDF files.\n---\n# PDF tools\n',
  frontmatter: {
    name: 'pdf-tools',
    description: 'Read, split and merge PDF files.',
    'allowed-tools': ['Bash'],
  },
  allowedTools: ['Bash'],
  tokenCount: 412,
  fileCount: 3,
  progressiveDisclosure: true,
  downloadCount: 17,
  depCount: 0,
  dependantCount: 2,
  verified: true,
  featured: false,
  status: 'active',
  hosted: false,
  firstIndexedAt: '2026-10-01T12:00:00.000Z',
  lastIndexedAt: '2026-11-20T08:15:30.000Z',
  lastCommitSha: 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391',
  warnings: [],
  risk: 'none',
  findings: [],
  quarantineReason: null,
  deprecationMessage: null,
  dependencies: [],
  downloadsLast7Days: 5,
  downloadsLast30Days: 17,
  dailyDownloads: { from: '2026-10-22', counts: [...Array(28).fill(0), 12, 5] },
  private: false,
};

// The 35 field names of the "Package detail" table, in the spec's order.
const DETAIL_FIELDS = [
  'id',
  'scope',
  'name',
  'description',
  'kind',
  'category',
  'tags',
  'compatibility',
  'language',
  'version',
  'sourceRepo',
  'sourcePath',
  'sourceRef',
  'repoUrl',
  'homepageUrl',
  'repoOwner',
  'author',
  'repoStars',
  'license',
  'skillMdRaw',
  'frontmatter',
  'allowedTools',
  'tokenCount',
  'fileCount',
  'progressiveDisclosure',
  'downloadCount',
  'depCount',
  'dependantCount',
  'verified',
  'featured',
  'status',
  'hosted',
  'firstIndexedAt',
  'lastIndexedAt',
  'lastCommitSha',
];

const searchItem: SearchResultItem = {
  scope: 'anthropics',
  name: 'pdf-tools',
  description: 'Read, split and merge PDF files.',
  kind: 'skill',
  category: 'documents',
  sourceRepo: 'anthropics/skills',
  tokenCount: 412,
  verified: true,
  risk: null,
};

function without<T extends object>(obj: T, key: keyof T): Partial<T> {
  const copy = { ...obj };
  delete copy[key];
  return copy;
}

describe('registry-api.md: Kind values and States', () => {
  it('kind is exactly skill, composite, workflow, app', () => {
    expect(PackageKindSchema.options).toEqual(['skill', 'composite', 'workflow', 'app']);
    expect(PackageKindSchema.safeParse('library').success).toBe(false);
    expect(PackageKindSchema.safeParse('Skill').success).toBe(false);
  });

  it("status is the spec's active, deprecated, delisted, plus the additive quarantined", () => {
    expect(PackageStatusSchema.options).toEqual(['active', 'deprecated', 'delisted', 'quarantined']);
    expect(PackageStatusSchema.safeParse('archived').success).toBe(false);
  });
});

describe('registry-api.md: Package list item', () => {
  it('accepts the spec shape', () => {
    expect(PackageListItemSchema.parse(listItem)).toEqual(listItem);
  });

  it('has exactly the nine fields of the table, plus the additive risk', () => {
    expect(Object.keys(PackageListItemSchema.shape).sort()).toEqual(
      [
        'scope',
        'name',
        'description',
        'kind',
        'sourceRepo',
        'repoOwner',
        'repoStars',
        'license',
        'lastIndexedAt',
        'risk',
        'private',
      ].sort(),
    );
  });

  it.each([
    ['repoStars as string', { ...listItem, repoStars: '12' }],
    ['unknown kind', { ...listItem, kind: 'plugin' }],
    ['lastIndexedAt not ISO 8601', { ...listItem, lastIndexedAt: 'yesterday' }],
    ['missing sourceRepo', without(listItem, 'sourceRepo')],
  ])('rejects %s', (_label, value) => {
    expect(PackageListItemSchema.safeParse(value).success).toBe(false);
  });

  it('list response carries data, total, page, pageSize (GET /api/packages)', () => {
    const body = { data: [listItem], total: 1, page: 1, pageSize: 20 };
    expect(ListResponseSchema.parse(body)).toEqual(body);
    expect(ListResponseSchema.safeParse({ data: [listItem], total: 1, page: 0, pageSize: 20 }).success).toBe(
      false,
    );
  });
});

describe('registry-api.md: Package detail', () => {
  // The brief for this suite said 36; the spec's table has 35 rows, and the spec is the contract.
  // Added since, additively: `warnings` (docs/versions.md).
  it('has exactly the 35 fields of the table, named as in the spec, plus the additive ones', () => {
    expect(DETAIL_FIELDS).toHaveLength(35);
    const keys = Object.keys(PackageDetailSchema.shape);
    expect(keys.sort()).toEqual(
      [
        ...DETAIL_FIELDS,
        'warnings',
        'risk',
        'findings',
        'quarantineReason',
        'deprecationMessage',
        'dependencies',
        'downloadsLast7Days',
        'downloadsLast30Days',
        'dailyDownloads',
        'private',
      ].sort(),
    );
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('reads a detail without warnings (an older registry) as having none', () => {
    expect(PackageDetailSchema.parse(without(detail, 'warnings')).warnings).toEqual([]);
  });

  it('reads a detail without dependencies (an older registry) as having none', () => {
    expect(PackageDetailSchema.parse(without(detail, 'dependencies')).dependencies).toEqual([]);
  });

  it('lists dependencies with their range (null: the latest) and whether they resolve', () => {
    const dependencies = [
      { name: '@anthropics/pdf', range: '^1.2', resolves: true },
      { name: '@acme/csv', range: null, resolves: false },
    ];
    expect(PackageDetailSchema.parse({ ...detail, depCount: 2, dependencies }).dependencies).toEqual(
      dependencies,
    );
    expect(
      PackageDetailSchema.safeParse({ ...detail, dependencies: [{ name: '@acme/csv', range: null }] })
        .success,
    ).toBe(false);
  });

  it('accepts a realistic detail with every field', () => {
    expect(PackageDetailSchema.parse(detail)).toEqual(detail);
  });

  it('accepts null in every "string or null" field', () => {
    const nulls = {
      ...detail,
      category: null,
      language: null,
      version: null,
      repoUrl: null,
      homepageUrl: null,
      author: null,
      license: null,
      lastCommitSha: null,
    };
    expect(PackageDetailSchema.safeParse(nulls).success).toBe(true);
  });

  it.each([
    ['sourceRepo', null],
    ['sourcePath', null],
    ['skillMdRaw', null],
    ['id', 'not-a-uuid'],
    ['kind', 'plugin'],
    ['status', 'removed'],
    ['tags', 'pdf'],
    ['frontmatter', 'name: x'],
    ['tokenCount', 1.5],
    ['downloadCount', -1],
    ['progressiveDisclosure', 'yes'],
    ['hosted', 1],
    ['firstIndexedAt', '2026-11-20'],
  ])('rejects %s = %j', (field, value) => {
    expect(PackageDetailSchema.safeParse({ ...detail, [field]: value }).success).toBe(false);
  });

  it.each(DETAIL_FIELDS)('requires %s', (field) => {
    expect(PackageDetailSchema.safeParse(without(detail, field as keyof PackageDetail)).success).toBe(false);
  });
});

describe('private (docs/accounts.md): optional on list items, details and search results', () => {
  it('absent reads as public (an older registry, or a public package); a boolean when sent', () => {
    expect(PackageListItemSchema.parse(listItem)).not.toHaveProperty('private');
    expect(PackageListItemSchema.parse({ ...listItem, private: true }).private).toBe(true);
    expect(PackageDetailSchema.parse({ ...detail, private: false }).private).toBe(false);
    expect(SearchResultItemSchema.parse({ ...searchItem, private: true }).private).toBe(true);
    expect(PackageListItemSchema.safeParse({ ...listItem, private: 'yes' }).success).toBe(false);
  });
});

describe('registry-api.md: Search result item and GET /api/search response', () => {
  it('accepts the spec shape with exactly its eight fields, plus the additive risk', () => {
    expect(SearchResultItemSchema.parse(searchItem)).toEqual(searchItem);
    expect(Object.keys(SearchResultItemSchema.shape).sort()).toEqual(
      [
        'scope',
        'name',
        'description',
        'kind',
        'category',
        'sourceRepo',
        'tokenCount',
        'verified',
        'risk',
        'private',
      ].sort(),
    );
  });

  it('rejects a wrong type', () => {
    expect(SearchResultItemSchema.safeParse({ ...searchItem, verified: 'true' }).success).toBe(false);
    expect(SearchResultItemSchema.safeParse({ ...searchItem, tokenCount: '412' }).success).toBe(false);
  });

  it('response is {results, total} with at most 50 results (rule 2)', () => {
    expect(SearchResponseSchema.parse({ results: [], total: 0 })).toEqual({ results: [], total: 0 });
    const fifty = Array.from({ length: 50 }, () => searchItem);
    expect(SearchResponseSchema.safeParse({ results: fifty, total: 70 }).success).toBe(true);
    expect(SearchResponseSchema.safeParse({ results: [...fifty, searchItem], total: 70 }).success).toBe(
      false,
    );
  });
});

describe('registry-api.md: Error body and track', () => {
  it('error body is {error: string}', () => {
    expect(ErrorBodySchema.parse({ error: 'Package not found' })).toEqual({ error: 'Package not found' });
    expect(ErrorBodySchema.safeParse({ message: 'Package not found' }).success).toBe(false);
    expect(ErrorBodySchema.safeParse({ error: 404 }).success).toBe(false);
  });

  it('track answers {ok: true}', () => {
    expect(TrackResponseSchema.parse({ ok: true })).toEqual({ ok: true });
    expect(TrackResponseSchema.safeParse({ ok: false }).success).toBe(false);
  });

  it('invalid path message is the one decisions.md prescribes', () => {
    expect(INVALID_PACKAGE_PATH_MESSAGE).toBe('Invalid package path: expected @scope/name');
  });
});

describe('registry-api.md: GET /api/packages query (decisions.md: Registry / List)', () => {
  const messageOf = (query: Record<string, unknown>) => {
    const result = ListQuerySchema.safeParse(query);
    expect(result.success).toBe(false);
    return result.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n') ?? '';
  };

  it('defaults page 1, pageSize 20, sort name, order asc', () => {
    expect(ListQuerySchema.parse({})).toEqual({ page: 1, pageSize: 20, sort: 'name', order: 'asc' });
  });

  it('coerces query-string values', () => {
    expect(ListQuerySchema.parse({ page: '3', pageSize: '100', sort: 'stars', order: 'desc' })).toEqual({
      page: 3,
      pageSize: 100,
      sort: 'stars',
      order: 'desc',
    });
    expect(ListQuerySchema.parse({ sort: 'indexed', pageSize: '1' })).toMatchObject({
      sort: 'indexed',
      pageSize: 1,
    });
  });

  it('ignores unknown parameters', () => {
    expect(ListQuerySchema.parse({ foo: 'bar' })).toEqual({
      page: 1,
      pageSize: 20,
      sort: 'name',
      order: 'asc',
    });
  });

  it.each([
    [{ page: '0' }, 'page'],
    [{ page: '-1' }, 'page'],
    [{ page: '1.5' }, 'page'],
    [{ page: 'abc' }, 'page'],
    [{ page: '' }, 'page'],
    [{ pageSize: '0' }, 'pageSize'],
    [{ pageSize: '101' }, 'pageSize'],
    [{ pageSize: 'ten' }, 'pageSize'],
    [{ sort: 'popular' }, 'sort'],
    [{ sort: 'NAME' }, 'sort'],
    [{ order: 'up' }, 'order'],
  ])('rejects %j with a message naming %s and its rule', (query, parameter) => {
    const message = messageOf(query);
    expect(message).toMatch(new RegExp(`^${parameter}: ${parameter} must`));
  });

  it('page message states minimum 1; pageSize message states 1 to 100', () => {
    expect(messageOf({ page: '0' })).toContain('minimum 1');
    expect(messageOf({ pageSize: '101' })).toContain('1 to 100');
    expect(messageOf({ sort: 'x' })).toContain('name, stars, indexed, downloads, trending');
    expect(messageOf({ order: 'x' })).toContain('asc, desc');
  });
});

describe('registry-api.md: GET /api/search query (decisions.md: Registry / Search)', () => {
  it('trims q', () => {
    expect(SearchQuerySchema.parse({ q: '  pdf tools \n' })).toEqual({ q: 'pdf tools' });
  });

  it('missing, empty and blank q become the empty query (rule 3)', () => {
    expect(SearchQuerySchema.parse({})).toEqual({ q: '' });
    expect(SearchQuerySchema.parse({ q: '' })).toEqual({ q: '' });
    expect(SearchQuerySchema.parse({ q: '   ' })).toEqual({ q: '' });
  });

  it('accepts 256 chars and rejects 257 (after trimming)', () => {
    expect(SearchQuerySchema.safeParse({ q: 'a'.repeat(256) }).success).toBe(true);
    expect(SearchQuerySchema.safeParse({ q: ` ${'a'.repeat(256)} ` }).success).toBe(true);
    const tooLong = SearchQuerySchema.safeParse({ q: 'a'.repeat(257) });
    expect(tooLong.success).toBe(false);
    expect(tooLong.error?.issues[0]?.message).toMatch(/^q /);
  });

  it('keeps tsquery operators and punctuation as plain text', () => {
    expect(SearchQuerySchema.parse({ q: "pdf & !(tools | 'x') :*" })).toEqual({
      q: "pdf & !(tools | 'x') :*",
    });
  });
});

describe('decisions.md: Registry / scope and name rule (parsePackagePath, parsePackageName)', () => {
  const sixtyFour = `a${'b'.repeat(62)}c`;
  const sixtyFive = `a${'b'.repeat(63)}c`;

  it.each([
    ['@anthropics', 'pdf-tools', { scope: 'anthropics', name: 'pdf-tools' }],
    ['anthropics', 'pdf-tools', { scope: 'anthropics', name: 'pdf-tools' }],
    ['%40anthropics', 'pdf-tools', { scope: 'anthropics', name: 'pdf-tools' }],
    ['@a', 'b', { scope: 'a', name: 'b' }],
    ['@0', '9', { scope: '0', name: '9' }],
    ['@my-org-2', 'x-1-y', { scope: 'my-org-2', name: 'x-1-y' }],
    [`@${sixtyFour}`, sixtyFour, { scope: sixtyFour, name: sixtyFour }],
  ])('accepts %s / %s', (scope, name, expected) => {
    expect(parsePackagePath(scope, name)).toEqual(expected);
  });

  it.each([
    ['@', 'name', 'empty scope'],
    ['@scope', '', 'empty name'],
    [`@${sixtyFive}`, 'name', '65-char scope'],
    ['@scope', sixtyFive, '65-char name'],
    ['@Scope', 'name', 'uppercase scope'],
    ['@scope', 'Name', 'uppercase name'],
    ['@my_org', 'name', 'underscore'],
    ['@scope', 'na_me', 'underscore in name'],
    ['@-scope', 'name', 'leading -'],
    ['@scope-', 'name', 'trailing -'],
    ['@scope', '-name', 'leading - in name'],
    ['@scope', 'name-', 'trailing - in name'],
    ['@sc--ope', 'name', 'double -'],
    ['@scope', 'na--me', 'double - in name'],
    ['@scöpe', 'name', 'unicode'],
    ['@scope', 'nåme', 'unicode in name'],
    ['@scope', 'name\u200b', 'zero-width space'],
    ['@sco.pe', 'name', 'dot'],
    ['@scope', 'na me', 'space'],
    ['@scope', '..', 'dot-dot'],
    ['@@scope', 'name', 'double @'],
    ['%2540scope', 'name', 'double-encoded @'],
  ])('rejects %s / %s (%s)', (scope, name) => {
    expect(parsePackagePath(scope, name)).toBeNull();
  });

  it.each([
    ['@anthropics/pdf-tools', { scope: 'anthropics', name: 'pdf-tools' }],
    ['%40anthropics/pdf-tools', { scope: 'anthropics', name: 'pdf-tools' }],
    [`@${sixtyFour}/${sixtyFour}`, { scope: sixtyFour, name: sixtyFour }],
  ])('parsePackageName accepts %s', (full, expected) => {
    expect(parsePackageName(full)).toEqual(expected);
  });

  it.each([
    'anthropics/pdf-tools',
    '@anthropics',
    '@anthropics/',
    '@/pdf-tools',
    '@anthropics/pdf-tools/extra',
    '@Anthropics/pdf-tools',
    '@anthropics/pdf_tools',
    `@${sixtyFive}/x`,
    `@x/${sixtyFive}`,
    '@a--b/c',
    '@a/-c',
    '@ünï/cödé',
    '',
  ])('parsePackageName rejects %j', (full) => {
    expect(parsePackageName(full)).toBeNull();
  });
});

describe('issue 20: filters, sorts and the sync feed (additions to the contract)', () => {
  const issues = (
    schema: typeof ListQuerySchema | typeof SearchQuerySchema,
    query: Record<string, unknown>,
  ) => {
    const result = schema.safeParse(query);
    expect(result.success).toBe(false);
    return result.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];
  };

  it('parses every filter, lowercasing the free-text ones, on both list and search', () => {
    const query = {
      kind: 'app',
      category: ' Data ',
      tag: 'PDF',
      agent: 'Claude-Code',
      license: 'mit',
      verified: 'true',
      status: 'active',
      risk: 'low',
      owner: 'Acme',
    };
    const filters = {
      kind: 'app',
      category: 'data',
      tag: 'pdf',
      agent: 'claude-code',
      license: 'mit',
      verified: true,
      status: 'active',
      risk: 'low',
      owner: 'acme',
    };
    expect(ListQuerySchema.parse({ ...query, sort: 'trending' })).toEqual({
      page: 1,
      pageSize: 20,
      sort: 'trending',
      order: 'asc',
      ...filters,
    });
    expect(SearchQuerySchema.parse({ q: 'pdf', ...query })).toEqual({ q: 'pdf', ...filters });
    expect(ListQuerySchema.parse({ verified: 'false' }).verified).toBe(false);
    expect(PackageFiltersSchema.parse(filters)).toEqual(filters);
    expect(Object.keys(PackageFiltersSchema.shape)).toEqual([...FILTER_NAMES]);
  });

  it.each([
    [{ kind: 'plugin' }, 'kind: kind must be one of skill, composite, workflow, app'],
    [{ kind: ['app', 'skill'] }, 'kind: kind must be given once'],
    [{ tag: ['a', 'b'] }, 'tag: tag must be given once'],
    [{ tag: '' }, 'tag: tag must be 1-64 characters'],
    [{ category: 'x'.repeat(65) }, 'category: category must be 1-64 characters'],
    [{ agent: 'bad\u0000agent' }, 'agent: agent must be 1-64 characters'],
    [{ license: 'l'.repeat(129) }, 'license: license must be 1-128 characters'],
    [{ verified: 'yes' }, 'verified: verified must be true or false'],
    [{ status: 'delisted' }, 'status: status must be one of active, deprecated'],
    [{ risk: 'critical' }, 'risk: risk must be one of none, low, medium, high'],
    [{ owner: 'not a scope' }, 'owner: owner must be a scope: 1-64 of a-z 0-9 -'],
    [{ owner: ['a', 'b'] }, 'owner: owner must be given once'],
  ])('rejects %j naming the parameter', (query, message) => {
    expect(issues(ListQuerySchema, query)).toContain(message);
    expect(issues(SearchQuerySchema, { q: 'x', ...query })).toContain(message);
  });

  it('feed query: limit 1-500 (default 100), an opaque cursor, updatedSince with an offset', () => {
    expect(FeedQuerySchema.parse({})).toEqual({ limit: 100 });
    expect(
      FeedQuerySchema.parse({ limit: '500', cursor: 'abc_-1', updatedSince: '2026-11-20T10:00:00Z' }),
    ).toEqual({ limit: 500, cursor: 'abc_-1', updatedSince: '2026-11-20T10:00:00Z' });
    const messages = (query: Record<string, unknown>) =>
      FeedQuerySchema.safeParse(query).error?.issues.map((i) => i.message) ?? [];
    expect(messages({ limit: '0' })).toEqual(['limit must be an integer from 1 to 500']);
    expect(messages({ limit: '501' })).toEqual(['limit must be an integer from 1 to 500']);
    expect(messages({ cursor: 'a/b' })).toEqual(['cursor must be the nextCursor of an earlier answer']);
    expect(messages({ cursor: ['a', 'b'] })).toEqual(['cursor must be given once']);
    expect(messages({ updatedSince: '2026-11-20' })).toEqual([
      'updatedSince must be an ISO 8601 date-time with an offset',
    ]);
  });

  it('feed response: items with status (removed included), updatedAt, and a cursor always', () => {
    const item = {
      ...listItem,
      id: detail.id,
      category: 'documents',
      tags: ['pdf'],
      compatibility: ['claude-code'],
      verified: true,
      version: '1.2.0',
      status: 'removed',
      updatedAt: '2026-11-21T09:00:00.000Z',
    };
    const body = { data: [item], nextCursor: 'abc', limit: 100 };
    expect(FeedResponseSchema.parse(body)).toEqual(body);
    expect(FeedResponseSchema.safeParse({ data: [], limit: 100 }).success).toBe(false);
    expect(FeedResponseSchema.safeParse({ ...body, data: [{ ...item, status: 'gone' }] }).success).toBe(
      false,
    );
  });

  it('reads a detail of an older registry as having no downloads of recent days', () => {
    const older = without(
      without(without(detail, 'dailyDownloads'), 'downloadsLast7Days'),
      'downloadsLast30Days',
    );
    expect(PackageDetailSchema.parse(older)).toMatchObject({
      downloadsLast7Days: 0,
      downloadsLast30Days: 0,
      dailyDownloads: null,
    });
  });
});
