import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { AccountsService } from '../../lambdas/accounts/accounts-service';
import { DynamoAccountStore } from '../../lambdas/aws/dynamo-account-store';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { createDevCertificateAuthority, type DevCertificateAuthority } from '../../local/dev-certificates';
import { apiRequestInit, type ApiRequest } from '../../local/demo';
import { ensureDemoOrganization, seedCatalog, type DemoCredentials } from '../../local/seed';
import { connectToRuntime, type RuntimeStores } from './accounts';
import { synthesizeModelgate } from './cloud-assembly';
import { FUNCTION_REQUIREMENTS } from './function-requirements';
import { IamGate } from './iam/iam-gate';
import { startIdentityProvider, type TestIdentityProvider } from './identity-provider';
import { deployLocally, type LocalDeployment } from './local-deployment';
import { startScriptedUpstream, type ScriptedUpstream } from './scripted-upstream';

const ROOT = join(__dirname, '..', '..');

/** The construct ids of the stack's functions, sorted: one running process each. */
export const CONSTRUCT_IDS: string[] = Object.values(FUNCTION_REQUIREMENTS).map((fn) => fn.construct).sort();
/** The key the operator puts into the stack's secret, which the upstream is sent. */
export const PROVIDER_KEY = 'sk-upstream-from-secrets-manager';
/** The `sub` of the workload tokens the bundle suites exchange. */
export const SUBJECT = 'system:serviceaccount:payments:worker';
/** The `aud` of the workload tokens the bundle suites exchange. */
export const AUDIENCE = 'modelgate-bundle-suite';
/** The stack's own domain in a hosted zone, serving the EU region on `eu.api.example.com`. */
const DOMAIN = {
  'modelgate:domainName': 'api.example.com',
  'modelgate:hostedZoneId': 'Z0123456789ABCDEFGHIJ',
  'modelgate:hostedZoneName': 'example.com',
  'modelgate:regionalHostnames': { eu: 'eu.api.example.com' },
};
/** The origin of the stack's EU regional hostname. */
export const EU_ORIGIN = 'https://eu.api.example.com';

/** What a bundle suite's deployments share: the CA of the HTTPS services they call out to, the identity provider, a scratch folder. */
export interface BundleWorkspace {
  readonly ca: DevCertificateAuthority;
  /** The CA's certificate, for NODE_EXTRA_CA_CERTS. */
  readonly caFile: string;
  readonly identityProvider: TestIdentityProvider;
  /** Where cloud assemblies and demo credentials go. */
  readonly outdir: string;
}

/** Starts the identity provider and creates the scratch folder; {@link closeBundleWorkspace} undoes both. */
export async function openBundleWorkspace(): Promise<BundleWorkspace> {
  // One CA for the HTTPS services the functions call out to: the identity provider (token
  // exchange) and the inference upstream, each trusted through NODE_EXTRA_CA_CERTS.
  const ca = createDevCertificateAuthority({ commonName: 'bundle suite CA' });
  const identityProvider = await startIdentityProvider({ ca });
  // Inside the project, so the SDK the packages leave external resolves from its node_modules,
  // as the Lambda runtime provides it.
  mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
  const outdir = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'modelgate-assembly-'));
  const caFile = join(outdir, 'outbound-ca.pem');
  writeFileSync(caFile, ca.certPem);
  return { ca, caFile, identityProvider, outdir };
}

/** Stops the identity provider and removes the scratch folder; tolerates a workspace never opened. */
export async function closeBundleWorkspace(workspace: BundleWorkspace | undefined): Promise<void> {
  await workspace?.identityProvider.close();
  if (workspace) rmSync(workspace.outdir, { recursive: true, force: true });
}

/**
 * Test-only variables for `deployLocally`'s `extraEnvironment`, by construct id: the identity
 * provider runs on this machine, so its issuer URL is a loopback one. A deployed stage refuses
 * loopback issuers (lambdas/config.ts allows MODELGATE_ALLOW_LOOPBACK_ISSUERS on the "local"
 * stage only): the two functions that judge issuer URLs, management (saving the issuer) and the
 * token exchange (fetching its keys), run as that stage. Its CA is no public one: NODE_EXTRA_CA_CERTS.
 */
export function loopbackIssuerEnvironment(caFile: string): Record<string, Record<string, string>> {
  return {
    TokenExchange: { MODELGATE_ALLOW_LOOPBACK_ISSUERS: '1', STAGE: 'local', NODE_EXTRA_CA_CERTS: caFile },
    Management: { MODELGATE_ALLOW_LOOPBACK_ISSUERS: '1', STAGE: 'local' },
  };
}

/** What `npm start` seeds, through the same code, into the tables of a local deployment: the catalog and the demo organization. */
export async function seedDemo(deployment: LocalDeployment, demoFile: string, apiUrl: string): Promise<{ stores: RuntimeStores; demo: DemoCredentials }> {
  const stores = connectToRuntime({ dynamoEndpoint: deployment.dynamo.endpoint });
  await seedCatalog(stores.catalog);
  const accounts = new DynamoAccountStore(stores.documentClient, TABLE_SCHEMAS.keys.localName);
  const demo = await ensureDemoOrganization(new AccountsService({ store: accounts }), accounts, demoFile, apiUrl, () => undefined);
  return { stores, demo };
}

/**
 * What ships, serving the demo end to end: the app synthesized as `cdk deploy` builds it (real
 * esbuild bundles), then, from the template and the cloud assembly alone, every function
 * package running in its own Node.js process with the environment the template gives it, its
 * tables, KMS key and secret created from their template definitions in local stand-ins, the
 * signing key registered by the registrar package through CloudFormation's `Create` event, and
 * the REST API served over HTTPS by routing the template's resources and methods to the
 * function each integration names, on the stage URL and on each hostname of the stack's custom
 * domain (the API's own and the regional ones), as the template's domain names and mappings
 * say. Every request a function makes to DynamoDB, KMS and Secrets Manager passes the IAM gate,
 * evaluated against that function's role in the same template. Real clients (fetch, jose,
 * openai, the official SDK) talk to it.
 *
 * The members are set once the block's `beforeAll` has run; `call` may be destructured.
 */
export class BundledStack {
  workspace!: BundleWorkspace;
  deployment!: LocalDeployment;
  iam!: IamGate;
  /** The HTTPS inference upstream, its provider key read from the stack's secret. */
  upstream!: ScriptedUpstream;
  stores!: RuntimeStores;
  demo!: DemoCredentials;
  /** The API base URL: the custom domain's, as the `ApiUrl` output names it. */
  apiUrl!: string;
  /** The same API through the stage's execute-api URL. */
  stageUrl!: string;
  signingKeyArn!: string;
  /** The kid the registrar answered CloudFormation's `Create` with. */
  registeredKid!: string;

  /** The identity provider the token exchange trusts once a test saves it as an issuer. */
  get identityProvider(): TestIdentityProvider {
    return this.workspace.identityProvider;
  }

  /** A request to the API through the gateway, as a client of the deployed stage makes it. */
  call = async (path: string, init: ApiRequest & { method?: string } = {}) => {
    const response = await this.deployment.gateway.fetch(path.startsWith('https://') ? path : `${this.apiUrl}${path}`, apiRequestInit(init.method ?? 'GET', init));
    const text = await response.text();
    let parsed: any;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  };
}

/**
 * The {@link BundledStack} for the enclosing block's tests: synthesized, bundled and deployed
 * once before them, with the catalog and the demo organization seeded and the provider key in
 * the stack's secret, and stopped after them.
 */
export function useBundledStack(): BundledStack {
  const served = new BundledStack();
  beforeAll(async () => {
    served.workspace = await openBundleWorkspace();
    served.upstream = await startScriptedUpstream({ tls: served.workspace.ca.issueServerCertificate(['127.0.0.1']) });
    const assembly = synthesizeModelgate(join(served.workspace.outdir, 'cdk.out'), {
      // An HTTPS provider that needs the key the stack's secret holds.
      'modelgate:inferenceUpstreams': { '*': served.upstream.baseUrl('alpha') },
      ...DOMAIN,
    });
    served.iam = new IamGate({ stackName: assembly.stackName, template: assembly.template });
    served.deployment = await deployLocally(assembly, {
      iam: served.iam,
      extraEnvironment: {
        ...loopbackIssuerEnvironment(served.workspace.caFile),
        // Test-only: the upstream's certificate comes from the same private CA.
        Inference: { NODE_EXTRA_CA_CERTS: served.workspace.caFile },
      },
    });
    served.apiUrl = served.deployment.outputs.ApiUrl!;
    served.stageUrl = `${served.deployment.gateway.origin}/${served.deployment.gateway.stageName}/api/v1`;
    ({ stores: served.stores, demo: served.demo } = await seedDemo(served.deployment, join(served.workspace.outdir, 'demo.json'), served.apiUrl));

    // The operator's step after deploying (README): the provider key into the stack's secret.
    await served.deployment.secrets.client().send(new PutSecretValueCommand({ SecretId: served.deployment.outputs.ProviderCredentialsSecretArn, SecretString: JSON.stringify({ '*': PROVIDER_KEY }) }));

    served.signingKeyArn = served.deployment.outputs.SigningKeyArn!;
    served.registeredKid = Object.values(served.deployment.customResources)[0]!.PhysicalResourceId;
  }, 180_000);

  afterAll(async () => {
    served.stores?.destroy();
    await served.deployment?.stop();
    served.iam?.writeSeen(expect.getState().testPath);
    await served.upstream?.stop();
    await closeBundleWorkspace(served.workspace);
  });
  return served;
}
