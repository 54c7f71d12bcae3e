import { describe, expect, it } from 'vitest';
import { MAX_DEPENDENCIES, parseDependencies } from '../src/index.js';

// docs/versions.md, Dependencies: what `metadata.dependencies` declares, and the warnings for what
// cannot be read.

const self = { scope: 'acme', name: 'report' };

describe('parseDependencies', () => {
  it('reads a comma-separated list of @scope/name with optional semver ranges, in order', () => {
    expect(
      parseDependencies('@anthropics/pdf@^1.2, @acme/csv , @acme/xlsx@>=1.0.0 <2, @acme/docx@latest,', self),
    ).toEqual({
      dependencies: [
        { scope: 'anthropics', name: 'pdf', range: '^1.2' },
        { scope: 'acme', name: 'csv', range: null },
        { scope: 'acme', name: 'xlsx', range: '>=1.0.0 <2' },
        { scope: 'acme', name: 'docx', range: null },
      ],
      warnings: [],
    });
  });

  it('reads a YAML list of the same entries; nothing declared is nothing', () => {
    expect(parseDependencies(['@acme/csv@1.2.0', '@acme/pdf@~2'], self).dependencies).toEqual([
      { scope: 'acme', name: 'csv', range: '1.2.0' },
      { scope: 'acme', name: 'pdf', range: '~2' },
    ]);
    expect(parseDependencies(undefined, self)).toEqual({ dependencies: [], warnings: [] });
    expect(parseDependencies('', self)).toEqual({ dependencies: [], warnings: [] });
  });

  it('leaves out what cannot be read, each with a warning naming it', () => {
    const parsed = parseDependencies(
      'acme/csv, @Acme/CSV, @acme/pdf@not a range, @acme/xlsx@, @acme/report, @acme/csv, @acme/csv@^2, @a--b/c',
      self,
    );
    expect(parsed.dependencies).toEqual([{ scope: 'acme', name: 'csv', range: null }]);
    expect(parsed.warnings).toEqual([
      'dependency "acme/csv" is not @scope/name[@range] (lowercase a-z 0-9 -); it was ignored',
      'dependency "@Acme/CSV" is not @scope/name[@range] (lowercase a-z 0-9 -); it was ignored',
      'dependency @acme/pdf has an invalid semver range "not a range"; it was ignored',
      'dependency @acme/xlsx has an invalid semver range ""; it was ignored',
      'dependency @acme/report is the package itself; it was ignored',
      'dependency @acme/csv is listed more than once; the first is kept',
      'dependency "@a--b/c" is not @scope/name[@range] (lowercase a-z 0-9 -); it was ignored',
    ]);
  });

  it('warns about a value that is not a list, and about more than the limit', () => {
    expect(parseDependencies({ '@acme/csv': '^1' }, self)).toEqual({
      dependencies: [],
      warnings: [
        'metadata.dependencies must be a comma-separated list of @scope/name[@range]; it was ignored',
      ],
    });
    const many = Array.from({ length: MAX_DEPENDENCIES + 3 }, (_, i) => `@acme/dep-${i}`).join(', ');
    const parsed = parseDependencies(many, self);
    expect(parsed.dependencies).toHaveLength(MAX_DEPENDENCIES);
    expect(parsed.warnings).toEqual([`more than ${MAX_DEPENDENCIES} dependencies; the rest were ignored`]);
  });
});
