import { callStages, modelledLatencyMs, sequentialDepth, type AwsCall } from '../../local/aws-calls';

/** A DynamoDB call that ran from `start` to `end` (milliseconds). */
function call(command: string, start: number, end: number): AwsCall {
  return { requestId: 'r', functionName: 'f', service: 'DynamoDB', command, tables: [], start, end, serviceStart: start, serviceEnd: end };
}

describe('sequential stages of a request’s calls', () => {
  it('calls side by side share a stage; one that starts after another answered is the next', () => {
    const counter = call('UpdateItem', 0, 8);
    const policy = call('GetItem', 0.2, 9);
    const issuer = call('GetItem', 9.1, 15);
    const key = call('GetItem', 9.2, 16);
    const sign = call('Sign', 16.1, 16.2);
    const stages = callStages([sign, key, issuer, policy, counter]);
    expect([counter, policy, issuer, key, sign].map((each) => stages.get(each))).toEqual([1, 1, 2, 2, 3]);
    expect(sequentialDepth([counter, policy, issuer, key, sign])).toBe(3);
    expect(modelledLatencyMs([counter, policy, issuer, key, sign])).toBe(15);
  });

  it('a branch that ran beside a slower call adds no stage to what waited for the slower one', () => {
    // The proof's claim starts once the counter answered and ends while the policy read is still
    // out; the issuer read waited for the policy, not the claim.
    const counter = call('UpdateItem', 0, 3);
    const policy = call('GetItem', 0.2, 20);
    const claim = call('PutItem', 4, 10);
    const issuer = call('GetItem', 20.1, 27);
    const sign = call('Sign', 27.1, 27.2);
    expect(sequentialDepth([counter, policy, claim, issuer, sign])).toBe(3);
    expect(callStages([counter, policy, claim, issuer, sign]).get(claim)).toBe(2);
  });

  it('a chain of calls, each waiting for the last, is as deep as it is long', () => {
    const chain = [call('GetItem', 0, 1), call('GetItem', 1, 2), call('GetItem', 2.5, 3), call('PutItem', 3, 4)];
    expect(sequentialDepth(chain)).toBe(4);
    expect(sequentialDepth([])).toBe(0);
  });
});
