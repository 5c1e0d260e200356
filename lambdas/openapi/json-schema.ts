/** A JSON Schema (or any JSON object) of the OpenAPI document. */
export type Json = Record<string, any>;

/** A reference to a schema of the document's `components.schemas`. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
