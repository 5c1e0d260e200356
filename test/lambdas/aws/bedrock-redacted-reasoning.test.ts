import { converseEvents, converseInput, converseStreamEvents } from '../../../lambdas/aws/bedrock-converse';
import { chatCallOf } from '../../../lambdas/providers/chat-call';

const DATA = Buffer.from('encrypted thinking').toString('base64');

/**
 * Encrypted thinking on Converse (`reasoningContent.redactedContent`, bytes): passed on as the
 * base64 data of a `reasoning.encrypted` detail, and sent back as the same bytes.
 */
describe("Bedrock's redacted reasoning", () => {
  it('reads it from a whole answer and from a stream as base64 data', async () => {
    const bytes = Buffer.from(DATA, 'base64');
    expect(converseEvents({ output: { message: { role: 'assistant', content: [{ reasoningContent: { redactedContent: bytes } }, { text: 'ok' }] } }, stopReason: 'end_turn' }).slice(0, 2)).toEqual([
      { type: 'redacted_reasoning', data: DATA },
      { type: 'text', text: 'ok' },
    ]);
    const events = [];
    for await (const event of converseStreamEvents((async function* () { yield { contentBlockDelta: { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: bytes } } } } as never; })())) events.push(event);
    expect(events).toEqual([{ type: 'redacted_reasoning', data: DATA }]);
  });

  it('sends it back in the assistant turn as the bytes it came as', () => {
    const call = chatCallOf({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'ok', reasoning_details: [{ type: 'reasoning.encrypted', data: DATA }] }, { role: 'user', content: 'again' }],
    });
    const { input } = converseInput(call, 'anthropic.claude', 1000);
    expect(input.messages![1]!.content![0]).toEqual({ reasoningContent: { redactedContent: Buffer.from(DATA, 'base64') } });
  });
});
