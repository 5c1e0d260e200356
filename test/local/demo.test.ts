import { runDemo, tryItYourself } from '../../local/demo';
import { startTestService, type TestService } from '../support/local-service';
import { exchangeForm } from '../../local/exchange-form';

describe('npm run demo against the running local service', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service.stop();
  });

  it('creates an issuer and a policy through the admin API, exchanges a workload JWT, verifies the token, lists models and streams a completion with it, and shows its usage, printing each step', async () => {
    const lines: string[] = [];
    const result = await runDemo({ dataDir: service.dataDir, out: (line) => lines.push(line) });
    try {
      expect(lines.map((line) => line.split(' ')[0])).toEqual(['1.', '2.', '3.', '4.', '5.', '6.', '7.', '8.', '9.', '10.', '11.', '12.', '13.']);
      expect(lines[2]).toContain(`Issuer ${result.issuerId} created through the admin API`);
      expect(lines[5]).toMatch(/^6\. Exchanged at POST \/oauth\/token: Bearer token, scope inference, expires in \d+ s \(request id [0-9a-f-]{36}\)$/);
      expect(lines[6]).toContain(`federation_policy_id ${result.policyId}`);
      expect(lines[7]).toMatch(/^8\. The catalog with the access token as bearer: \d+ models/);
      expect(lines[8]).toBe('9. Streamed completion from openai/gpt-4o-mini through the openai client with the access token: 5 chunks, "hello from a federated workload"');
      expect(lines[9]).toMatch(/^10\. Usage of the acting key [0-9a-f]{12}…: \$0\.00000\d+ in all, \$0\.00000\d+ today$/);
      expect(lines[10]).toMatch(/^11\. Exchange event: issued for system:serviceaccount:demo:workload from 127\.0\.0\.1/);
      expect(lines[11]).toMatch(/^12\. Exchanged with a DPoP proof: DPoP token bound to key [A-Za-z0-9_-]{43} \(cnf\.jkt\)$/);
      expect(lines[12]).toBe(
        '13. The openai client with a DPoP fetch (a new proof per request): "hello from a bound workload"; the same token sent as a bearer token: 401 DPoP error="invalid_token"',
      );

      // The printed hand-exchange works: the identity provider serves fresh workload tokens.
      const steps = tryItYourself(result, service.dataDir);
      expect(steps.at(-1)).toContain(`${result.identityProvider.issuerUrl}/token`);
      const { Agent, request } = await import('node:https');
      const { readFileSync } = await import('node:fs');
      const fetchToken = (path: string) =>
        new Promise<string>((resolve, reject) => {
          request(`${result.identityProvider.issuerUrl}${path}`, { agent: new Agent({ ca: readFileSync(`${service.dataDir}/dev-ca.pem`) }) }, (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () => resolve(text));
          })
            .on('error', reject)
            .end();
        });
      const jwt = await fetchToken('/token');
      const exchanged = await service.call('/oauth/token', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(exchangeForm(jwt, result.policyId)).toString(),
      });
      expect(exchanged.status).toBe(200);

      // The settings page's way: the policy tester says why a token for another audience is refused.
      expect(steps).toContain(`  curl -s --cacert ${service.dataDir}/dev-ca.pem "${result.identityProvider.issuerUrl}/token?aud=https://wrong.example"`);
      const tested = await service.call(`/workload-identity/policies/${result.policyId}/evaluate`, {
        key: service.runtime.demo.keys.managementReadOnly,
        method: 'POST',
        body: { subject_token: await fetchToken('/token?aud=https://wrong.example') },
      });
      expect(tested.body.data.result).toBe('fail');
      expect(tested.body.data.steps.find((step: { status: string }) => step.status === 'failed')).toEqual({
        name: 'aud',
        status: 'failed',
        detail: 'No aud value of the token ("https://wrong.example") equals the policy audience "modelgate-demo" exactly.',
      });
    } finally {
      await result.identityProvider.close();
    }
  });

  it('says plainly when the service is not running', async () => {
    await expect(runDemo({ dataDir: '/nonexistent-modelgate', out: () => undefined })).rejects.toThrow(
      '/nonexistent-modelgate/demo.json is missing: start the service first with npm start',
    );
  });
});
