import { defaultGuardrailId, keyAssignmentId, nameBasedUuid } from '../../../lambdas/accounts/derived-ids';

const WORKSPACE = '550e8400-e29b-41d4-a716-446655440000';

describe('ids derived from other ids', () => {
  it('are RFC 9562 version 5 UUIDs: the DNS namespace example gives its published id', () => {
    // RFC 9562 appendix A.4: www.example.com in the DNS namespace.
    expect(nameBasedUuid('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it("give a workspace's default guardrail one id, the same on every call, and another workspace another", () => {
    const id = defaultGuardrailId(WORKSPACE);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(defaultGuardrailId(WORKSPACE)).toBe(id);
    expect(defaultGuardrailId('0df9e665-d932-5740-b2c7-b52af166bc11')).not.toBe(id);
  });

  it('name an assignment by its guardrail and key: the same pair the same id, another key another id', () => {
    const guardrail = defaultGuardrailId(WORKSPACE);
    expect(keyAssignmentId(guardrail, 'a'.repeat(64))).toBe(keyAssignmentId(guardrail, 'a'.repeat(64)));
    expect(keyAssignmentId(guardrail, 'a'.repeat(64))).not.toBe(keyAssignmentId(guardrail, 'b'.repeat(64)));
    expect(keyAssignmentId(guardrail, 'a'.repeat(64))).not.toBe(guardrail);
  });
});
