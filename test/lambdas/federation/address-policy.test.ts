import { refusedAddressKind } from '../../../lambdas/federation/address-policy';

describe('refusedAddressKind', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['10.20.30.40', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd00::1', 'private'],
    ['fc12:3456::1', 'private'],
    ['64:ff9b::a00:1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['169.254.170.2', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['100.64.0.1', 'shared address space'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::127.0.0.1', 'reserved'],
    ['2001:db8::1', 'documentation'],
    ['192.0.2.10', 'documentation'],
    ['idp.example.com', 'not an IP address'],
  ])('refuses %s as %s', (address, kind) => {
    expect(refusedAddressKind(address, { allowLoopback: false })).toBe(kind);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])(
    'allows the public address %s',
    (address) => {
      expect(refusedAddressKind(address, { allowLoopback: false })).toBeNull();
    },
  );

  it('allows loopback, and only loopback, when the local runtime says so', () => {
    const local = { allowLoopback: true };
    expect(['127.0.0.1', '::1', '::ffff:127.0.0.1'].map((a) => refusedAddressKind(a, local))).toEqual([null, null, null]);
    expect(['10.0.0.1', '169.254.169.254', '0.0.0.0'].map((a) => refusedAddressKind(a, local))).toEqual(['private', 'link-local', 'unspecified']);
  });
});
