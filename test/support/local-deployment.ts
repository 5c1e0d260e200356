import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DescribeTableCommand, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { CreateKeyCommand } from '@aws-sdk/client-kms';
import { ALL_TABLES } from '../../lambdas/aws/table-schemas';
import { createDevCertificateAuthority } from '../../local/dev-certificates';
import type { EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { startApiGatewayStandIn, type ApiGatewayStandIn } from './api-gateway';
import { startTestDynamoDb } from './dynamodb-local';
import { TemplateResolver, type PhysicalResource, type StackAssembly, type TemplateFunction } from './cloud-assembly';
import { startDynamoDbGate } from './iam/dynamodb-gate';
import type { IamGate } from './iam/iam-gate';
import { startKmsStandIn, type KmsStandIn } from './kms-stand-in';
import { startLambdaProcess, type LambdaFunctionSpec, type LambdaProcess } from './lambda-process';
import { startSecretsManagerStandIn, type SecretsManagerStandIn } from './secrets-manager-stand-in';

/**
 * A synthesized stack "deployed" onto this machine, from its template and cloud assembly:
 * its tables in the test DynamoDB (./dynamodb-local.ts), its KMS key in the KMS stand-in, its secret in the
 * Secrets Manager stand-in, each function's package running in its own process with the
 * environment the template gives it, its custom resources created by running their functions
 * with CloudFormation's `Create` event, and its REST API served by the API Gateway stand-in, on
 * the execute-api hostname and on every custom domain name the template maps the stage under.
 */
export interface LocalDeployment {
  readonly assembly: StackAssembly;
  readonly resolver: TemplateResolver;
  readonly dynamo: EmbeddedDynamoDb;
  readonly kms: KmsStandIn;
  readonly secrets: SecretsManagerStandIn;
  readonly gateway: ApiGatewayStandIn;
  /** The running function processes, by construct id (`Catalog`, `TokenExchange`...). */
  readonly functions: Readonly<Record<string, LambdaProcess>>;
  /** The template's outputs that name resources it created, resolved (`ApiUrl`, `SigningKeyArn`...). */
  readonly outputs: Readonly<Record<string, string>>;
  /**
   * The template's EventBridge schedules, by logical id: each invokes its targets as EventBridge
   * does when its time comes, with a scheduled event.
   */
  readonly schedules: Readonly<Record<string, { readonly expression: string; fire(): Promise<Awaited<ReturnType<LambdaProcess['invoke']>>[]> }>>;
  /** What each custom resource's function answered to `Create`, by logical id. */
  readonly customResources: Readonly<Record<string, { PhysicalResourceId: string; Data?: Record<string, string> }>>;
  /**
   * The process description of a function as the deployment runs it, by construct id: for
   * tests that start another environment of it (with a variable left out, in Lambda's tracing
   * environment).
   */
  specOf(constructId: string, change?: { without?: readonly string[]; extra?: Readonly<Record<string, string>> }): LambdaFunctionSpec;
  /**
   * Makes a stand-in resource the template's resource `logicalId` from now on, as CloudFormation
   * does when it replaces a resource: references to it resolve to the new one, for the template
   * and for the IAM gate.
   */
  replaced(logicalId: string, physical: PhysicalResource & { attributes: { Arn: string } }): void;
  stop(): Promise<void>;
}

export interface LocalDeploymentOptions {
  /**
   * Variables a test adds to a function's environment, by construct id, beyond the template's:
   * each needs a reason given where it is passed.
   * @default none
   */
  readonly extraEnvironment?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /**
   * The IAM gate (test/support/iam/) every request a function makes to DynamoDB, KMS and
   * Secrets Manager passes: evaluated against that function's role policies (and the key's
   * policy) from the template, a denied one answered with AWS's AccessDeniedException.
   * @default no gate: every request is served
   */
  readonly iam?: IamGate;
}

/**
 * The logical id of a table ends in its schema id, PascalCase, in the `Tables` construct
 * (lib/constructs/tables.ts), after the instance's own construct id, if any.
 */
const tableSchemaOf = (logicalId: string) =>
  ALL_TABLES.find((schema) => new RegExp(`^[A-Za-z0-9]*Tables${schema.id[0]!.toUpperCase()}${schema.id.slice(1)}Table[0-9A-F]{8}$`).test(logicalId));

export async function deployLocally(assembly: StackAssembly, options: LocalDeploymentOptions = {}): Promise<LocalDeployment> {
  const { template } = assembly;
  const resolver = new TemplateResolver(template, assembly.stackName);
  const { region, account } = resolver.env;
  const ofType = (type: string) => Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };

  try {
    const dynamo = await startTestDynamoDb();
    stops.push(() => dynamo.stop());
    // The functions reach the tables through the gate; set-up and the test's own clients do not.
    const gatedDynamo = options.iam ? await startDynamoDbGate(dynamo.endpoint, options.iam) : undefined;
    if (gatedDynamo) stops.push(() => gatedDynamo.stop());
    for (const [logicalId, table] of ofType('AWS::DynamoDB::Table')) {
      const schema = tableSchemaOf(logicalId);
      if (!schema) throw new Error(`table ${logicalId} matches no schema of lambdas/aws/table-schemas.ts`);
      const properties = table.Properties!;
      // The table as the template defines it (keys, attributes, indexes), under its local name.
      const input: CreateTableCommandInput = {
        TableName: schema.localName,
        BillingMode: properties.BillingMode,
        KeySchema: properties.KeySchema,
        AttributeDefinitions: properties.AttributeDefinitions,
        GlobalSecondaryIndexes: properties.GlobalSecondaryIndexes,
      };
      await dynamo.client.send(new CreateTableCommand(input));
      for (let attempt = 0; (await dynamo.client.send(new DescribeTableCommand({ TableName: schema.localName }))).Table?.TableStatus !== 'ACTIVE'; attempt++) {
        if (attempt > 100) throw new Error(`table ${schema.localName} did not become ACTIVE`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      resolver.created(logicalId, { ref: schema.localName, attributes: { Arn: `arn:${resolver.partition}:dynamodb:${region}:${account}:table/${schema.localName}` } });
    }

    const kms = await startKmsStandIn({ authorize: options.iam?.standInAuthorizer() });
    stops.push(() => kms.stop());
    const kmsClient = kms.client();
    for (const [logicalId, key] of ofType('AWS::KMS::Key')) {
      const properties = key.Properties!;
      // A table's encryption key is DynamoDB's to use, server side, which the embedded DynamoDB does not do: named, not created.
      if (properties.KeyUsage !== 'SIGN_VERIFY') {
        const arn = `arn:${resolver.partition}:kms:${region}:${account}:key/${logicalId}`;
        resolver.created(logicalId, { ref: logicalId, attributes: { Arn: arn, KeyId: logicalId } });
        continue;
      }
      // Created as CloudFormation creates it: spec, usage, key policy and tags from the template.
      const { KeyMetadata } = await kmsClient.send(
        new CreateKeyCommand({
          KeySpec: properties.KeySpec,
          KeyUsage: properties.KeyUsage,
          Description: properties.Description,
          Policy: JSON.stringify(resolver.resolve(properties.KeyPolicy)),
          Tags: ((properties.Tags ?? []) as { Key: string; Value: string }[]).map((tag) => ({ TagKey: tag.Key, TagValue: tag.Value })),
        }),
      );
      resolver.created(logicalId, { ref: KeyMetadata!.KeyId!, attributes: { Arn: KeyMetadata!.Arn!, KeyId: KeyMetadata!.KeyId! } });
      options.iam?.bind(logicalId, { ref: KeyMetadata!.KeyId!, arn: KeyMetadata!.Arn! });
    }

    const secrets = await startSecretsManagerStandIn({ region, account, authorize: options.iam?.standInAuthorizer() });
    stops.push(() => secrets.stop());
    for (const [logicalId, secret] of ofType('AWS::SecretsManager::Secret')) {
      const properties = resolver.resolve(secret.Properties ?? {}) as Record<string, string>;
      const arn = await secrets.createSecret(properties.Name ?? logicalId, properties.SecretString ?? '', properties.Description);
      resolver.created(logicalId, { ref: arn, attributes: { Id: arn } });
      options.iam?.bind(logicalId, { ref: arn, arn });
    }

    for (const [logicalId] of ofType('AWS::ApiGateway::RestApi')) {
      resolver.created(logicalId, { ref: randomApiId(), attributes: { RootResourceId: 'root' } });
    }
    const customDomains = createCustomDomains(template, resolver);

    // Every function but the custom resource frameworks, whose part is played below.
    const frameworks = new Set(
      ofType('AWS::CloudFormation::CustomResource')
        .concat(Object.entries(template.Resources).filter(([, resource]) => resource.Type.startsWith('Custom::')))
        .map(([, resource]) => (resource.Properties?.ServiceToken as { 'Fn::GetAtt'?: [string, string] })?.['Fn::GetAtt']?.[0]),
    );
    const served = assembly.functions.filter((fn) => !frameworks.has(fn.logicalId));
    const specs = new Map<string, LambdaFunctionSpec>();
    const specFor = (fn: TemplateFunction): LambdaFunctionSpec => {
      const declared = resolver.resolve(fn.properties.Environment?.Variables ?? {}) as Record<string, string>;
      return {
        name: fn.constructId,
        functionArn: resolver.resolve({ 'Fn::GetAtt': [fn.logicalId, 'Arn'] }),
        codeDir: fn.codeDir,
        handler: fn.properties.Handler,
        timeoutSeconds: fn.properties.Timeout ?? 3,
        memorySize: fn.properties.MemorySize ?? 128,
        environment: {
          ...declared,
          // What the Lambda runtime adds (its reserved variables), short of AWS_EXECUTION_ENV,
          // under which the functions would send X-Ray segments (the tracing test sets it).
          AWS_REGION: region,
          AWS_DEFAULT_REGION: region,
          AWS_LAMBDA_FUNCTION_NAME: fn.constructId,
          AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
          AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.properties.MemorySize ?? 128),
          LAMBDA_TASK_ROOT: fn.codeDir,
          _HANDLER: fn.properties.Handler,
          TZ: ':UTC',
          // The function's own credentials: its construct id names its role to the stand-ins.
          AWS_ACCESS_KEY_ID: fn.constructId,
          AWS_SECRET_ACCESS_KEY: 'local',
          // The stand-ins, through the SDK's per-service endpoint variables.
          AWS_ENDPOINT_URL_DYNAMODB: gatedDynamo?.endpoint ?? dynamo.endpoint,
          AWS_ENDPOINT_URL_KMS: kms.endpoint,
          AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
          // The SDK's notice about the Node.js version in use is noise here.
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          ...options.extraEnvironment?.[fn.constructId],
        },
      };
    };
    for (const fn of served) specs.set(fn.constructId, specFor(fn));

    const processes = await Promise.allSettled(served.map((fn) => startLambdaProcess(specs.get(fn.constructId)!)));
    const functions: Record<string, LambdaProcess> = {};
    const byLogicalId = new Map<string, LambdaProcess>();
    processes.forEach((started, index) => {
      if (started.status !== 'fulfilled') return;
      functions[served[index]!.constructId] = started.value;
      byLogicalId.set(served[index]!.logicalId, started.value);
      stops.push(() => started.value.stop());
    });
    const failed = processes.filter((started): started is PromiseRejectedResult => started.status === 'rejected');
    if (failed.length > 0) throw new Error(failed.map((started) => (started.reason as Error).message).join('\n\n'));

    // CloudFormation's part: a `Create` event for each custom resource, to the function its
    // provider framework invokes (the framework's USER_ON_EVENT_FUNCTION_ARN).
    const customResources: Record<string, { PhysicalResourceId: string; Data?: Record<string, string> }> = {};
    for (const [logicalId, resource] of Object.entries(template.Resources).filter(([, r]) => r.Type.startsWith('Custom::') || r.Type === 'AWS::CloudFormation::CustomResource')) {
      const properties = resolver.resolve(resource.Properties) as Record<string, string>;
      const framework = assembly.functions.find((fn) => resolver.resolve({ 'Fn::GetAtt': [fn.logicalId, 'Arn'] }) === properties.ServiceToken);
      const onEventArn = framework && resolver.resolve(framework.properties.Environment?.Variables?.USER_ON_EVENT_FUNCTION_ARN);
      const target = assembly.functions.find((fn) => resolver.resolve({ 'Fn::GetAtt': [fn.logicalId, 'Arn'] }) === onEventArn);
      const fn = target && byLogicalId.get(target.logicalId);
      if (!fn) throw new Error(`custom resource ${logicalId}: no function of the template handles its events`);
      const outcome = await fn.invoke(cloudFormationEvent('Create', logicalId, resource.Type, properties, resolver));
      if (!outcome.ok) throw new Error(`custom resource ${logicalId}: ${fn.spec.name} failed: ${outcome.error.errorType}: ${outcome.error.errorMessage}`);
      customResources[logicalId] = JSON.parse(outcome.payload);
      resolver.created(logicalId, { ref: customResources[logicalId]!.PhysicalResourceId, attributes: customResources[logicalId]!.Data ?? {} });
    }

    const schedules = scheduleRules(ofType('AWS::Events::Rule'), resolver, byLogicalId);

    // The certificate of the execute-api hostname and of every custom domain name, from a CA only the gateway's clients trust.
    const gatewayCa = createDevCertificateAuthority({ commonName: 'test API Gateway CA' });
    const restApiId = ofType('AWS::ApiGateway::RestApi')[0]![0];
    const hostname = `${resolver.resolve({ Ref: restApiId })}.execute-api.${region}.${resolver.urlSuffix}`;
    const gateway = await startApiGatewayStandIn({
      template,
      resolver,
      functions: byLogicalId,
      tls: { ...gatewayCa.issueServerCertificate([hostname, ...customDomains]), caPem: gatewayCa.certPem },
    });
    stops.push(() => gateway.stop());

    // The outputs that name what this deployment created (not the web ACL, say).
    const outputs: Record<string, string> = {};
    for (const [name, output] of Object.entries(template.Outputs ?? {})) {
      try {
        outputs[name] = String(resolver.resolve(output.Value));
      } catch {
        continue;
      }
    }
    return {
      assembly,
      resolver,
      dynamo,
      kms,
      secrets,
      gateway,
      functions,
      outputs,
      schedules,
      customResources,
      specOf(constructId, change = {}) {
        const spec = specs.get(constructId);
        if (!spec) throw new Error(`no function ${constructId}`);
        const environment: Record<string, string> = { ...spec.environment, ...change.extra };
        for (const name of change.without ?? []) delete environment[name];
        return { ...spec, environment };
      },
      replaced(logicalId, physical) {
        resolver.created(logicalId, physical);
        options.iam?.bind(logicalId, { ref: physical.ref, arn: physical.attributes.Arn });
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * EventBridge's part: each rule created (its ARN as CloudFormation gives it), and a `fire` that
 * invokes each of its targets with the event a schedule sends.
 */
function scheduleRules(rules: [string, { Properties?: Record<string, any> }][], resolver: TemplateResolver, functions: ReadonlyMap<string, LambdaProcess>) {
  const { region, account } = resolver.env;
  return Object.fromEntries(
    rules.map(([logicalId, rule]) => {
      const arn = `arn:${resolver.partition}:events:${region}:${account}:rule/${logicalId}`;
      resolver.created(logicalId, { ref: logicalId, attributes: { Arn: arn } });
      const targets = ((rule.Properties?.Targets ?? []) as { Arn: unknown }[]).map((target) => {
        const fn = [...functions.entries()].find(([id]) => resolver.resolve({ 'Fn::GetAtt': [id, 'Arn'] }) === resolver.resolve(target.Arn))?.[1];
        if (!fn) throw new Error(`schedule ${logicalId}: no function of the template is its target`);
        return fn;
      });
      const fire = () =>
        Promise.all(
          targets.map((fn) =>
            fn.invoke({
              version: '0',
              id: randomUUID(),
              'detail-type': 'Scheduled Event',
              source: 'aws.events',
              account,
              time: new Date().toISOString(),
              region,
              resources: [arn],
              detail: {},
            }),
          ),
        );
      return [logicalId, { expression: String(rule.Properties?.ScheduleExpression), fire }];
    }),
  );
}

/** The event CloudFormation sends a custom resource's service token (and the provider framework passes on). */
export function cloudFormationEvent(
  requestType: 'Create' | 'Update' | 'Delete',
  logicalId: string,
  resourceType: string,
  properties: Record<string, unknown>,
  resolver: TemplateResolver,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    RequestType: requestType,
    ServiceToken: properties.ServiceToken,
    ResponseURL: 'https://cloudformation-custom-resource-response-useast1.s3.amazonaws.com/test',
    StackId: resolver.resolve({ Ref: 'AWS::StackId' }),
    RequestId: randomUUID(),
    LogicalResourceId: logicalId,
    ResourceType: resourceType,
    ResourceProperties: properties,
    ...extra,
  };
}

/** A custom domain: its certificate, and its domain names with the regional endpoint each gets. Returns their hostnames. */
function createCustomDomains(template: StackAssembly['template'], resolver: TemplateResolver): string[] {
  const { region, account } = resolver.env;
  const ofType = (type: string) => Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
  for (const [logicalId] of ofType('AWS::CertificateManager::Certificate')) {
    resolver.created(logicalId, { ref: `arn:${resolver.partition}:acm:${region}:${account}:certificate/${randomUUID()}` });
  }
  return ofType('AWS::ApiGateway::DomainName').map(([logicalId, domain]) => {
    const hostname = String(resolver.resolve(domain.Properties!.DomainName));
    resolver.created(logicalId, {
      ref: hostname,
      attributes: { RegionalDomainName: `d-${randomApiId()}.execute-api.${region}.${resolver.urlSuffix}`, RegionalHostedZoneId: 'Z1UJRXOUMOOFQ8' },
    });
    return hostname;
  });
}

/** A REST API id as API Gateway makes them: ten lowercase letters and digits. */
function randomApiId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from({ length: 10 }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('');
}
