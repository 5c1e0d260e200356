/**
 * A tool as OpenAI-compatible clients declare it: the weather in a city, with a unit and a
 * number of days, every argument required and no other allowed. `cityMinLength` sets how short
 * a city may be (the plainest arguments that fit it differ).
 */
export function weatherTool(cityMinLength: number) {
  return {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', minLength: cityMinLength }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer', minimum: 1, maximum: 7 } },
        required: ['city', 'unit', 'days'],
        additionalProperties: false,
      },
    },
  };
}
