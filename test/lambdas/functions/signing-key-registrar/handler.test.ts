import { GetPublicKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import { createPublicKey } from 'node:crypto';
import { createSigningKeyRegistrar } from '../../../../lambdas/functions/signing-key-registrar/handler';
import { kmsPublicJwk } from '../../../../lambdas/aws/kms-signer';
import { publishedKeys } from '../../../../lambdas/signing/published-keys';
import { registerSigningKey } from '../../../../lambdas/signing/signing-key-registry';
import { FixedClock } from '../../../support/fixed-clock';
import { startKmsStandIn, type KmsStandIn } from '../../../support/kms-stand-in';
import { MemorySigningKeyStore } from '../../../support/memory-signing-key-store';
import { lambdaContext, recordingTelemetry } from '../../../support/telemetry';
import { logicalIdOf, synthModelgate } from '../../../lib/template-helpers';

/**
 * The registrar run with the properties the synthesized template sends: the custom resource's
 * `Properties` are taken from the template and their intrinsics resolved to a key created in
 * the KMS stand-in, so a renamed property on either side fails here, not in a deployment.
 */
describe('signing-key registrar', () => {
  let kms: KmsStandIn;
  let client: KMSClient;
  let templateProperties: Record<string, unknown>;
  let keyLogicalId: string;

  beforeAll(async () => {
    // Bundling is irrelevant to the properties; skipping it keeps this synth fast.
    const { template } = synthModelgate({ 'aws:cdk:bundling-stacks': [] });
    const resources = Object.values(template.findResources('Custom::SigningKeyRegistration'));
    expect(resources).toHaveLength(1);
    templateProperties = resources[0]!.Properties as Record<string, unknown>;
    keyLogicalId = logicalIdOf(template, 'AWS::KMS::Key', 'SigningKey');
    kms = await startKmsStandIn();
    client = kms.client();
  }, 120_000);
  afterAll(async () => {
    await kms.stop();
  });

  const createKey = () => kms.createSigningKey();

  /** The template's properties with the key's `Fn::GetAtt Arn` resolved to `keyArn`, as CloudFormation sends them. */
  function resolvedProperties(keyArn: string): Record<string, unknown> {
    const resolve = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(resolve);
      if (value && typeof value === 'object') {
        const getAtt = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
        if (getAtt) {
          if (getAtt[0] === keyLogicalId && getAtt[1] === 'Arn') return keyArn;
          return `arn:aws:lambda:eu-west-1:111122223333:function:${getAtt[0]}`;
        }
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
      }
      return value;
    };
    return resolve(templateProperties) as Record<string, unknown>;
  }

  const base = {
    ServiceToken: 'arn:aws:lambda:eu-west-1:111122223333:function:provider',
    ResponseURL: 'https://cloudformation-custom-resource-response.example/',
    StackId: 'arn:aws:cloudformation:eu-west-1:111122223333:stack/Modelgate/1',
    RequestId: 'request-1',
    LogicalResourceId: 'SigningKeyRegistrationResource',
    ResourceType: 'Custom::SigningKeyRegistration',
  };
  const createEvent = (keyArn: string): CloudFormationCustomResourceEvent => ({
    ...base,
    RequestType: 'Create',
    ResourceProperties: resolvedProperties(keyArn) as never,
  });
  const updateEvent = (keyArn: string, oldKeyArn: string, physicalId: string): CloudFormationCustomResourceEvent => ({
    ...base,
    RequestType: 'Update',
    PhysicalResourceId: physicalId,
    ResourceProperties: resolvedProperties(keyArn) as never,
    OldResourceProperties: resolvedProperties(oldKeyArn) as never,
  });
  const deleteEvent = (keyArn: string, physicalId: string): CloudFormationCustomResourceEvent => ({
    ...base,
    RequestType: 'Delete',
    PhysicalResourceId: physicalId,
    ResourceProperties: resolvedProperties(keyArn) as never,
  });

  function registrar(store: MemorySigningKeyStore, clock: FixedClock) {
    const telemetry = recordingTelemetry('signingKeyRegistrar');
    return { telemetry, handler: createSigningKeyRegistrar({ signingKeys: store, kms: client, clock, telemetry }) };
  }

  async function kidOf(keyArn: string): Promise<string> {
    const { PublicKey } = await client.send(new GetPublicKeyCommand({ KeyId: keyArn }));
    return calculateJwkThumbprint(await exportJWK(createPublicKey({ key: Buffer.from(PublicKey!), format: 'der', type: 'spki' })), 'sha256');
  }

  it('Create: registers the key named by the template property as the active signing key', async () => {
    const store = new MemorySigningKeyStore();
    const clock = new FixedClock(new Date('2026-11-21T12:00:00Z'));
    const keyArn = await createKey();
    const { handler, telemetry } = registrar(store, clock);
    const requestsBefore = kms.requests.length;

    const response = await handler(createEvent(keyArn), lambdaContext());
    // The SDK's request as KMS receives it: the key from the template property, nothing else.
    expect(kms.requests.slice(requestsBefore)).toEqual([{ operation: 'GetPublicKey', body: { KeyId: keyArn } }]);

    const kid = await kidOf(keyArn);
    expect(response).toEqual({ PhysicalResourceId: kid, Data: { Kid: kid } });
    const records = await store.list();
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ kid, keyRef: keyArn, status: 'active', createdAt: '2026-11-21T12:00:00.000Z', retiredAt: null });
    expect(records[0]!.publicJwk).toMatchObject({ kty: 'EC', crv: 'P-256', kid, alg: 'ES256', use: 'sig' });
    expect(telemetry.lines.some((line) => line.includes('signing key registered') && line.includes(kid))).toBe(true);
  });

  it('Update with a new key ARN: the new key signs, the old one is retired now and still published', async () => {
    const store = new MemorySigningKeyStore();
    const clock = new FixedClock(new Date('2026-11-21T12:00:00Z'));
    const oldArn = await createKey();
    const newArn = await createKey();
    const { handler } = registrar(store, clock);
    const created = await handler(createEvent(oldArn), lambdaContext());
    clock.set('2026-11-22T08:00:00Z');

    const updated = await handler(updateEvent(newArn, oldArn, created.PhysicalResourceId), lambdaContext());

    const [oldKid, newKid] = [await kidOf(oldArn), await kidOf(newArn)];
    // A new physical id: CloudFormation will send Delete for the old one after the update.
    expect(updated.PhysicalResourceId).toBe(newKid);
    expect(store.get(newKid)).toMatchObject({ status: 'active', keyRef: newArn, createdAt: '2026-11-22T08:00:00.000Z' });
    expect(store.get(oldKid)).toMatchObject({ status: 'retired', keyRef: oldArn, retiredAt: '2026-11-22T08:00:00.000Z' });
    expect(publishedKeys(await store.list(), clock.now(), 900).keys.map((k) => k.kid)).toEqual([newKid, oldKid]);

    // The cleanup Delete of the old physical id leaves the retirement time where it was.
    clock.advance(30_000);
    await handler(deleteEvent(oldArn, oldKid), lambdaContext());
    expect(store.get(oldKid)?.retiredAt).toBe('2026-11-22T08:00:00.000Z');
    expect(store.get(newKid)?.status).toBe('active');
  });

  it('Update with the same key ARN writes nothing', async () => {
    const store = new MemorySigningKeyStore();
    const clock = new FixedClock();
    const keyArn = await createKey();
    const { handler } = registrar(store, clock);
    const created = await handler(createEvent(keyArn), lambdaContext());
    const updated = await handler(updateEvent(keyArn, keyArn, created.PhysicalResourceId), lambdaContext());
    expect(updated.PhysicalResourceId).toBe(created.PhysicalResourceId);
    expect(store.writes).toHaveLength(1);
  });

  /** `signing-key rotate` as the operator CLI does it: a new KMS key registered as the active one. */
  async function rotate(store: MemorySigningKeyStore, clock: FixedClock): Promise<string> {
    const rotatedArn = await createKey();
    const { kid, publicJwk } = await kmsPublicJwk(client, rotatedArn);
    await registerSigningKey(store, { kid, keyRef: rotatedArn, publicJwk }, clock);
    return kid;
  }

  /** A stack key created on 21 November, and a key rotated in with the CLI the day after. */
  async function deployedThenRotated(stackArn: string) {
    const store = new MemorySigningKeyStore();
    const clock = new FixedClock(new Date('2026-11-21T12:00:00Z'));
    const { handler } = registrar(store, clock);
    const created = await handler(createEvent(stackArn), lambdaContext());
    clock.set('2026-11-22T09:00:00Z');
    const rotatedKid = await rotate(store, clock);
    return { store, clock, handler, created, rotatedKid };
  }

  it('a redeploy naming the same key keeps a key rotated in since then active, and writes nothing', async () => {
    const stackArn = await createKey();
    const { store, clock, handler, created, rotatedKid } = await deployedThenRotated(stackArn);
    const writes = store.writes.length;
    clock.set('2026-11-23T10:00:00Z');

    // CloudFormation sends Update when any property changes, e.g. the provider's service token.
    const updated = await handler(updateEvent(stackArn, stackArn, created.PhysicalResourceId), lambdaContext());

    expect(updated.PhysicalResourceId).toBe(created.PhysicalResourceId);
    expect(store.writes.length).toBe(writes);
    expect(store.get(rotatedKid)).toMatchObject({ status: 'active', retiredAt: null });
    expect(store.get(created.PhysicalResourceId)).toMatchObject({ status: 'retired', retiredAt: '2026-11-22T09:00:00.000Z' });
  });

  it('a replaced resource (Create) naming a recorded key keeps the newer rotated key active', async () => {
    const stackArn = await createKey();
    const { store, handler, created, rotatedKid } = await deployedThenRotated(stackArn);

    await handler(createEvent(stackArn), lambdaContext());

    expect(store.get(rotatedKid)?.status).toBe('active');
    expect(store.get(created.PhysicalResourceId)?.status).toBe('retired');
  });

  it('a new stack key after a rotation becomes active: it is the newest key, and the rotated one stays published', async () => {
    const [oldArn, newArn] = [await createKey(), await createKey()];
    const { store, clock, handler, created, rotatedKid } = await deployedThenRotated(oldArn);
    clock.set('2026-11-23T10:00:00Z');

    const updated = await handler(updateEvent(newArn, oldArn, created.PhysicalResourceId), lambdaContext());

    expect(store.get(updated.PhysicalResourceId)).toMatchObject({ status: 'active', keyRef: newArn });
    expect(store.get(rotatedKid)).toMatchObject({ status: 'retired', retiredAt: '2026-11-23T10:00:00.000Z' });
    expect(publishedKeys(await store.list(), clock.now(), 900).keys.map((k) => k.kid)).toEqual([updated.PhysicalResourceId, rotatedKid]);
  });

  it('a rolled-back key change signs with the previous key again, and the cleanup Delete leaves it active', async () => {
    const store = new MemorySigningKeyStore();
    const clock = new FixedClock(new Date('2026-11-21T12:00:00Z'));
    const [previousArn, failedArn] = [await createKey(), await createKey()];
    const { handler } = registrar(store, clock);
    const created = await handler(createEvent(previousArn), lambdaContext());
    clock.set('2026-11-22T09:00:00Z');
    const updated = await handler(updateEvent(failedArn, previousArn, created.PhysicalResourceId), lambdaContext());

    // UPDATE_ROLLBACK_IN_PROGRESS: the old properties come back, then the new physical id is deleted.
    clock.set('2026-11-22T09:05:00Z');
    const rolledBack = await handler(updateEvent(previousArn, failedArn, updated.PhysicalResourceId), lambdaContext());
    await handler(deleteEvent(failedArn, updated.PhysicalResourceId), lambdaContext());

    expect(rolledBack.PhysicalResourceId).toBe(created.PhysicalResourceId);
    expect(store.get(created.PhysicalResourceId)).toMatchObject({ status: 'active', retiredAt: null, createdAt: '2026-11-21T12:00:00.000Z' });
    expect(store.get(updated.PhysicalResourceId)).toMatchObject({ status: 'retired', retiredAt: '2026-11-22T09:05:00.000Z' });
  });

  it('Delete (stack deletion): retires the key, which stays published until its tokens expire', async () => {
    const store = new MemorySigningKeyStore();
    const clock = new FixedClock(new Date('2026-11-21T12:00:00Z'));
    const keyArn = await createKey();
    const { handler } = registrar(store, clock);
    const created = await handler(createEvent(keyArn), lambdaContext());
    const requestsBefore = kms.requests.length;
    clock.advance(5_000);

    const deleted = await handler(deleteEvent(keyArn, created.PhysicalResourceId), lambdaContext());

    expect(deleted).toEqual({ PhysicalResourceId: created.PhysicalResourceId });
    expect(store.get(created.PhysicalResourceId)).toMatchObject({ status: 'retired', retiredAt: '2026-11-21T12:00:05.000Z' });
    expect(kms.requests.length).toBe(requestsBefore);
  });

  it('fails the deployment naming the property when the key ARN is missing', async () => {
    const store = new MemorySigningKeyStore();
    const { handler } = registrar(store, new FixedClock());
    const event = { ...createEvent('unused'), ResourceProperties: { ServiceToken: base.ServiceToken } } as CloudFormationCustomResourceEvent;
    await expect(handler(event, lambdaContext())).rejects.toThrow("Create: resource property SigningKeyArn must be the signing key's ARN");
    expect(store.writes).toEqual([]);
  });

  it('fails the deployment when KMS does not know the key', async () => {
    const store = new MemorySigningKeyStore();
    const { handler } = registrar(store, new FixedClock());
    const missing = 'arn:aws:kms:eu-west-1:111122223333:key/00000000-0000-0000-0000-000000000000';
    await expect(handler(createEvent(missing), lambdaContext())).rejects.toThrow(`Key '${missing}' does not exist`);
    expect(store.writes).toEqual([]);
  });
});
