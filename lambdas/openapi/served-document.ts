import { API_BASE_PATH } from '../base-paths';

/** How the compiled document names its server: the host root, which the served copy replaces. */
const SERVERS_PLACEHOLDER = '"servers":[{"url":"/"}]';

/**
 * The OpenAPI document as one request should read it: its `servers` name the base URL the
 * request came through (`gatewayBase`: the stage URL on execute-api, the custom domain, a
 * regional hostname), then the configured API base URL's host when that differs, so generated
 * clients and Swagger UI call the API where its paths really are: below that base.
 */
export function servedOpenApiDocument(body: string): (gatewayBase: string | undefined, apiBaseUrl: string) => string {
  const at = body.indexOf(SERVERS_PLACEHOLDER);
  if (at === -1 || body.indexOf(SERVERS_PLACEHOLDER, at + 1) !== -1) throw new Error('The compiled OpenAPI document does not name its server once as the host root');
  const [before, after] = [body.slice(0, at), body.slice(at + SERVERS_PLACEHOLDER.length)];
  return (gatewayBase, apiBaseUrl) => {
    const urls = [...new Set([gatewayBase, configuredServerUrl(apiBaseUrl)].filter((url): url is string => url !== undefined))];
    return `${before}"servers":${JSON.stringify(urls.map((url) => ({ url })))}${after}`;
  };
}

/** The configured API base URL less its `/api/v1`: the host the document's absolute paths sit below. */
function configuredServerUrl(apiBaseUrl: string): string | undefined {
  const base = apiBaseUrl.replace(/\/+$/, '');
  return base.endsWith(API_BASE_PATH) ? base.slice(0, base.length - API_BASE_PATH.length) || undefined : undefined;
}
