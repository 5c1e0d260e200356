import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { CORS_EXPOSED_HEADERS } from '../../lambdas/http/cors';
import { instanceName } from './instance';

/** The stage {@link Firewall} protects, its token endpoint, and the per-address rate limits. */
export interface FirewallProps {
  /** The REST API stage the web ACL protects. */
  readonly stage: apigateway.Stage;
  /**
   * The stage's name as a literal, since `stage.stageName` is a reference; the default
   * execute-api endpoint puts it in front of every path.
   */
  readonly stageName: string;
  /** Path of the token endpoint below the host, e.g. `/api/v1/oauth/token`. */
  readonly tokenEndpointPath: string;
  /** Token endpoint requests per client address per 5 minutes. */
  readonly tokenRateLimit: number;
  /** Requests to any path per client address per 5 minutes. */
  readonly generalRateLimit: number;
  /** The origins whose pages may call the API (lambdas/http/cors.ts). */
  readonly corsAllowedOrigins: readonly string[];
}

/** WAF evaluates rate-based rules over this window; the limits are per window. */
const RATE_WINDOW_SECONDS = 300;

/**
 * Seconds a blocked client is told to wait. WAF lifts the block once the address's rate
 * over the window drops below the limit, so there is no exact answer; a minute is a fair
 * first backoff.
 */
const RETRY_AFTER_SECONDS = '60';

const OAUTH_RATE_LIMITED_BODY = 'oauth-rate-limited';
const RATE_LIMITED_BODY = 'rate-limited';

/**
 * The regional WAF web ACL in front of the API stage: per-address rate limits, a tight
 * one on the token endpoint (each exchange costs an issuer key fetch and a KMS Sign) and
 * a loose one on everything. Limits key on the address WAF sees on the connection, never
 * on a client-supplied header such as X-Forwarded-For.
 *
 * No managed rule groups: chat completion bodies are arbitrary prompts (code, HTML, file
 * paths), which body-inspecting rule sets such as AWSManagedRulesCommonRuleSet block as
 * XSS or path traversal, and its 8 KB body limit is below the 32 KB token requests may reach
 * (docs/reference.md#limits).
 */
export class Firewall extends Construct {
  readonly webAcl: wafv2.CfnWebACL;
  /**
   * The web ACL's metric name: the `WebACL` dimension of its CloudWatch metrics. Named after
   * the instance, so two instances in one account and region never share a metric.
   */
  readonly metricName: string;

  constructor(scope: Construct, id: string, props: FirewallProps) {
    super(scope, id);
    this.metricName = `${instanceName(this)}-web-acl`;
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(this.metricName),
      customResponseBodies: {
        // docs/reference.md#oauth-errors: 429 with `invalid_request` in the RFC 6749 §5.2 shape.
        [OAUTH_RATE_LIMITED_BODY]: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({
            error: 'invalid_request',
            error_description: 'Too many token requests from this address; retry later',
          }),
        },
        // common error shape (docs/reference.md#the-common-error-body).
        [RATE_LIMITED_BODY]: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({ error: { code: 429, message: 'Rate limit exceeded; retry later' } }),
        },
      },
      rules: [
        {
          name: 'TokenEndpointRateLimit',
          priority: 0,
          action: { block: { customResponse: tooManyRequests(OAUTH_RATE_LIMITED_BODY, true, props.corsAllowedOrigins) } },
          statement: {
            rateBasedStatement: {
              limit: props.tokenRateLimit,
              evaluationWindowSec: RATE_WINDOW_SECONDS,
              aggregateKeyType: 'IP',
              scopeDownStatement: {
                // The path as called through a custom domain, and through the default
                // execute-api endpoint, where the stage name comes first.
                orStatement: {
                  statements: [
                    pathStartsWith(props.tokenEndpointPath),
                    pathStartsWith(`/${props.stageName}${props.tokenEndpointPath}`),
                  ],
                },
              },
            },
          },
          visibilityConfig: visibility('token-endpoint-rate-limit'),
        },
        {
          name: 'GeneralRateLimit',
          priority: 1,
          action: { block: { customResponse: tooManyRequests(RATE_LIMITED_BODY, false, props.corsAllowedOrigins) } },
          statement: {
            rateBasedStatement: {
              limit: props.generalRateLimit,
              evaluationWindowSec: RATE_WINDOW_SECONDS,
              aggregateKeyType: 'IP',
            },
          },
          visibilityConfig: visibility('general-rate-limit'),
        },
      ],
    });

    const association = new wafv2.CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    // The stage ARN is assembled from names, not read from the stage resource, so
    // CloudFormation would not otherwise wait for the stage to exist.
    association.node.addDependency(props.stage);
  }

  get webAclArn(): string {
    return this.webAcl.attrArn;
  }
}

function pathStartsWith(prefix: string): wafv2.CfnWebACL.StatementProperty {
  return {
    byteMatchStatement: {
      fieldToMatch: { uriPath: {} },
      positionalConstraint: 'STARTS_WITH',
      searchString: prefix,
      // Match the path API Gateway routes on, not its encoded or `//`-padded spelling.
      textTransformations: [
        { priority: 0, type: 'URL_DECODE' },
        { priority: 1, type: 'NORMALIZE_PATH' },
      ],
    },
  };
}

/**
 * A page may read a block and its `Retry-After` (lambdas/http/cors.ts). WAF's headers are
 * fixed: they name the one allowed origin, or any; with several, WAF cannot choose one and
 * the page sees a network error instead.
 */
function tooManyRequests(bodyKey: string, noStore: boolean, origins: readonly string[]): wafv2.CfnWebACL.CustomResponseProperty {
  const headers = [{ name: 'Retry-After', value: RETRY_AFTER_SECONDS }];
  // RFC 6749 §5.1: token endpoint responses are not cached.
  if (noStore) headers.push({ name: 'Cache-Control', value: 'no-store' });
  if (origins.length === 1) {
    headers.push({ name: 'Access-Control-Allow-Origin', value: origins[0]! });
    headers.push({ name: 'Access-Control-Expose-Headers', value: CORS_EXPOSED_HEADERS.join(', ') });
  }
  return { responseCode: 429, customResponseBodyKey: bodyKey, responseHeaders: headers };
}

function visibility(metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty {
  return { cloudWatchMetricsEnabled: true, sampledRequestsEnabled: true, metricName };
}
