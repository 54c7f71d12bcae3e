// The contract schemas accounts-api.ts parses answers with, imported dynamically through this module so
// zod stays out of the first chunk (a dynamic import of the whole @pkgreg/contracts would pull it in:
// the first chunk imports a constant of that package).
export {
  AuditLogSchema,
  AuthOptionsSchema,
  ConnectedAppListSchema,
  CreatedTokenSchema,
  MeSchema,
  PackageSettingsSchema,
  SCOPE_DESCRIPTIONS,
  ScopeSettingsSchema,
  TokenListSchema,
} from '@pkgreg/contracts';
