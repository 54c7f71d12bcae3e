import { describe, expect, it } from 'vitest';
import { listStateToSearch, parseListState, totalPages } from '../../src/list-query.js';

// registry-api.md: GET /api/packages page (min 1), sort name|stars|indexed, order asc|desc.
describe('list state in the URL', () => {
  it('defaults to page 1 by name ascending, the API defaults', () => {
    expect(parseListState('')).toEqual({ page: 1, sort: 'name', order: 'asc' });
  });

  it('reads page, sort and order', () => {
    expect(parseListState('?page=3&sort=indexed&order=asc')).toEqual({
      page: 3,
      sort: 'indexed',
      order: 'asc',
    });
  });

  it('gives stars and indexed their natural order (highest / newest first) when order is absent', () => {
    expect(parseListState('?sort=stars').order).toBe('desc');
    expect(parseListState('?sort=indexed').order).toBe('desc');
  });

  it('falls back for values outside the rules instead of sending the API a 400', () => {
    expect(parseListState('?page=0&sort=downloads&order=up')).toEqual({
      page: 1,
      sort: 'name',
      order: 'asc',
    });
    expect(parseListState('?page=-2').page).toBe(1);
    expect(parseListState('?page=2.5').page).toBe(1);
    expect(parseListState('?page=abc').page).toBe(1);
  });

  it('round-trips and leaves defaults out of the URL', () => {
    expect(listStateToSearch({ page: 1, sort: 'name', order: 'asc' })).toBe('');
    expect(listStateToSearch({ page: 2, sort: 'stars', order: 'desc' })).toBe('?sort=stars&page=2');
    expect(listStateToSearch({ page: 1, sort: 'stars', order: 'asc' })).toBe('?sort=stars&order=asc');
    for (const state of [
      { page: 4, sort: 'indexed', order: 'asc' },
      { page: 1, sort: 'name', order: 'desc' },
    ] as const) {
      expect(parseListState(listStateToSearch(state))).toEqual(state);
    }
  });

  it('counts pages with at least one', () => {
    expect(totalPages(0)).toBe(1);
    expect(totalPages(20)).toBe(1);
    expect(totalPages(21)).toBe(2);
    expect(totalPages(44, 20)).toBe(3);
  });
});
