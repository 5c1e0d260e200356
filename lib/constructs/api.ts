import { Duration, RemovalPolicy, Size, Stack, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { nagName } from './nag';
import { ANY_ORIGIN, CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS } from '../../lambdas/http/cors';
import { PAGES_BASE_PATH, ROUTES, STREAMING_FUNCTIONS, resourcePath, type FunctionId } from '../../lambdas/routes';

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
      restApiName: Stack.of(this).stackName,
      description: 'modelgate: model catalog, token exchange and inference',
      // Regional, so the per-region hostnames can front it with their own domains.
      endpointConfiguration: { types: [apigateway.EndpointType.REGIONAL] },
      // Catalog pages run to hundreds of KB of JSON.
      minCompressionSize: Size.kibibytes(1),
      // Access logging needs the account-level CloudWatch role of API Gateway. That setting
      // (AWS::ApiGateway::Account) is one per account and region, shared by every instance:
      // each instance sets its own role there, and keeps both on deletion, so deleting one
      // instance never leaves another's access logging pointing at a deleted role.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
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

    Validations.of(this.restApi).acknowledge(
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'Every handler validates its whole request and answers in the SPEC 7 error shapes; an API Gateway validator would answer in its own shape',
      },
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'Callers present API keys or access tokens that the functions verify against the keys table (SPEC 5); the token and JWKS endpoints are public by design (RFC 8693, RFC 7517)',
      },
      {
        id: 'AwsSolutions-COG4',
        reason: 'Callers are workloads and API keys, not Cognito users; authentication is SPEC 5 bearer credentials checked by the functions',
      },
    );
    Validations.of(this.restApi.deploymentStage).acknowledge({
      id: 'AwsSolutions-APIG6',
      reason:
        'Execution logs would record request headers and bodies, i.e. API keys and subject tokens; the access log and each function log one line per request instead',
    });
    const cloudWatchRole = this.restApi.node.tryFindChild('CloudWatchRole');
    if (cloudWatchRole) {
      Validations.of(cloudWatchRole).acknowledge({
        id: `AwsSolutions-IAM4[Policy::${nagName(this, iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs').managedPolicyArn)}]`,
        reason: "API Gateway's account-level logging role needs AWS's own policy for it; it is shared by every API of the account",
      });
    }

    this.addGatewayResponses(props.corsAllowedOrigins);

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
        integration = new apigateway.LambdaIntegration(props.functions[functionId], {
          scopePermissionToMethod: false,
          ...(streaming ? { responseTransferMode: apigateway.ResponseTransferMode.STREAM, timeout: Duration.minutes(5) } : {}),
        });
        integrations.set(functionId, integration);
      }
      return integration;
    };
    const methodsOf = new Map<apigateway.IResource, string[]>();
    for (const route of ROUTES) {
      const resource = this.restApi.root.resourceForPath(resourcePath(route));
      resource.addMethod(route.method, integrationFor(route.function));
      const methods = methodsOf.get(resource) ?? [];
      methods.push(route.method);
      // RFC 9110 §9.3.2: HEAD is GET without a body. The function answers it as the GET it
      // stands for, and API Gateway, like any HTTP server, sends no body with it.
      if (route.method === 'GET') {
        resource.addMethod('HEAD', integrationFor(route.function));
        methods.push('HEAD');
      }
      if (route.base !== PAGES_BASE_PATH) methodsOf.set(resource, methods);
    }
    // Preflights are answered by API Gateway itself (a mock integration): no function runs for them.
    for (const [resource, methods] of methodsOf) {
      resource.addCorsPreflight({
        allowOrigins: [...props.corsAllowedOrigins],
        allowMethods: methods,
        allowHeaders: [...CORS_ALLOWED_HEADERS],
        exposeHeaders: [...CORS_EXPOSED_HEADERS],
        maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
      });
    }
  }

  /**
   * API Gateway's own answers (unknown paths, throttling, payloads too large, integration
   * failures) name the allowed origin too, so a page can read them (lambdas/http/cors.ts). A
   * gateway response cannot compare origins: with a list, it names the origin the request
   * came from. These answers carry no data, only the refusal.
   */
  private addGatewayResponses(origins: readonly string[]): void {
    const responseHeaders = {
      'Access-Control-Allow-Origin': origins[0] === ANY_ORIGIN ? `'${ANY_ORIGIN}'` : 'method.request.header.Origin',
      'Access-Control-Expose-Headers': `'${CORS_EXPOSED_HEADERS.join(', ')}'`,
      ...(origins[0] === ANY_ORIGIN ? {} : { Vary: "'Origin'" }),
    };
    // API Gateway's own answer to an unknown path is 403 "Missing Authentication Token";
    // SPEC 7.1 clients expect a 404 in the service's error shape.
    this.restApi.addGatewayResponse('NotFound', {
      type: apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN,
      statusCode: '404',
      responseHeaders,
      templates: { 'application/json': '{"error":{"code":404,"message":"Not found"}}' },
    });
    this.restApi.addGatewayResponse('Default4xx', { type: apigateway.ResponseType.DEFAULT_4XX, responseHeaders });
    this.restApi.addGatewayResponse('Default5xx', { type: apigateway.ResponseType.DEFAULT_5XX, responseHeaders });
  }

  get deploymentStage(): apigateway.Stage {
    return this.restApi.deploymentStage;
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
