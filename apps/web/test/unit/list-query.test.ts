import { describe, expect, it } from 'vitest';
import {
  filterParams,
  hasFilters,
  listStateToSearch,
  parseFilters,
  parseListState,
  totalPages,
} from '../../src/list-query.js';

// registry-api.md: GET /api/packages page (min 1), sort name|stars|indexed (and issue 20's downloads,
// trending), order asc|desc, and the filters with the API's own parameter names.
describe('list state in the URL', () => {
  it('defaults to page 1 by name ascending, the API defaults, without filters', () => {
    expect(parseListState('')).toEqual({ page: 1, sort: 'name', order: 'asc', filters: {} });
  });

  it('reads page, sort and order', () => {
    expect(parseListState('?page=3&sort=indexed&order=asc')).toEqual({
      page: 3,
      sort: 'indexed',
      order: 'asc',
      filters: {},
    });
  });

  it('gives stars, downloads, trending and indexed their natural order (highest / newest first)', () => {
    for (const sort of ['stars', 'indexed', 'downloads', 'trending']) {
      expect(parseListState(`?sort=${sort}`).order).toBe('desc');
    }
  });

  it('falls back for values outside the rules instead of sending the API a 400', () => {
    expect(parseListState('?page=0&sort=popular&order=up')).toEqual({
      page: 1,
      sort: 'name',
      order: 'asc',
      filters: {},
    });
    expect(parseListState('?page=-2').page).toBe(1);
    expect(parseListState('?page=2.5').page).toBe(1);
    expect(parseListState('?page=abc').page).toBe(1);
  });

  it('round-trips and leaves defaults out of the URL', () => {
    expect(listStateToSearch({ page: 1, sort: 'name', order: 'asc', filters: {} })).toBe('');
    expect(listStateToSearch({ page: 2, sort: 'stars', order: 'desc', filters: {} })).toBe(
      '?sort=stars&page=2',
    );
    expect(listStateToSearch({ page: 1, sort: 'stars', order: 'asc', filters: {} })).toBe(
      '?sort=stars&order=asc',
    );
    for (const state of [
      { page: 4, sort: 'indexed', order: 'asc', filters: {} },
      { page: 1, sort: 'name', order: 'desc', filters: { kind: 'app', verified: true } },
      { page: 2, sort: 'trending', order: 'desc', filters: { tag: 'pdf', risk: 'low', owner: 'acme' } },
    ] as const) {
      expect(parseListState(listStateToSearch(state))).toEqual(state);
    }
  });

  it('keeps the search typed (q) first when given', () => {
    expect(
      listStateToSearch({ page: 1, sort: 'name', order: 'asc', filters: { kind: 'skill' } }, 'pdf tools'),
    ).toBe('?q=pdf+tools&kind=skill');
  });

  it('counts pages with at least one', () => {
    expect(totalPages(0)).toBe(1);
    expect(totalPages(20)).toBe(1);
    expect(totalPages(21)).toBe(2);
    expect(totalPages(44, 20)).toBe(3);
  });
});

describe('filters in the URL (issue 20)', () => {
  it('reads every filter by its API name, lowercasing free text', () => {
    expect(
      parseFilters(
        '?kind=app&category=Data&tag=PDF&agent=claude-code&license=MIT&verified=true&status=active&risk=low&owner=Acme',
      ),
    ).toEqual({
      kind: 'app',
      category: 'data',
      tag: 'pdf',
      agent: 'claude-code',
      license: 'mit',
      verified: true,
      status: 'active',
      risk: 'low',
      owner: 'acme',
    });
    expect(parseFilters('?verified=false').verified).toBe(false);
  });

  it('leaves out values the API would refuse', () => {
    expect(
      parseFilters(
        `?kind=plugin&verified=yes&status=delisted&risk=critical&owner=no%20such&tag=${'t'.repeat(65)}&category=`,
      ),
    ).toEqual({});
  });

  it('writes them in the API order, and tells whether any is set', () => {
    expect(filterParams({ owner: 'acme', kind: 'skill', verified: false })).toEqual([
      ['kind', 'skill'],
      ['verified', 'false'],
      ['owner', 'acme'],
    ]);
    expect(hasFilters({})).toBe(false);
    expect(hasFilters({ risk: 'none' })).toBe(true);
  });
});
