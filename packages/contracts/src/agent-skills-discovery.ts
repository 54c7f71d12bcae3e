import { z } from 'zod';

// The Agent Skills discovery index (Cloudflare's "Agent Skills Discovery via Well-Known URIs" RFC,
// v0.2.0; agentskills.io, "Well-Known URI"): what the registry serves at
// `/.well-known/agent-skills/index.json` (and per scope and package, docs/discovery.md), and what
// `pkgreg install <site>` reads from any site.

/** The `$schema` of a v0.2.0 index: an opaque identifier clients match, not a document they fetch. */
export const AGENT_SKILLS_INDEX_SCHEMA = 'https://schemas.agentskills.io/discovery/0.2.0/schema.json';

/** Where a site's index is, below the site's URL (RFC 8615 well-known suffix `agent-skills`). */
export const AGENT_SKILLS_INDEX_PATH = '/.well-known/agent-skills/index.json';

/**
 * A skill's name as the RFC (and agentskills.io) allow it: 1-64 lowercase letters, digits and hyphens,
 * not starting or ending with a hyphen, no two hyphens in a row.
 */
export const AGENT_SKILL_NAME_PATTERN = /^(?!-)(?!.*--)[a-z0-9-]{1,64}(?<!-)$/;

/** The longest `description` an entry may carry (the Agent Skills spec's limit, in UTF-16 units). */
export const AGENT_SKILL_DESCRIPTION_MAX = 1024;

/** `sha256:` and 64 lowercase hex digits: the digest of an artifact's raw bytes. */
export const AGENT_SKILL_DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

export const AgentSkillEntrySchema = z.object({
  /** The skill's name: the folder it is installed as. */
  name: z.string().regex(AGENT_SKILL_NAME_PATTERN),
  /** `skill-md`: the artifact is the SKILL.md alone; `archive`: a .tar.gz (or .zip) of the whole folder. */
  type: z.enum(['skill-md', 'archive']),
  /** What the skill does and when to use it (the SKILL.md's `description`, at most 1024 characters). */
  description: z.string().min(1).max(AGENT_SKILL_DESCRIPTION_MAX),
  /** The artifact, resolved against the index's URL (RFC 3986): absolute, path-absolute or relative. */
  url: z.string().min(1),
  /** `sha256:<hex>` of the artifact's bytes: a client must refuse anything else. */
  digest: z.string().regex(AGENT_SKILL_DIGEST_PATTERN),
});
export type AgentSkillEntry = z.infer<typeof AgentSkillEntrySchema>;

/** GET /.well-known/agent-skills/index.json (and a scope's, a package's): the skills a site publishes. */
export const AgentSkillsIndexSchema = z.object({
  $schema: z.literal(AGENT_SKILLS_INDEX_SCHEMA),
  /** One entry per skill; names are unique within one index. */
  skills: z.array(AgentSkillEntrySchema),
});
export type AgentSkillsIndex = z.infer<typeof AgentSkillsIndexSchema>;

/**
 * An index as a client first reads it from a site it does not control: the `$schema` it claims and the
 * entries unparsed, so that one entry it cannot use (an unknown `type`, a bad name) is skipped rather
 * than failing the whole index, as the RFC asks.
 */
export const AgentSkillsIndexEnvelopeSchema = z.object({
  $schema: z.string().optional(),
  skills: z.array(z.unknown()),
});
export type AgentSkillsIndexEnvelope = z.infer<typeof AgentSkillsIndexEnvelopeSchema>;
