import { API_BASE_PATH, type PAGES_BASE_PATH, type WELL_KNOWN_BASE_PATH } from './base-paths';

/** A JSON Schema (or any JSON object) of the OpenAPI document. */
export type Json = Record<string, any>;

/**
 * What a route declaration says (lambdas/routes.ts collects the declarations). A module of its
 * own, so each concern's `routes.ts` declares its routes without importing the registry that
 * imports it.
 */

/** The Lambda function a route is served by: one per concern (docs/architecture.md, "Functions, routes and grants"). */
export type FunctionId = 'catalog' | 'tokenExchange' | 'jwks' | 'management' | 'inference' | 'settingsPage';

/** The methods a route may declare; HEAD is served by the GET route ({@link routeMethod}). */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who may call a route (docs/reference.md#scopes-and-access). */
export type Access =
  /** No bearer credential involved: the exchange, its keys, the OpenAPI document, the pages. */
  | 'public'
  /** Any valid credential, whatever its scope: the catalog, and a key's own metadata. */
  | 'any'
  /**
   * The public catalog (the whole list, its count, one model, the providers): any valid
   * credential, or none at all where the deployment opens it (the `publicCatalog` setting).
   * A credential that is sent is checked either way.
   */
  | 'catalog'
  /** Workspace and personal keys, and access tokens of scope `inference`. */
  | 'inference'
  /** Management keys and access tokens of scope `management`, read-only ones included. */
  | 'management-read'
  /** Management keys and access tokens of scope `management` that may write. */
  | 'management-write';

/** A query parameter a route reads, as the OpenAPI document describes it and the request validator checks it. */
export interface QueryParameter {
  readonly name: string;
  readonly schema: Json;
  readonly description: string;
  /** A request without it is a 400. @default false */
  readonly required?: boolean;
}

/** The success answer of a route. */
export interface SuccessResponse {
  readonly status: number;
  /** The JSON body's schema. */
  readonly schema?: Json;
  /** Bodies of other media types, by type (the settings page, the event stream). */
  readonly media?: Readonly<Record<string, Json>>;
  /** Answered with `Cache-Control: public, max-age=300`. */
  readonly cacheable?: boolean;
}

/** One route: its path and method, the function that serves it, who may call it, and its request and answer schemas. */
export interface RouteDefinition {
  /** Unique; the OpenAPI operation id, and the key a function binds its handler to. */
  readonly operationId: string;
  readonly method: HttpMethod;
  /** Resource path below {@link RouteDefinition.base}, with `{name}` path parameters. */
  readonly path: string;
  /**
   * What the path is below: the API ({@link API_BASE_PATH}) unless the route serves a page, or a
   * discovery document at the host root's well-known location ({@link WELL_KNOWN_BASE_PATH}).
   * @default API_BASE_PATH
   */
  readonly base?: typeof API_BASE_PATH | typeof PAGES_BASE_PATH | typeof WELL_KNOWN_BASE_PATH;
  readonly function: FunctionId;
  readonly access: Access;
  readonly summary: string;
  /** Path parameters of another shape than the one their name has elsewhere (`{id}`: a UUID), by name. */
  readonly pathParameters?: Readonly<Record<string, Json>>;
  /** The query parameters the route reads; others are ignored (caches and proxies add some). */
  readonly query?: readonly QueryParameter[];
  /** The schema of the JSON request body. */
  readonly body?: Json;
  /** The schema of an `application/x-www-form-urlencoded` request body (the token endpoint). */
  readonly form?: Json;
  readonly ok: SuccessResponse;
  /** Refusals beyond the ones every route of its access can give (401, 403, 413, 429, 500). */
  readonly errors?: readonly number[];
  /** The component schema of its refusals, for a route that speaks another API's errors. @default the common error body */
  readonly errorSchema?: string;
  /**
   * A header that may carry the API key in place of `Authorization: Bearer` (`x-api-key`, as
   * Anthropic's clients send it); both at once must name the same key.
   */
  readonly keyHeader?: 'x-api-key';
  /**
   * The route verifies subject tokens as the exchange does, so each request counts against the
   * token endpoint's per-address budget before its body is read (docs/reference.md#oauth-errors, docs/reference.md#limits): 429 past it.
   */
  readonly verifiesSubjectTokens?: boolean;
}

/** The resource path of a route as API Gateway and the local server know it. */
export function resourcePath(route: Pick<RouteDefinition, 'path' | 'base'>): string {
  return `${route.base ?? API_BASE_PATH}${route.path}`;
}

/**
 * The route method a request method is served by: HEAD by its GET route (RFC 9110 §9.3.2, GET
 * without a body), every other method by its own. API Gateway sends HEAD where it sends GET
 * (lib/constructs/api.ts: a HEAD method, or one ANY) and the functions dispatch with this.
 */
export function routeMethod(method: string): string {
  return method === 'HEAD' ? 'GET' : method;
}
