import Ajv2020 from 'ajv/dist/2020';
import { developmentProvider } from '../../../lambdas/inference/development-provider';
import { FixedClock } from '../../support/fixed-clock';
import { weatherTool } from '../../support/chat-tools';

type Json = Record<string, any>;

let ids = 0;
const provider = developmentProvider(new FixedClock(), () => `id${++ids}`);

async function send(body: Json): Promise<{ status: number; json: Json }> {
  const response = await provider('development-echo/chat/completions', { method: 'POST', body: JSON.stringify({ model: 'm', ...body }), signal: new AbortController().signal });
  return { status: response.status, json: (await response.json()) as Json };
}

/** Every chunk of a streamed answer, parsed, without the closing `[DONE]`. */
async function stream(body: Json): Promise<Json[]> {
  const response = await provider('development-echo/chat/completions', { method: 'POST', body: JSON.stringify({ model: 'm', stream: true, ...body }), signal: new AbortController().signal });
  const events = (await response.text()).split('\n\n').filter(Boolean);
  expect(events.at(-1)).toBe('data: [DONE]');
  return events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)));
}

const WEATHER = weatherTool(2);
const TIME = { type: 'function', function: { name: 'get_time' } };
const user = (content: string) => ({ role: 'user', content });
const fits = (schema: object, value: unknown) => new Ajv2020({ strict: false }).validate(schema, value);

describe('the development provider with tools', () => {
  it('calls the first tool, its arguments the least value its parameters accept, with no content', async () => {
    const { status, json } = await send({ messages: [user('what is the weather like')], tools: [WEATHER, TIME] });
    expect(status).toBe(200);
    const [choice] = json.choices;
    expect(choice).toEqual({
      index: 0,
      message: { role: 'assistant', content: null, tool_calls: [{ id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '{"city":"aa","unit":"celsius","days":1}' } }] },
      finish_reason: 'tool_calls',
    });
    expect(fits(WEATHER.function.parameters, JSON.parse(choice.message.tool_calls[0].function.arguments))).toBe(true);
    // The arguments' lexical tokens: { "city" : "aa" , "unit" : "celsius" , "days" : 1 }
    expect(json.usage).toEqual({ prompt_tokens: 5, completion_tokens: 13, total_tokens: 18 });
  });

  it.each<[string, Json, string]>([
    ['auto: the tool the user names', { tool_choice: 'auto', messages: [user('call get_time please')] }, 'get_time'],
    // What a client puts before the user's words (an agent's reminders) names tools too: the user's own come last.
    ['auto: the tool the user names last', { tool_choice: 'auto', messages: [user('(tools: get_time, get_weather) use get_time')] }, 'get_time'],
    ['required', { tool_choice: 'required', messages: [user('anything')] }, 'get_weather'],
    ['a named function', { tool_choice: { type: 'function', function: { name: 'get_time' } }, messages: [user('weather?')] }, 'get_time'],
    ['allowed tools', { tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_time' } }] } }, messages: [user('x')] }, 'get_time'],
  ])('follows tool_choice %s', async (_name, body, name) => {
    const { json } = await send({ tools: [WEATHER, TIME], ...body });
    expect(json.choices[0].message.tool_calls.map((call: Json) => call.function.name)).toEqual([name]);
  });

  it('takes a function without parameters with empty arguments', async () => {
    const { json } = await send({ tools: [TIME], messages: [user('now')] });
    expect(json.choices[0].message.tool_calls[0].function.arguments).toBe('{}');
  });

  it('answers with text for tool_choice none, and after a tool result, so an agent loop ends', async () => {
    const none = await send({ tools: [WEATHER], tool_choice: 'none', messages: [user('just talk')] });
    expect(none.json.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: 'just talk' }, finish_reason: 'stop' });

    const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } };
    const after = await send({
      tools: [WEATHER],
      tool_choice: 'required',
      messages: [user('weather in Paris'), { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_1', content: 'sunny 21C' }],
    });
    expect(after.json.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: 'sunny 21C' }, finish_reason: 'stop' });
    // A system message a client adds after the results (what changed in its context) still ends the loop.
    const noted = await send({
      tools: [WEATHER],
      messages: [user('weather in Paris'), { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_1', content: 'rain' }, { role: 'system', content: 'new tools' }],
    });
    expect(noted.json.choices[0].message).toEqual({ role: 'assistant', content: 'rain' });
  });

  it('answers after an assistant turn that calls tools with no content member at all', async () => {
    const call = { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{}' } };
    const after = await send({ tools: [WEATHER], messages: [user('weather in Oslo'), { role: 'assistant', tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_2', content: 'snow' }] });
    expect(after.status).toBe(200);
    expect(after.json.choices[0].message.content).toBe('snow');
  });

  it.each<[string, Json, RegExp]>([
    ['a named function not among the tools', { tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'nope' } } }, /"nope", which is not among tools/],
    ['required with no tools', { tool_choice: 'required' }, /no function tools were given/],
    ['an unknown tool_choice', { tools: [WEATHER], tool_choice: 'sometimes' }, /tool_choice must be/],
    ['parameters with a $ref to nowhere', { tools: [{ type: 'function', function: { name: 'f', parameters: { $ref: '#/$defs/x' } } }] }, /the parameters of f: \$ref #\/\$defs\/x points nowhere/],
  ])('refuses %s with a 400, as a provider would', async (_name, body, message) => {
    const { status, json } = await send({ messages: [user('x')], ...body });
    expect(status).toBe(400);
    expect(json.error.message).toMatch(message);
  });

  it('streams a tool call as OpenAI does: id, type and name first, then the arguments in pieces', async () => {
    const chunks = await stream({ messages: [user('weather')], tools: [WEATHER], stream_options: { include_usage: true } });
    const deltas = chunks.filter((chunk) => chunk.choices.length).map((chunk) => chunk.choices[0]);
    expect(deltas[0]).toEqual({
      index: 0,
      delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      finish_reason: null,
    });
    const pieces = deltas.slice(1, -1).map((choice) => {
      expect(choice.delta.tool_calls).toEqual([{ index: 0, function: { arguments: expect.any(String) } }]);
      return choice.delta.tool_calls[0].function.arguments as string;
    });
    expect(pieces.length).toBe(13);
    expect(pieces.join('')).toBe('{"city":"aa","unit":"celsius","days":1}');
    expect(deltas.at(-1)).toEqual({ index: 0, delta: {}, finish_reason: 'tool_calls' });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 13, total_tokens: 14 } });
  });

  it('stops a call at max_tokens with finish_reason length, as a provider does', async () => {
    const { json } = await send({ messages: [user('weather')], tools: [WEATHER], max_tokens: 4 });
    expect(json.choices[0]).toMatchObject({ finish_reason: 'length', message: { tool_calls: [{ function: { arguments: '{"city":"aa"' } }] } });
    expect(json.usage.completion_tokens).toBe(4);
  });
});

describe('the development provider with response_format', () => {
  const SCHEMA = {
    type: 'object',
    properties: { title: { type: 'string' }, rating: { type: 'number', minimum: 1, maximum: 5 }, tags: { type: 'array', items: { $ref: '#/$defs/tag' }, minItems: 1 } },
    required: ['title', 'rating', 'tags'],
    additionalProperties: false,
    $defs: { tag: { type: 'string', enum: ['fun', 'long'] } },
  };
  const jsonSchema = { type: 'json_schema', json_schema: { name: 'review', schema: SCHEMA, strict: true } };

  it('answers json_object with the echo in a JSON object', async () => {
    const { json } = await send({ messages: [user('hello "json" world')], response_format: { type: 'json_object' } });
    expect(json.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: '{"echo":"hello \\"json\\" world"}' } });
    expect(JSON.parse(json.choices[0].message.content)).toEqual({ echo: 'hello "json" world' });
  });

  it('answers json_schema with the least value the schema accepts', async () => {
    const { json } = await send({ messages: [user('review it')], response_format: jsonSchema });
    expect(JSON.parse(json.choices[0].message.content)).toEqual({ title: '', rating: 1, tags: ['fun'] });
    expect(fits(SCHEMA, JSON.parse(json.choices[0].message.content))).toBe(true);
    // { "title" : "" , "rating" : 1 , "tags" : [ "fun" ] }
    expect(json.usage.completion_tokens).toBe(15);
  });

  it('streams JSON content in its lexical tokens, counted as the answer that is not streamed', async () => {
    const chunks = await stream({ messages: [user('review it')], response_format: jsonSchema, stream_options: { include_usage: true } });
    const contents = chunks.filter((chunk) => chunk.choices.length).map((chunk) => chunk.choices[0].delta.content ?? '');
    expect(contents.slice(0, 4)).toEqual(['', '{', '"title"', ':']);
    expect(JSON.parse(contents.join(''))).toEqual({ title: '', rating: 1, tags: ['fun'] });
    expect(chunks.at(-1)!.usage.completion_tokens).toBe(15);
  });

  it('answers in JSON after a tool result when the response format asks for it', async () => {
    const { json } = await send({
      tools: [WEATHER],
      response_format: { type: 'json_object' },
      messages: [user('weather'), { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c', content: 'rain' }],
    });
    expect(JSON.parse(json.choices[0].message.content)).toEqual({ echo: 'rain' });
  });

  it('refuses a schema it cannot meet with a 400', async () => {
    const { status, json } = await send({ messages: [user('x')], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'string', pattern: '(' } } } });
    expect(status).toBe(400);
    expect(json.error.message).toMatch(/^response_format\.json_schema\.schema: /);
  });
});
