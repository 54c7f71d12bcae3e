import { toJsonSchema } from '@pkgreg/contracts';
import { openApiPaths } from '@pkgreg/server-kit';
import { PROOF_SECURITY } from '../routes/route-docs.js';
import { ROUTES } from '../routes/route-table.js';

// The OpenAPI 3.1 document, generated from the route table (routes/route-table.ts): paths, parameters
// and bodies from the contracts' schemas, security from each route's access.

export function buildOpenApiDocument(): Record<string, unknown> {
  const { paths, schemas } = openApiPaths(ROUTES, {
    toJsonSchema,
    // The next issue gives `account` its own scheme; today every protected route takes a proof.
    securityOf: (route) => (route.access === 'anonymous' ? undefined : PROOF_SECURITY),
  });
  return {
    openapi: '3.1.0',
    info: {
      title: 'pkgreg registry API',
      version: '1.0.0',
      description:
        'Listing with filters and popularity sorts, a sync feed for mirrors, detail, raw SKILL.md, source redirect, filtered search, download tracking with downloads per day, immutable versions with their files and archives, dependencies and dependants, and publishing with a proof of control (OIDC or a code-host token), webhooks, deprecation and yanks.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths,
    components: {
      schemas,
      securitySchemes: {
        oidcToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'A GitHub Actions OIDC token requested for the registry URL as audience (trusted publishing)',
        },
        codeHostToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A GitHub user token with push or admin access to the repository; used for one permission check, never stored',
        },
      },
    },
  };
}
