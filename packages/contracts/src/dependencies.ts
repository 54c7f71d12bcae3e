import { z } from 'zod';

// Skill dependencies (docs/versions.md, Dependencies): what a version's SKILL.md declares in
// `metadata.dependencies`, as `@scope/name` with an optional semver range.

/** A dependency as a version declares it: facts of that version, never changing. */
export const VersionDependencySchema = z.object({
  /** The package needed, as `@scope/name`. */
  name: z.string(),
  /** The declared semver range (node-semver, pre-releases included); null asks for the latest version. */
  range: z.string().nullable(),
});
export type VersionDependency = z.infer<typeof VersionDependencySchema>;

/** A dependency of a package's latest version, with whether it resolves now. */
export const PackageDependencySchema = VersionDependencySchema.extend({
  /**
   * The registry holds the package (not delisted) and a version the range allows that its owner has
   * not yanked (for a null range: any version not yanked). Read live, unlike the version's warnings.
   */
  resolves: z.boolean(),
});
export type PackageDependency = z.infer<typeof PackageDependencySchema>;
