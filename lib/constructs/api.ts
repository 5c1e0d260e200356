import { Duration, RemovalPolicy, Size, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { instanceName } from './instance';
import { nagName } from './nag';
import { ANY_ORIGIN, CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS } from '../../lambdas/http/cors';
import { PAGES_BASE_PATH, ROUTES, STREAMING_FUNCTIONS, resourcePath, type FunctionId } from '../../lambdas/routes';

/** The functions behind the route table, the stage and its access logging, for {@link Api}. */
export interface ApiProps {
  /** The function that serves each function id of the route table. */
  readonly functions: Readonly<Record<FunctionId, lambda.IFunction>>;
  /** Name of the deployed stage; it becomes the first path segment of the stage URL. */
  readonly stageName: string;
  /** The origins whose pages may call the API (lambdas/http/cors.ts): `['*']` or a list. */
  readonly corsAllowedOrigins: readonly string[];
  /**
   * How long access logs are kept.
   * @default logs.RetentionDays.THREE_MONTHS
   */
  readonly accessLogRetention?: logs.RetentionDays;
  /**
   * Whether this API creates a role for API Gateway's account-level CloudWatch setting
   * (`AWS::ApiGateway::Account`) and points the setting at it. Without one the stage waits for
   * `accountSetting`, or relies on the account's setting being in place already.
   */
  readonly cloudWatchRole: boolean;
  /**
   * The account setting another API of the stack made, which the stage's access logging needs
   * before the stage is created.
   * @default none
   */
  readonly accountSetting?: apigateway.CfnAccount;
}

/**
 * The public REST API. A REST API rather than an HTTP API because WAF web ACLs attach
 * to REST API stages only. Every resource and method comes from the route table
 * (lambdas/routes.ts), which the local runtime dispatches with too.
 */
export class Api extends Construct {
  readonly restApi: apigateway.RestApi;
  readonly accessLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: props.accessLogRetention ?? logs.RetentionDays.THREE_MONTHS,
      // The audit trail of who called what outlives the stack.
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.restApi = new apigateway.RestApi(this, 'RestApi', {
      // The instance's name, so staging and production tell apart in the console.
      restApiName: instanceName(this),
      description: 'modelgate: model catalog, token exchange and inference',
      // Regional, so the per-region hostnames can front it with their own domains.
      endpointConfiguration: { types: [apigateway.EndpointType.REGIONAL] },
      // Catalog pages run to hundreds of KB of JSON.
      minCompressionSize: Size.kibibytes(1),
      // Access logging needs the account-level CloudWatch role of API Gateway. That setting
      // (AWS::ApiGateway::Account) is one per account and region, shared by every API there:
      // an instance that sets its own role there keeps both on deletion, so deleting one
      // instance never leaves another's access logging pointing at a deleted role.
      cloudWatchRole: props.cloudWatchRole,
      ...(props.cloudWatchRole ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      deployOptions: {
        stageName: props.stageName,
        accessLogDestination: new apigateway.LogGroupLogDestination(this.accessLogs),
        accessLogFormat: accessLogFormat(),
        metricsEnabled: true,
        tracingEnabled: true,
        // Execution logs would carry request bodies, i.e. subject tokens and API keys;
        // the access log says enough.
        loggingLevel: apigateway.MethodLoggingLevel.OFF,
        dataTraceEnabled: false,
      },
    });

    if (props.accountSetting) this.restApi.deploymentStage.node.addDependency(props.accountSetting);
    acknowledgeFindings(this.restApi);

    addGatewayResponses(this.restApi, props.corsAllowedOrigins);
    addRoutes(this.restApi, props.functions, props.corsAllowedOrigins);
  }

  get deploymentStage(): apigateway.Stage {
    return this.restApi.deploymentStage;
  }

  /** The account-level CloudWatch role setting this API made, if it made one. */
  get accountSetting(): apigateway.CfnAccount | undefined {
    return this.restApi.node.tryFindChild('Account') as apigateway.CfnAccount | undefined;
  }
}

/** The cdk-nag findings on the API that are by design, each with its reason. */
function acknowledgeFindings(restApi: apigateway.RestApi): void {
  Validations.of(restApi).acknowledge(
    {
      id: 'AwsSolutions-APIG2',
      reason:
        'Every handler validates its whole request and answers in the documented error shapes; an API Gateway validator would answer in its own shape',
    },
    {
      id: 'AwsSolutions-APIG4',
      reason:
        'Callers present API keys or access tokens that the functions verify against the keys table on every request; the token and JWKS endpoints are public by design (RFC 8693, RFC 7517)',
    },
    {
      id: 'AwsSolutions-COG4',
      reason: 'Callers are workloads and API keys, not Cognito users; authentication is bearer credentials checked by the functions',
    },
  );
  Validations.of(restApi.deploymentStage).acknowledge({
    id: 'AwsSolutions-APIG6',
    reason:
      'Execution logs would record request headers and bodies, i.e. API keys and subject tokens; the access log and each function log one line per request instead',
  });
  const cloudWatchRole = restApi.node.tryFindChild('CloudWatchRole');
  if (cloudWatchRole) {
    Validations.of(cloudWatchRole).acknowledge({
      id: `AwsSolutions-IAM4[Policy::${nagName(restApi, iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs').managedPolicyArn)}]`,
      reason: "API Gateway's account-level logging role needs AWS's own policy for it; it is shared by every API of the account",
    });
  }
}

/**
 * API Gateway's own answers (unknown paths, throttling, payloads too large, integration
 * failures) name the allowed origin too, so a page can read them (lambdas/http/cors.ts). A
 * gateway response cannot compare origins: with a list, it names the origin the request
 * came from. These answers carry no data, only the refusal.
 */
function addGatewayResponses(restApi: apigateway.RestApi, origins: readonly string[]): void {
  const responseHeaders = {
    'Access-Control-Allow-Origin': origins[0] === ANY_ORIGIN ? `'${ANY_ORIGIN}'` : 'method.request.header.Origin',
    'Access-Control-Expose-Headers': `'${CORS_EXPOSED_HEADERS.join(', ')}'`,
    ...(origins[0] === ANY_ORIGIN ? {} : { Vary: "'Origin'" }),
  };
  // API Gateway's own answer to an unknown path is 403 "Missing Authentication Token";
  // Clients expect a 404 in the service's error shape (docs/reference.md#the-common-error-body).
  restApi.addGatewayResponse('NotFound', {
    type: apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN,
    statusCode: '404',
    responseHeaders,
    templates: { 'application/json': '{"error":{"code":404,"message":"Not found"}}' },
  });
  restApi.addGatewayResponse('Default4xx', { type: apigateway.ResponseType.DEFAULT_4XX, responseHeaders });
  restApi.addGatewayResponse('Default5xx', { type: apigateway.ResponseType.DEFAULT_5XX, responseHeaders });
}

/**
 * The methods of the route table, each a Lambda proxy to the route's function, HEAD beside
 * every GET: one `ANY` on a resource whose methods one function serves; and a preflight on
 * every resource under the API base path.
 */
function addRoutes(restApi: apigateway.RestApi, functions: Readonly<Record<FunctionId, lambda.IFunction>>, origins: readonly string[]): void {
  const integrations = new Map<FunctionId, apigateway.LambdaIntegration>();
  const integrationFor = (functionId: FunctionId): apigateway.LambdaIntegration => {
    let integration = integrations.get(functionId);
    if (!integration) {
      // Proxy integration: handlers see the whole request and shape the whole reply.
      // One invoke permission per function, for this API (`<api id>/*/*/*`), not one per
      // method: a function's resource policy stays a few hundred bytes however many routes
      // it serves (Lambda allows 20 KB), and which method reaches which function is the API's
      // own wiring, which only this stack writes.
      // Streaming functions' bytes go to the client as written (SSE completions), for up
      // to the function's own timeout.
      const streaming = STREAMING_FUNCTIONS.includes(functionId);
      integration = new apigateway.LambdaIntegration(functions[functionId], {
        scopePermissionToMethod: false,
        ...(streaming ? { responseTransferMode: apigateway.ResponseTransferMode.STREAM, timeout: Duration.minutes(5) } : {}),
      });
      integrations.set(functionId, integration);
    }
    return integration;
  };
  // Each resource's routes, in table order: one function serves a resource's every method.
  const routesOf = new Map<apigateway.IResource, (typeof ROUTES)[number][]>();
  for (const route of ROUTES) {
    const resource = restApi.root.resourceForPath(resourcePath(route));
    routesOf.set(resource, [...(routesOf.get(resource) ?? []), route]);
  }
  const methodsOf = new Map<apigateway.IResource, string[]>();
  for (const [resource, routes] of routesOf) {
    // RFC 9110 §9.3.2: HEAD is GET without a body. The function answers it as the GET it
    // stands for, and API Gateway, like any HTTP server, sends no body with it.
    const methods = routes.flatMap((route) => (route.method === 'GET' ? ['GET', 'HEAD'] : [route.method]));
    const functions = new Set(routes.map((route) => route.function));
    if (methods.length > 1 && functions.size === 1) {
      // One ANY method where one function serves several: CloudFormation's 500 resources must
      // hold two instances. The function's dispatcher answers a method it has no route for with 404.
      resource.addMethod('ANY', integrationFor(routes[0]!.function));
    } else {
      for (const route of routes) resource.addMethod(route.method, integrationFor(route.function));
      if (methods.includes('HEAD')) resource.addMethod('HEAD', integrationFor(routes.find((route) => route.method === 'GET')!.function));
    }
    if (routes[0]!.base !== PAGES_BASE_PATH) methodsOf.set(resource, methods);
  }
  // Preflights are answered by API Gateway itself (a mock integration): no function runs for them.
  for (const [resource, methods] of methodsOf) {
    resource.addCorsPreflight({
      allowOrigins: [...origins],
      allowMethods: methods,
      allowHeaders: [...CORS_ALLOWED_HEADERS],
      exposeHeaders: [...CORS_EXPOSED_HEADERS],
      maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
    });
  }
}

/** One JSON object per request; the client address is the socket's, never a header. */
function accessLogFormat(): apigateway.AccessLogFormat {
  const F = apigateway.AccessLogField;
  return apigateway.AccessLogFormat.custom(
    JSON.stringify({
      requestId: F.contextRequestId(),
      requestTime: F.contextRequestTime(),
      ip: F.contextIdentitySourceIp(),
      domainName: F.contextDomainName(),
      method: F.contextHttpMethod(),
      resourcePath: F.contextResourcePath(),
      path: F.contextPath(),
      protocol: F.contextProtocol(),
      status: F.contextStatus(),
      responseLength: F.contextResponseLength(),
      responseLatency: F.contextResponseLatency(),
      integrationStatus: F.contextIntegrationStatus(),
      integrationLatency: F.contextIntegrationLatency(),
      errorMessage: F.contextErrorMessage(),
      wafResponseCode: F.contextWafResponseCode(),
      xrayTraceId: F.contextXrayTraceId(),
      userAgent: F.contextIdentityUserAgent(),
    }),
  );
}
