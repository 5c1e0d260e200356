import type { IncomingMessage } from 'node:http';

/**
 * Runs a mock integration's mapping template, in the subset of Velocity CDK's CORS preflight
 * template uses: `#set`, `#if` (comparisons with `==` joined by `||`) and `#end`, variables, string
 * literals, `$input.params().header.get("Name")` (the header as the client spelt its name, ""
 * when absent) and `$context.responseOverride.header.Name` as a target. Anything else throws, so
 * a template the stand-in cannot read fails the suite instead of being misread.
 */
export function renderMockTemplate(template: string, request: IncomingMessage): { body: string; headers: Record<string, string> } {
  const variables = new Map<string, string>();
  const headers: Record<string, string> = {};
  const sentHeader = (name: string) => {
    for (let i = 0; i < request.rawHeaders.length; i += 2) if (request.rawHeaders[i] === name) return request.rawHeaders[i + 1]!;
    return '';
  };
  const value = (expression: string): string => {
    const trimmed = expression.trim();
    const header = /^\$input\.params\(\)\.header\.get\("([^"]+)"\)$/.exec(trimmed);
    if (header) return sentHeader(header[1]!);
    const literal = /^"([^"]*)"$/.exec(trimmed);
    if (literal) return literal[1]!;
    if (/^\$[A-Za-z]\w*$/.test(trimmed)) return variables.get(trimmed.slice(1)) ?? '';
    throw new Error(`unsupported template expression ${trimmed}`);
  };
  const holds = (condition: string) =>
    condition.split('||').some((comparison) => {
      const [left, right, ...rest] = comparison.split('==');
      if (right === undefined || rest.length > 0) throw new Error(`unsupported template condition ${comparison}`);
      return value(left!) === value(right);
    });
  const active: boolean[] = [];
  const body: string[] = [];
  for (const line of template.split('\n').map((text) => text.trim())) {
    const running = active.every(Boolean);
    const set = /^#set\(\$([\w.-]+) = (.+)\)$/.exec(line);
    const opened = /^#if\((.+)\)$/.exec(line);
    if (opened) active.push(running && holds(opened[1]!));
    else if (line === '#end') active.pop();
    else if (set && running) {
      const target = /^context\.responseOverride\.header\.(.+)$/.exec(set[1]!)?.[1];
      if (target) headers[target] = value(set[2]!);
      else if (/^[A-Za-z]\w*$/.test(set[1]!)) variables.set(set[1]!, value(set[2]!));
      else throw new Error(`unsupported template target $${set[1]}`);
    } else if (!set && line.startsWith('#')) throw new Error(`unsupported template directive ${line}`);
    else if (!set && running && line !== '') body.push(line);
  }
  return { body: body.join('\n'), headers };
}
