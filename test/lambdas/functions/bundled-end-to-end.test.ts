import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { CreateKeyCommand } from '@aws-sdk/client-kms';
import { createRemoteJWKSet, customFetch, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import OpenAI from 'openai';
import * as oauthClient from 'openid-client';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { SIGNING_KEY_REGISTRATION_PROPERTIES } from '../../../lambdas/signing/registration-properties';
import { PUBLISHED_KEYS_CACHE_SECONDS } from '../../../lambdas/signing/cached-signing-keys';
import { TRACING_ENVIRONMENT } from '../../../lib/constructs/service-function';
import { dpopFetch, dpopProof, newDpopKey } from '../../../local/dpop-fetch';
import { exchangeForm } from '../../../local/exchange-form';
import { AUDIENCE, CONSTRUCT_IDS, EU_ORIGIN, PROVIDER_KEY, SUBJECT, useBundledStack } from '../../support/bundled-stack';
import { eventually } from '../../support/eventually';
import { startLambdaProcess, type LambdaProcess } from '../../support/lambda-process';
import { cloudFormationEvent } from '../../support/local-deployment';

const ROOT = join(__dirname, '..', '..', '..');

describe('the synthesized stack, served from its function packages', () => {
  const stack = useBundledStack();
  const { call } = stack;

  describe('the demo, end to end', () => {
    let issuerId: string;
    let policyId: string;
    let accessToken: string;
    let exchangeRequestId: string;

    it('creates an issuer and a policy through the management API', async () => {
      const issuer = await call('/workload-identity/issuers', {
        method: 'POST',
        key: stack.demo.keys.managementReadWrite,
        json: { name: 'Bundle suite identity provider', issuer_url: stack.identityProvider.issuerUrl },
      });
      expect(issuer.status).toBe(201);
      issuerId = issuer.body.data.id;
      const policy = await call('/workload-identity/policies', {
        method: 'POST',
        key: stack.demo.keys.managementReadWrite,
        json: { name: 'Payments worker', issuer_id: issuerId, subject: SUBJECT, audience: AUDIENCE, api_key_hash: hashApiKey(stack.demo.keys.workspace) },
      });
      expect(policy.status).toBe(201);
      policyId = policy.body.data.id;
    });

    it('exchanges a workload JWT from the HTTPS identity provider for an access token signed through KMS Sign', async () => {
      const signsBefore = stack.deployment.kms.requests.filter((r) => r.operation === 'Sign').length;
      const exchanged = await call('/oauth/token', {
        method: 'POST',
        form: exchangeForm(stack.identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE }), policyId),
      });
      expect(exchanged.status).toBe(200);
      expect(exchanged.body).toMatchObject({ token_type: 'Bearer', issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
      accessToken = exchanged.body.access_token;
      exchangeRequestId = exchanged.headers.get('x-amzn-requestid')!;
      // The issuer's keys, fetched over HTTPS by the token exchange process.
      expect(stack.identityProvider.requests).toEqual(expect.arrayContaining(['/.well-known/openid-configuration', '/.well-known/jwks.json']));
      const signs = stack.deployment.kms.requests.filter((r) => r.operation === 'Sign');
      expect(signs.length).toBe(signsBefore + 1);
      expect(signs.at(-1)!.body).toMatchObject({ KeyId: stack.signingKeyArn, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' });
    });

    it('verifies the access token with jose against the JWKS the gateway serves', async () => {
      const jwks = createRemoteJWKSet(new URL(`${stack.apiUrl}/oauth/jwks`), { [customFetch]: stack.deployment.gateway.fetch });
      const { payload } = await jwtVerify(accessToken, jwks, { issuer: stack.apiUrl, audience: stack.apiUrl, typ: 'at+jwt', algorithms: ['ES256'] });
      expect(decodeProtectedHeader(accessToken).kid).toBe(stack.registeredKid);
      expect(payload).toMatchObject({ sub: SUBJECT, federation_policy_id: policyId, federation_issuer_id: issuerId });
    });

    it('lists the catalog with the access token as bearer', async () => {
      const catalog = await call('/models/user?limit=3', { key: accessToken });
      expect(catalog.status).toBe(200);
      expect(catalog.body.data).toHaveLength(3);
    });

    it('streams a completion to the openai client from the HTTPS upstream, with the provider key read from Secrets Manager', async () => {
      stack.upstream.script('alpha', { kind: 'answer', delayMs: 150 });
      const client = new OpenAI({ apiKey: accessToken, baseURL: stack.apiUrl, maxRetries: 0, fetch: stack.deployment.gateway.fetch });
      const stream = await client.chat.completions.create({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'streamed through the bundle' }],
        stream: true,
      });
      const arrivals: { at: number; content: string }[] = [];
      for await (const chunk of stream) {
        const content = chunk.choices[0]?.delta.content;
        if (content) arrivals.push({ at: Date.now(), content });
      }
      expect(arrivals.map((arrival) => arrival.content).join('')).toBe('streamed through the bundle');
      // Relayed as produced: the words arrive as the upstream sends them, 150 ms apart.
      expect(arrivals.at(-1)!.at - arrivals[0]!.at).toBeGreaterThanOrEqual(250);

      const received = stack.upstream.received.at(-1)!;
      expect(received.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
      expect(stack.deployment.secrets.requests.map((r) => [r.action, r.accessKeyId, r.resource])).toContainEqual([
        'secretsmanager:GetSecretValue',
        'Inference',
        stack.deployment.outputs.ProviderCredentialsSecretArn,
      ]);

      // The Lambda runtime's streaming helpers: the prelude, then one write per event.
      const record = stack.deployment.gateway.requests.findLast((r) => r.resource === '/api/v1/chat/completions')!;
      expect(record.streamed).toMatchObject({
        contentType: 'application/vnd.awslambda.http-integration-response',
        prelude: { statusCode: 200, headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive' } },
      });
      expect(record.streamed!.writes).toBeGreaterThanOrEqual(arrivals.length + 1);
    });

    it('keeps a response of the Responses API in its table, read back and continued through the package', async () => {
      const client = new OpenAI({ apiKey: accessToken, baseURL: stack.apiUrl, maxRetries: 0, fetch: stack.deployment.gateway.fetch });
      const first = await client.responses.create({ model: 'openai/gpt-4o-mini', input: 'kept through the bundle' });
      expect(first).toMatchObject({ status: 'completed', store: true, output_text: 'kept through the bundle' });
      await expect(client.responses.retrieve(first.id)).resolves.toMatchObject({ id: first.id, output: first.output });
      const next = await client.responses.create({ model: 'openai/gpt-4o-mini', previous_response_id: first.id, input: 'and continued' });
      expect(next).toMatchObject({ status: 'completed', previous_response_id: first.id });
      // The upstream was sent the kept conversation first.
      expect(stack.upstream.received.at(-1)!.body).toMatchObject({ messages: [{ role: 'user', content: 'kept through the bundle' }, { role: 'assistant' }, { role: 'user', content: 'and continued' }] });
    });

    it("shows the acting key's usage at GET /key", async () => {
      // The completions above were recorded before they were answered.
      const answer = await call('/key', { key: accessToken });
      expect(answer.status).toBe(200);
      expect(answer.body.data.usage).toBeGreaterThan(0);
      expect(answer.body.data).toMatchObject({ organization_id: stack.demo.organizationId, workspace_id: stack.demo.workspaceId, is_management_key: false });
    });

    it('runs the usage rollup from its package when its hourly schedule fires, reading the organizations and folding nothing not yet closed', async () => {
      const [schedule] = Object.values(stack.deployment.schedules);
      expect(schedule!.expression).toBe('rate(1 hour)');
      const [outcome] = await schedule!.fire();
      expect(outcome!.ok).toBe(true);
      // Today's completions are not closed yet: nothing is folded, every organization read.
      expect(JSON.parse((outcome as { payload: string }).payload)).toMatchObject({ organizations: expect.any(Number), days: 0 });
      expect(JSON.parse((outcome as { payload: string }).payload).organizations).toBeGreaterThan(0);
    });

    it('records the exchange event, with the client address and request id API Gateway gave', async () => {
      const events = await call(`/workload-identity/events?policy_id=${policyId}&limit=1`, { key: stack.demo.keys.managementReadOnly });
      expect(events.status).toBe(200);
      expect(events.body.data[0]).toMatchObject({ outcome: 'issued', subject: SUBJECT, source_ip: '127.0.0.1', request_id: exchangeRequestId });
    });

    it.each(['oauth2', 'oidc'] as const)(
      "exchanges again through openid-client, configured by discovery() (%s: RFC 8414's path-inserted document at the domain's root, or OpenID discovery) from the domain's URL alone",
      async (algorithm) => {
        const fetched: string[] = [];
        const config = await oauthClient.discovery(new URL(stack.apiUrl), policyId, undefined, oauthClient.None(), {
          algorithm,
          [oauthClient.customFetch]: (url, options) => (fetched.push(url), stack.deployment.gateway.fetch(url, options as RequestInit)),
        });
        expect(fetched[0]).toBe(
          algorithm === 'oauth2' ? 'https://api.example.com/.well-known/oauth-authorization-server/api/v1' : `${stack.apiUrl}/.well-known/openid-configuration`,
        );
        const tokens = await oauthClient.genericGrantRequest(config, 'urn:ietf:params:oauth:grant-type:token-exchange', {
          subject_token: stack.identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE }),
          subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
          federation_policy_id: policyId,
        });
        expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'inference' });
        const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!), { [customFetch]: stack.deployment.gateway.fetch });
        expect((await jwtVerify(tokens.access_token, jwks, { issuer: config.serverMetadata().issuer, audience: stack.apiUrl })).payload.sub).toBe(SUBJECT);
      },
    );
  });

  describe('DPoP-bound tokens through the packages (RFC 9449)', () => {
    it('binds a token to a proof made for the token endpoint, takes it with a proof per request on every hostname, through the openai client too, and refuses it as a bearer token or with a proof for another hostname', async () => {
      const policy = await call('/workload-identity/policies', {
        method: 'POST',
        key: stack.demo.keys.managementReadWrite,
        json: {
          name: 'Bound worker',
          issuer_id: (await call('/workload-identity/issuers', { key: stack.demo.keys.managementReadOnly })).body.data[0].id,
          subject: SUBJECT,
          audience: AUDIENCE,
          api_key_hash: hashApiKey(stack.demo.keys.workspace),
          require_dpop: true,
        },
      });
      expect([policy.status, policy.body.data.require_dpop]).toEqual([201, true]);
      const form = {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        federation_policy_id: policy.body.data.id,
      };
      const refused = await call('/oauth/token', { method: 'POST', form: { ...form, subject_token: stack.identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE }) } });
      expect([refused.status, refused.body.error]).toEqual([400, 'invalid_dpop_proof']);

      const key = await newDpopKey();
      const bound = await call('/oauth/token', {
        method: 'POST',
        headers: { DPoP: await dpopProof(key, 'POST', `${stack.apiUrl}/oauth/token`) },
        form: { ...form, subject_token: stack.identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE }) },
      });
      expect([bound.status, bound.body.token_type, decodeJwt(bound.body.access_token).cnf]).toEqual([200, 'DPoP', { jkt: key.jkt }]);
      const token = bound.body.access_token as string;

      stack.upstream.script('alpha', { kind: 'answer', delayMs: 0 });
      const client = new OpenAI({ apiKey: 'unused', baseURL: stack.apiUrl, maxRetries: 0, fetch: dpopFetch(token, key, stack.deployment.gateway.fetch) });
      const completion = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'bound' }] });
      expect(completion.choices[0]!.message.role).toBe('assistant');
      // A proof names the URL of the request, on whichever hostname the gateway serves it (RFC 9449 §4.3).
      for (const base of [stack.apiUrl, `${EU_ORIGIN}/api/v1`, stack.stageUrl]) {
        const catalog = await dpopFetch(token, key, stack.deployment.gateway.fetch)(`${base}/models/user?limit=1`);
        expect([base, catalog.status]).toEqual([base, 200]);
      }
      const elsewhere = await call('/models/user?limit=1', {
        headers: { Authorization: `DPoP ${token}`, DPoP: await dpopProof(key, 'GET', `${EU_ORIGIN}/api/v1/models/user`, token) },
      });
      expect([elsewhere.status, elsewhere.headers.get('www-authenticate')]).toEqual([401, expect.stringMatching(/^DPoP error="invalid_dpop_proof"/)]);
      const stolen = await call('/models/user?limit=1', { key: token });
      expect([stolen.status, stolen.headers.get('www-authenticate')]).toEqual([401, expect.stringMatching(/^DPoP error="invalid_token"/)]);
    });
  });

  describe('DPoP through a regional hostname (RFC 9449 htu)', () => {
    it('binds a token to a proof made for the token endpoint on the regional hostname called, and refuses one for a hostname the stage does not serve', async () => {
      const issuerId = (await call('/workload-identity/issuers', { key: stack.demo.keys.managementReadOnly })).body.data[0].id;
      const policy = await call('/workload-identity/policies', {
        method: 'POST',
        key: stack.demo.keys.managementReadWrite,
        json: { name: 'Regional worker', issuer_id: issuerId, subject: SUBJECT, audience: AUDIENCE, api_key_hash: hashApiKey(stack.demo.keys.workspace), require_dpop: true },
      });
      const key = await newDpopKey();
      const exchange = async (htu: string) =>
        call(`${EU_ORIGIN}/api/v1/oauth/token`, {
          method: 'POST',
          headers: { DPoP: await dpopProof(key, 'POST', htu) },
          form: exchangeForm(stack.identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE }), policy.body.data.id),
        });
      const bound = await exchange(`${EU_ORIGIN}/api/v1/oauth/token`);
      expect([bound.status, bound.body.token_type, decodeJwt(bound.body.access_token).cnf]).toEqual([200, 'DPoP', { jkt: key.jkt }]);
      const elsewhere = await exchange('https://eu.evil.example/api/v1/oauth/token');
      expect([elsewhere.status, elsewhere.body.error]).toEqual([400, 'invalid_dpop_proof']);
    });
  });

  describe('packages, as Lambda loads them', () => {
    it('keeps the SDK out of every package and the accounts service and CEL engine out of the JWKS package', () => {
      const sourcesOf = (constructId: string) => {
        const { codeDir } = stack.deployment.functions[constructId]!.spec;
        const map = JSON.parse(readFileSync(join(codeDir, 'index.mjs.map'), 'utf8')) as { sources: string[] };
        return map.sources.map((source) => relative(ROOT, resolve(codeDir, source)));
      };
      for (const id of CONSTRUCT_IDS) expect([id, sourcesOf(id).filter((source) => source.includes('@aws-sdk/'))]).toEqual([id, []]);
      const jwks = sourcesOf('Jwks');
      expect(jwks).toContain('lambdas/functions/jwks/handler.ts');
      expect(jwks.filter((source) => /accounts-service|catalog-index|management-api/.test(source))).toEqual([]);
      // The OpenAPI document imports bounds, not the modules that enforce them with the CEL engine.
      expect(jwks.filter((source) => /cel-js|federation\/condition|federation-validation/.test(source))).toEqual([]);
    });

    it('fails the cold start of a package, naming the variable, when the template leaves out one it reads', async () => {
      await expect(startLambdaProcess(stack.deployment.specOf('Catalog', { without: ['MODELS_TABLE'] }))).rejects.toThrow(/MODELS_TABLE is not set/);
      await expect(startLambdaProcess(stack.deployment.specOf('TokenExchange', { without: ['API_BASE_URL'] }))).rejects.toThrow(/API_BASE_URL is not set/);
    });

    it('traces the catalog package to the X-Ray daemon when it runs in Lambda, and loads no X-Ray SDK outside Lambda', async () => {
      // The stack's environment, outside Lambda: the deployed catalog has served requests untraced.
      expect(stack.deployment.functions.Catalog!.spec.environment).toMatchObject(TRACING_ENVIRONMENT);
      expect(await stack.deployment.functions.Catalog!.probe()).toEqual({ namespaces: [] });

      // The X-Ray daemon's side of its UDP protocol: a JSON header line, then one segment document.
      const daemon = createSocket('udp4');
      const documents: { name: string; trace_id: string }[] = [];
      let segmentsArrived!: () => void;
      const handlerAndDynamoDb = new Promise<void>((resolve) => (segmentsArrived = resolve));
      daemon.on('message', (message) => {
        const [header, document] = message.toString().split('\n');
        if (JSON.parse(header!).format === 'json') documents.push(JSON.parse(document!));
        const names = documents.map((d) => d.name);
        if (names.includes('## index.handler') && names.includes('DynamoDB')) segmentsArrived();
      });
      await new Promise<void>((ready) => daemon.bind(0, '127.0.0.1', ready));
      let traced: LambdaProcess | undefined;
      try {
        // The same package with the variables the Lambda runtime adds for an invocation with active tracing.
        const root = '1-6740f1a2-5b3c4d5e6f708192a3b4c5d6';
        traced = await startLambdaProcess(
          stack.deployment.specOf('Catalog', {
            extra: {
              AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
              _X_AMZN_TRACE_ID: `Root=${root};Parent=53995c3f42cd8ad8;Sampled=1`,
              AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${(daemon.address() as { port: number }).port}`,
              AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
            },
          }),
        );
        const event = stack.deployment.gateway.requests.find((r) => r.resource === '/api/v1/models/user' && r.status === 200)!.event;
        const result = await traced.invoke(event);
        expect(result.ok && JSON.parse(result.payload).statusCode).toBe(200);
        expect(await traced.probe()).toEqual({ namespaces: ['AWSXRay'] });
        // Segments go out over UDP as the invocation ends: wait for both to arrive.
        await handlerAndDynamoDb;
        expect(new Set(documents.map((d) => d.trace_id))).toEqual(new Set([root]));
      } finally {
        await traced?.stop();
        daemon.close();
      }
    });

    it('stays within the memory the template gives each function', () => {
      const used = Object.fromEntries(Object.entries(stack.deployment.functions).map(([id, fn]) => [id, `${fn.maxMemoryUsedMb}/${fn.spec.memorySize} MB`]));
      for (const [id, fn] of Object.entries(stack.deployment.functions)) {
        expect([id, fn.maxMemoryUsedMb < fn.spec.memorySize, used[id]]).toEqual([id, true, used[id]]);
      }
      // One environment each: no invocation timed out or crashed its process.
      expect(Object.values(stack.deployment.functions).map((fn) => fn.coldStarts)).toEqual(CONSTRUCT_IDS.map(() => 1));
    });
  });

  describe('rotation', () => {
    it('registers the replacement of the stack\'s key through the registrar on a CloudFormation Update; JWKS publishes it first, the old key after', async () => {
      const [logicalId, resource] = Object.entries(stack.deployment.assembly.template.Resources).find(([, r]) => r.Type === 'Custom::SigningKeyRegistration')!;
      const oldProperties = stack.deployment.resolver.resolve(resource.Properties) as Record<string, string>;
      // CloudFormation replaces the key (a property that cannot change in place changed): the
      // template's references to it, and the registrar's grant on it, name the new key.
      const [keyId, key] = Object.entries(stack.deployment.assembly.template.Resources).find(([, r]) => r.Type === 'AWS::KMS::Key' && r.Properties?.KeyUsage === 'SIGN_VERIFY')!;
      const replacement = await stack.deployment.kms.client().send(
        new CreateKeyCommand({
          KeySpec: key.Properties!.KeySpec,
          KeyUsage: key.Properties!.KeyUsage,
          Policy: JSON.stringify(stack.deployment.resolver.resolve(key.Properties!.KeyPolicy)),
          Tags: key.Properties!.Tags.map((tag: { Key: string; Value: string }) => ({ TagKey: tag.Key, TagValue: tag.Value })),
        }),
      );
      stack.deployment.replaced(keyId, { ref: replacement.KeyMetadata!.KeyId!, attributes: { Arn: replacement.KeyMetadata!.Arn!, KeyId: replacement.KeyMetadata!.KeyId! } });
      const properties = stack.deployment.resolver.resolve(resource.Properties) as Record<string, string>;
      expect(properties[SIGNING_KEY_REGISTRATION_PROPERTIES.signingKeyArn]).toBe(replacement.KeyMetadata!.Arn);
      const updated = await stack.deployment.functions.SigningKeyRegistrar!.invoke(
        cloudFormationEvent('Update', logicalId, resource.Type, properties, stack.deployment.resolver, {
          PhysicalResourceId: stack.registeredKid,
          OldResourceProperties: oldProperties,
        }),
      );
      expect(updated.ok).toBe(true);
      const newKid = JSON.parse((updated as { payload: string }).payload).PhysicalResourceId as string;
      expect(newKid).not.toBe(stack.registeredKid);
      // A JWKS container that served the key set within its cache time serves it until then.
      await eventually(async () => {
        const jwks = await call('/oauth/jwks');
        expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual([newKid, stack.registeredKid]);
      }, (PUBLISHED_KEYS_CACHE_SECONDS + 2) * 1000);
    }, 120_000);
  });

  describe('IAM', () => {
    it("makes no AWS request its role's policies deny: every call of every package passed the IAM gate", () => {
      expect(stack.iam.errors).toEqual([]);
      expect(stack.iam.denials).toEqual([]);
      const seen = stack.iam.seenActions();
      expect(seen.TokenExchange?.['kms:Sign']?.resources).toEqual([stack.signingKeyArn.replace(/:[a-z0-9-]+:\d{12}:/, ':us-east-1:123456789012:')]);
      expect(Object.keys(seen.SigningKeyRegistrar ?? {})).toEqual(expect.arrayContaining(['kms:GetPublicKey', 'dynamodb:PutItem']));
      expect(seen.Inference?.['secretsmanager:GetSecretValue']?.allowed).toBeGreaterThan(0);
      expect(Object.keys(seen).sort()).toEqual(CONSTRUCT_IDS.filter((id) => id !== 'SettingsPage'));
    });
  });
});
