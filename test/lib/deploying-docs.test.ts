import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Template } from 'aws-cdk-lib/assertions';
import { matchRoute } from '../../lambdas/routes';
import { SETTINGS, type SettingName } from '../../lambdas/settings';
import { SYNTH_ENV, type StackTemplate } from '../support/cloud-assembly';
import { FEATURE_FLAGS, resourcesOfType, synthModelgate, validated } from './template-helpers';

const ROOT = join(__dirname, '..', '..');
const DOCUMENT = 'docs/deploying.md';

/** The fenced blocks of docs/deploying.md, with their language. */
function blocks(): { language: string; text: string }[] {
  const found: { language: string; text: string }[] = [];
  for (const [, language, text] of readFileSync(join(ROOT, DOCUMENT), 'utf8').matchAll(/^```(\w*)[^\n]*\n([\s\S]*?)^```$/gm)) {
    found.push({ language: language!, text: text! });
  }
  return found;
}

const blockWith = (language: string, marker: string): string => {
  const matching = blocks().filter((block) => block.language === language && block.text.includes(marker));
  if (matching.length !== 1) throw new Error(`${DOCUMENT} has ${matching.length} ${language} blocks with ${marker}, expected one`);
  return matching[0]!.text;
};

/** A shell command line's words, as bash splits them: continuation lines joined, single and double quotes removed. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const [, single, double, bare] of line.matchAll(/'([^']*)'|"([^"]*)"|([^\s'"]+)/g)) words.push(single ?? double ?? bare!);
  return words;
}

/** The `-c key=value` context of the block's `cdk deploy` command. */
function deployContext(block: string): Record<string, string> {
  const command = block.replace(/\\\n\s*/g, ' ').split('\n').find((line) => /\bcdk deploy\b/.test(line))!;
  const words = shellWords(command);
  const context: Record<string, string> = {};
  words.forEach((word, index) => {
    if (word !== '-c') return;
    const [key, ...value] = words[index + 1]!.split('=');
    context[key!] = value.join('=');
  });
  return context;
}

/**
 * The commands docs/deploying.md shows that need an AWS account to run (runnable-blocks.test.ts
 * lets them be) are held to what they say without one: the custom domain deploy is synthesized
 * with the very `-c` values it passes, and the CDK app of one's own runs as the CDK CLI runs an app.
 */
describe('docs/deploying.md', () => {
  it("lists in its Configuration table every setting of the settings table, with the variable the functions read it from, and no other", () => {
    const text = readFileSync(join(ROOT, DOCUMENT), 'utf8');
    const table = text.slice(text.indexOf('## Configuration'));
    const rows = [...table.matchAll(/^\| (`modelgate:[^|]+?) \|([^|]*)\|/gm)].flatMap(([, keys, variable]) =>
      [...keys!.matchAll(/`modelgate:(\w+)`/g)].map(([, name]) => [name!, variable!.trim().replace(/`/g, '')]),
    );
    const expected = (Object.keys(SETTINGS) as SettingName[]).map((name) => [name, (SETTINGS[name] as { env?: string }).env ?? '']);
    expect(rows.sort()).toEqual(expected.sort());
  });

  it("synthesizes a custom domain in any zone with the shipped cdk.json: it names no regional hostname of its own", () => {
    // Each documented deploy is validated as `cdk deploy` validates it (CloudFormation's own rules).
    const { template } = validated(() =>
      synthModelgate({ 'aws:cdk:bundling-stacks': [], 'modelgate:domainName': 'api.acme.io', 'modelgate:hostedZoneId': 'Z0ACME', 'modelgate:hostedZoneName': 'acme.io' }, SYNTH_ENV),
    );
    const hostnames = Object.values(resourcesOfType(template, 'AWS::ApiGateway::DomainName')).map((domain) => domain.Properties!.DomainName);
    expect(hostnames).toEqual(['api.acme.io']);
  }, 120_000);

  describe('the custom domain deploy', () => {
    const block = blockWith('sh', 'modelgate:domainName=');
    let template: Template;
    beforeAll(() => {
      ({ template } = validated(() => synthModelgate({ 'aws:cdk:bundling-stacks': [], ...deployContext(block) }, SYNTH_ENV)));
    }, 120_000);

    it('synthesizes with its context: a domain name in the zone per hostname it names, and the domain as issuer', () => {
      const context = deployContext(block);
      const hostnames = Object.values(resourcesOfType(template, 'AWS::ApiGateway::DomainName')).map((domain) => domain.Properties!.DomainName).sort();
      expect(hostnames).toEqual([context['modelgate:domainName'], ...Object.values(JSON.parse(context['modelgate:regionalHostnames']!) as Record<string, string>)].sort());
      const records = Object.values(resourcesOfType(template, 'AWS::Route53::RecordSet')).map((record) => record.Properties!);
      expect(records.every((record) => record.HostedZoneId === context['modelgate:hostedZoneId'])).toBe(true);
      expect(records).toHaveLength(hostnames.length * 2);
      expect(template.toJSON().Outputs.ApiUrl.Value).toBe(`https://${context['modelgate:domainName']}/api/v1`);
    });

    it('calls, after the deploy, only routes of the API on hostnames the stack serves', () => {
      const hostnames = Object.values(resourcesOfType(template, 'AWS::ApiGateway::DomainName')).map((domain) => domain.Properties!.DomainName);
      const urls = [...block.matchAll(/\bcurl\b[^\n]*?(https:\/\/\S+)/g)].map((match) => new URL(match[1]!));
      expect(urls.length).toBeGreaterThan(0);
      for (const url of urls) {
        expect([url.href, hostnames.includes(url.hostname), matchRoute('GET', url.pathname)]).toEqual([url.href, true, expect.objectContaining({ route: expect.anything() })]);
      }
    });
  });

  describe("the CDK app of one's own", () => {
    let project: string;
    let template: StackTemplate & { Outputs: Record<string, unknown> };
    let run: ReturnType<typeof spawnSync>;
    beforeAll(() => {
      // Inside this checkout, so aws-cdk-lib and cdk-nag resolve as they do for modelgate; the
      // package `modelgate` is this checkout, linked as `npm install ../modelgate` links it.
      mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
      project = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'modelgate-docs-app-'));
      mkdirSync(join(project, 'bin'));
      mkdirSync(join(project, 'node_modules'));
      symlinkSync(ROOT, join(project, 'node_modules', 'modelgate'), 'dir');
      writeFileSync(join(project, 'bin', 'app.ts'), blockWith('ts', 'new Modelgate('));
      // What the CDK CLI gives an app it runs: context (the app's feature flags), the output folder
      // and the environment; bundling is left to the bundle suite, and CloudFormation's validation
      // to test/lib/deploy-environments.test.ts, which validates this very instance in every environment.
      run = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join('bin', 'app.ts')], {
        cwd: project,
        encoding: 'utf8',
        env: {
          ...process.env,
          CDK_OUTDIR: join(project, 'cdk.out'),
          CDK_CONTEXT_JSON: JSON.stringify({ ...FEATURE_FLAGS, 'aws:cdk:bundling-stacks': [] }),
          CDK_DEFAULT_ACCOUNT: SYNTH_ENV.account,
          CDK_DEFAULT_REGION: SYNTH_ENV.region,
        },
        timeout: 120_000,
      });
      if (run.status === 0) template = JSON.parse(readFileSync(join(project, 'cdk.out', 'Platform.template.json'), 'utf8'));
    }, 150_000);
    afterAll(() => {
      if (project) rmSync(project, { recursive: true, force: true });
    });

    it("synthesizes, cdk-nag's AwsSolutions rules finding nothing unacknowledged", () => {
      expect({ status: run.status, stderr: run.status === 0 ? '' : String(run.stderr) }).toEqual({ status: 0, stderr: '' });
    });

    it('holds the instance it names, with its settings, and the outputs it wires from the members', () => {
      const resources = Object.values(template.Resources);
      expect(resources.find((resource) => resource.Type === 'AWS::KMS::Alias')!.Properties!.AliasName).toBe('alias/Embedded/access-token-signing');
      const exchange = Object.entries(template.Resources).find(([id, resource]) => resource.Type === 'AWS::Lambda::Function' && /^GatewayTokenExchange[0-9A-F]{8}$/.test(id))!;
      expect(exchange[1].Properties!.Environment.Variables.EXCHANGE_RATE_LIMIT).toBe('30');
      // Beside the REST API's own `Endpoint` output, which aws-cdk-lib adds.
      expect(Object.keys(template.Outputs)).toEqual(
        expect.arrayContaining(['GatewayKeysTable', 'GatewayModelsTable', 'GatewayPoliciesTable', 'GatewayProviderKeysSecret', 'GatewaySigningKeyAlias', 'GatewayUrl', 'GatewayWebAcl']),
      );
    });
  });
});
