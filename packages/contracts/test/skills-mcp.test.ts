import { describe, expect, it } from 'vitest';
import {
  ERROR_WIRE_FORMS,
  RegistryGetArgsSchema,
  RegistrySearchArgsSchema,
  ResourcesListParamsSchema,
  ResourcesReadParamsSchema,
  SCOPES,
  SKILL_URI_TEMPLATES,
  SkillManifestSchema,
  toJsonSchema,
} from '../src/index.js';

describe('Skills over MCP (issue 20): resources params, registry tools, manifest', () => {
  it('pkgreg.registry.read is the scope of the catalog', () => {
    expect(SCOPES.registryRead).toBe('pkgreg.registry.read');
  });

  it('templates: the latest and an exact version, {+path} keeping its slashes', () => {
    expect(SKILL_URI_TEMPLATES).toEqual({
      file: 'skill://@{scope}/{name}/{+path}',
      fileAtVersion: 'skill://@{scope}/{name}@{version}/{+path}',
    });
  });

  it('resources params: an optional opaque cursor; a uri for read; unknown keys kept (MCP _meta)', () => {
    expect(ResourcesListParamsSchema.parse({})).toEqual({});
    expect(ResourcesListParamsSchema.parse({ cursor: 'abc', _meta: {} })).toEqual({
      cursor: 'abc',
      _meta: {},
    });
    expect(ResourcesListParamsSchema.safeParse({ cursor: '' }).success).toBe(false);
    expect(ResourcesReadParamsSchema.safeParse({}).success).toBe(false);
    expect(ResourcesReadParamsSchema.parse({ uri: 'skill://@a/b/SKILL.md' }).uri).toBe(
      'skill://@a/b/SKILL.md',
    );
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
