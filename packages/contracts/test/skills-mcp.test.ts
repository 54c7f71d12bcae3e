import { describe, expect, it } from 'vitest';
import {
  ERROR_WIRE_FORMS,
  includesHighRisk,
  RegistryGetArgsSchema,
  RegistrySearchArgsSchema,
  RejectError,
  ResourcesDirectoryReadParamsSchema,
  ResourcesListParamsSchema,
  ResourcesReadParamsSchema,
  SCOPES,
  SKILL_URI_TEMPLATES,
  SKILLS_HIGH_RISK_HEADER,
  SKILLS_META,
  SkillEntrySchema,
  SkillManifestSchema,
  SkillsGetParamsSchema,
  SkillsListParamsSchema,
  toJsonSchema,
} from '../src/index.js';

describe('Skills over MCP (issue 20): resources params, registry tools, manifest', () => {
  it('pkgreg.registry.read is the scope of the catalog', () => {
    expect(SCOPES.registryRead).toBe('pkgreg.registry.read');
  });

  it('templates: the latest and an exact version, the scope the authority, the name the last folder', () => {
    expect(SKILL_URI_TEMPLATES).toEqual({
      file: 'skill://{scope}/{name}/{+path}',
      fileAtVersion: 'skill://{scope}/{version}/{name}/{+path}',
    });
  });

  it('skills extension params: the opt-in to high risk is a boolean in _meta, MCP keys kept beside it', () => {
    const opted = { 'io.modelcontextprotocol.skills/includeHighRisk': true, 'io.modelcontextprotocol/x': 1 };
    expect(SKILLS_META.includeHighRisk).toBe('io.modelcontextprotocol.skills/includeHighRisk');
    const list = SkillsListParamsSchema.parse({ cursor: 'c', _meta: opted });
    expect(list._meta).toEqual(opted);
    expect(includesHighRisk(list)).toBe(true);
    expect(includesHighRisk(SkillsListParamsSchema.parse({}))).toBe(false);
    expect(
      SkillsListParamsSchema.safeParse({ _meta: { [SKILLS_META.includeHighRisk]: 'yes' } }).success,
    ).toBe(false);
    expect(includesHighRisk(SkillsGetParamsSchema.parse({ uri: 'skill://a/b/SKILL.md', _meta: opted }))).toBe(
      true,
    );
    expect(SkillsGetParamsSchema.safeParse({}).success).toBe(false);
    expect(ResourcesDirectoryReadParamsSchema.parse({ uri: 'skill://a/b', cursor: 'c' })).toEqual({
      uri: 'skill://a/b',
      cursor: 'c',
    });
    expect(ResourcesDirectoryReadParamsSchema.safeParse({ uri: 'skill://a/b', cursor: '' }).success).toBe(
      false,
    );
  });

  it('the opt-in header: true opts in whatever _meta says, false leaves it to _meta, anything else is refused', () => {
    const plain = SkillsListParamsSchema.parse({});
    const opted = SkillsListParamsSchema.parse({ _meta: { [SKILLS_META.includeHighRisk]: true } });
    expect(SKILLS_HIGH_RISK_HEADER).toBe('pkgreg-include-high-risk');
    expect(includesHighRisk(plain, 'true')).toBe(true);
    expect(includesHighRisk(plain, 'false')).toBe(false);
    expect(includesHighRisk(opted, 'false')).toBe(true);
    for (const value of ['yes', 'TRUE', '1', '', ['true', 'true']]) {
      expect(() => includesHighRisk(plain, value)).toThrow(RejectError);
    }
  });

  it('a skill entry: every file with its sha256: digest (never "dynamic"); pkgreg facts in _meta', () => {
    const entry = {
      uri: 'skill://acme/pdf/SKILL.md',
      frontmatter: { name: 'pdf', description: 'PDFs' },
      resources: [{ uri: 'skill://acme/pdf/SKILL.md', digest: `sha256:${'a'.repeat(64)}`, size: 3 }],
      _meta: {
        [SKILLS_META.version]: '1.0.0',
        [SKILLS_META.risk]: null,
        [SKILLS_META.verified]: false,
        [SKILLS_META.signatures]: [],
        [SKILLS_META.digest]: `sha256:${'b'.repeat(64)}`,
      },
    };
    expect(SkillEntrySchema.parse(entry)).toEqual(entry);
    expect(SkillEntrySchema.safeParse({ ...entry, resources: 'dynamic' }).success).toBe(false);
    const hex = { ...entry, resources: [{ ...entry.resources[0], digest: 'a'.repeat(64) }] };
    expect(SkillEntrySchema.safeParse(hex).success).toBe(false);
  });

  it('resources params: an optional opaque cursor; a uri for read; unknown keys kept (MCP _meta)', () => {
    expect(ResourcesListParamsSchema.parse({})).toEqual({});
    expect(ResourcesListParamsSchema.parse({ cursor: 'abc', _meta: {} })).toEqual({
      cursor: 'abc',
      _meta: {},
    });
    expect(ResourcesListParamsSchema.safeParse({ cursor: '' }).success).toBe(false);
    expect(ResourcesReadParamsSchema.safeParse({}).success).toBe(false);
    expect(ResourcesReadParamsSchema.parse({ uri: 'skill://a/b/SKILL.md' }).uri).toBe('skill://a/b/SKILL.md');
  });

  it('search takes what GET /api/search takes: q, at most 256 characters, nothing else', () => {
    expect(RegistrySearchArgsSchema.parse({ q: 'pdf' })).toEqual({ q: 'pdf' });
    expect(RegistrySearchArgsSchema.safeParse({ q: 'x'.repeat(257) }).success).toBe(false);
    expect(RegistrySearchArgsSchema.safeParse({ q: 'pdf', kind: 'skill' }).success).toBe(false);
    expect(toJsonSchema(RegistrySearchArgsSchema, 'input')).toMatchObject({ required: ['q'] });
  });

  it.each([
    ['@acme/pdf-tools', true],
    ['%40acme/pdf-tools', true],
    ['acme/pdf-tools', false],
    ['@Acme/pdf-tools', false],
    ['@acme/pdf--tools', false],
    ['@acme/pdf-tools/extra', false],
  ])('get: package %s valid = %s', (value, ok) => {
    expect(RegistryGetArgsSchema.safeParse({ package: value }).success).toBe(ok);
  });

  it('a manifest lists every file with path, size, sha256 and the interest group hash form', () => {
    const sha = 'a'.repeat(64);
    const manifest = {
      skill: '@acme/pdf-tools',
      version: '1.0.0',
      digest: `sha256:${'b'.repeat(64)}`,
      integrity: `sha512-${'c'.repeat(86)}==`,
      signatures: [{ keyid: 'SHA256:key', sig: 'c2ln' }],
      risk: 'low',
      files: [{ path: 'SKILL.md', size: 10, sha256: sha, hash: `sha256:${sha}`, linkTarget: null }],
    };
    expect(SkillManifestSchema.parse(manifest)).toEqual(manifest);
    const bad = { ...manifest, files: [{ ...manifest.files[0], sha256: 'xyz' }] };
    expect(SkillManifestSchema.safeParse(bad).success).toBe(false);
    // What the registry's signatures cover travels with them (docs/provenance.md).
    const { integrity: _, ...unsignable } = manifest;
    expect(SkillManifestSchema.safeParse(unsignable).success).toBe(false);
  });

  it('resource_not_found is -32602 (SEP-2164), registry_unavailable a retryable 503', () => {
    expect(ERROR_WIRE_FORMS.resource_not_found).toMatchObject({ code: -32602, httpStatus: 200 });
    expect(ERROR_WIRE_FORMS.registry_unavailable).toMatchObject({ code: -32015, httpStatus: 503 });
  });
});
