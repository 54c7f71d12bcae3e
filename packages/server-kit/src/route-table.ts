import type { IncomingMessage } from 'node:http';
import type { IRouter, RequestHandler } from 'express';
import type { z } from 'zod';
import { setRouteTemplate } from './metrics.js';

// An HTTP app's route table: each route declared once (method, path, schemas, cache policy, who may call
// it, its OpenAPI text), from which the app's Express routes are registered, its OpenAPI paths are
// generated, its requests are named in metrics and spans, and its tests iterate.

type JsonObject = Record<string, unknown>;

/** `all`: every method a path's other routes leave (a 405 answer); never documented as an operation. */
export type RouteMethod = 'get' | 'post' | 'put' | 'delete' | 'all';

/**
 * Who may call a route: anyone, a signed-in account, or the holder of a scope (today the proof of
 * control publishing takes).
 */
export type RouteAccess = 'anonymous' | 'account' | 'scope';

/** A contracts schema under the name the OpenAPI document's components give it. */
export interface NamedSchema {
  name: string;
  schema: z.ZodType;
  /** `input` for request bodies (defaults make fields optional); `output` otherwise. */
  io?: 'input' | 'output';
}

export interface RouteResponse {
  description: string;
  /** A JSON body of this schema, or of any of these. */
  json?: NamedSchema | readonly NamedSchema[];
  /** A body of another kind, as OpenAPI writes `content`. */
  content?: JsonObject;
  headers?: JsonObject;
}

export interface RouteBody {
  /**
   * `json`: parsed by the app's JSON parser before the route's handlers; `raw`: the handlers read the
   * bytes themselves (a signature over them).
   */
  parser: 'json' | 'raw';
  required: boolean;
  json?: NamedSchema;
  content?: JsonObject;
}

/** A parameter's description and schema when its query schema's own are not what clients should read. */
export interface ParameterDoc {
  description?: string;
  schema?: JsonObject;
}

export interface RouteSpec<Id extends string = string, Cache extends string = string> {
  /** Handlers and tests find the route by it. */
  id: Id;
  method: RouteMethod;
  /**
   * The Express template (`:param`, `*rest`). Requests are labelled with it in metrics and spans are
   * named by it, so a label never holds a package name.
   */
  path: string;
  /** The app's own rule for how long the answer may be kept (its cache-policy names). */
  cache: Cache;
  access: RouteAccess;
  /** Answered by the app's listener before Express (no Express handler is registered for it). */
  beforeExpress?: boolean;
  /** Left out of the OpenAPI document (an answer to a malformed path, not an operation). */
  undocumented?: boolean;
  summary: string;
  description?: string;
  params?: z.ZodObject;
  /** Query schemas, their parameters in order. */
  query?: readonly z.ZodType[];
  queryDocs?: Readonly<Record<string, ParameterDoc>>;
  headers?: z.ZodObject;
  body?: RouteBody;
  responses: Readonly<Record<number, RouteResponse>>;
}

/** The path parameters a route's handlers read: its params schema's, else plain strings. */
export type RouteParams<R extends RouteSpec> = R extends { params: z.ZodType<infer P> }
  ? P
  : Record<string, string>;

/** The handler (or handlers, in order) of one route. */
export type RouteHandler<R extends RouteSpec> =
  | RequestHandler<RouteParams<R>>
  | readonly RequestHandler<RouteParams<R>>[];

/** The handlers of every route the table serves through Express (a route left out fails typecheck). */
export type RouteHandlers<R extends RouteSpec> = {
  [Id in Exclude<R, { beforeExpress: true }>['id']]: RouteHandler<Extract<R, { id: Id }>>;
};

/**
 * Registers the table's routes on `router` in table order, each named for metrics and spans by its
 * template, JSON bodies parsed by `jsonParser` for the routes that take one.
 */
export function registerRoutes<R extends RouteSpec>(
  router: IRouter,
  routes: readonly R[],
  handlers: RouteHandlers<R>,
  options: { jsonParser: readonly RequestHandler[] },
): void {
  const byId = handlers as unknown as Record<string, RequestHandler | readonly RequestHandler[]>;
  for (const route of routes) {
    if (route.beforeExpress) continue;
    const handler = byId[route.id];
    if (!handler) throw new Error(`no handler for route ${route.id}`);
    const name: RequestHandler = (req, _res, next) => {
      setRouteTemplate(req, route.path);
      next();
    };
    const parsers = route.body?.parser === 'json' ? options.jsonParser : [];
    router[route.method](route.path, name, ...parsers, ...(Array.isArray(handler) ? handler : [handler]));
  }
}

/** Names a request answered outside Express by the route it matched. */
export function nameRequest(req: IncomingMessage, route: RouteSpec): void {
  setRouteTemplate(req, route.path);
}

/** `/a/:b/*c` as OpenAPI writes it: `/a/{b}/{c}`. */
export function openApiPath(path: string): string {
  return path.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');
}

export interface OpenApiOptions<R extends RouteSpec> {
  /** The one JSON Schema helper of the contracts (draft 2020-12). */
  toJsonSchema: (schema: z.ZodType, io?: 'input' | 'output') => JsonObject;
  /** The security requirements of a route (from its access), if any. */
  securityOf?: (route: R) => readonly JsonObject[] | undefined;
}

/** The OpenAPI `paths` of the documented routes, and the component schemas they refer to. */
export function openApiPaths<R extends RouteSpec>(
  routes: readonly R[],
  options: OpenApiOptions<R>,
): { paths: Record<string, Record<string, JsonObject>>; schemas: Record<string, JsonObject> } {
  const { toJsonSchema } = options;
  const schemas: Record<string, JsonObject> = {};
  const ref = (named: NamedSchema) => {
    if (!(named.name in schemas)) {
      const { $schema: _dialect, ...schema } = toJsonSchema(named.schema, named.io ?? 'output');
      schemas[named.name] = schema;
    }
    return { $ref: `#/components/schemas/${named.name}` };
  };
  const jsonContent = (json: NamedSchema | readonly NamedSchema[]) => ({
    'application/json': {
      schema: isNamedList(json) ? { oneOf: json.map(ref) } : ref(json),
    },
  });
  const parameters = (schema: z.ZodType, where: 'path' | 'query' | 'header'): JsonObject[] => {
    const input = toJsonSchema(schema, 'input') as {
      properties?: Record<string, JsonObject>;
      required?: string[];
    };
    return Object.entries(input.properties ?? {}).map(([name, property]) => {
      const { description, ...propertySchema } = property;
      return {
        name,
        in: where,
        required: where === 'path' || (input.required?.includes(name) ?? false),
        ...(typeof description === 'string' ? { description } : {}),
        schema: propertySchema,
      };
    });
  };

  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of routes) {
    if (route.undocumented || route.method === 'all') continue;
    const query = (route.query ?? []).flatMap((schema) => parameters(schema, 'query'));
    const all = [
      ...(route.params ? parameters(route.params, 'path') : []),
      ...query.map((p) => ({ ...p, ...route.queryDocs?.[p.name as string] })),
      ...(route.headers ? parameters(route.headers, 'header') : []),
    ];
    const security = options.securityOf?.(route);
    const responses = Object.fromEntries(
      Object.entries(route.responses).map(([status, response]) => [
        status,
        {
          description: response.description,
          ...(response.headers ? { headers: response.headers } : {}),
          ...(response.json ? { content: jsonContent(response.json) } : {}),
          ...(response.content ? { content: response.content } : {}),
        },
      ]),
    );
    const body = route.body;
    const operation: JsonObject = {
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      ...(all.length > 0 ? { parameters: all } : {}),
      ...(security ? { security } : {}),
      // A body only parsed (so a malformed one is refused) is not documented as taken.
      ...(body && (body.json || body.content)
        ? {
            requestBody: {
              required: body.required,
              content: body.json ? jsonContent(body.json) : body.content,
            },
          }
        : {}),
      responses,
    };
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method] = operation;
  }
  return { paths, schemas };
}

function isNamedList(json: NamedSchema | readonly NamedSchema[]): json is readonly NamedSchema[] {
  return Array.isArray(json);
}
