import { randomUUID } from 'node:crypto';
import { MemoryFederationStore } from './memory-federation-store';
import { makePolicy } from './federation-fixtures';
import { describeFederationStoreContract } from './federation-store-contract';

describeFederationStoreContract('MemoryFederationStore', () => {
  const store = new MemoryFederationStore();
  return { store: () => store, organization: () => randomUUID() };
});

describe('MemoryFederationStore', () => {
  it('hands out copies: changing a read value changes nothing stored', async () => {
    const store = new MemoryFederationStore();
    const policy = makePolicy();
    await store.createPolicy(policy);
    const read = (await store.getPolicy(policy.id))!;
    read.enabled = false;
    read.claimChecks.scopes = 'changed';
    expect(await store.getPolicy(policy.id)).toEqual(policy);
  });
});
